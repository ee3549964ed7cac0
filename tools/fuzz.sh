#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined) and fuzzes one.
#
#   tools/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
#   tools/fuzz.sh build            # only build
#   tools/fuzz.sh configure        # only configure build/fuzz (tools/sanitize.sh builds its own targets)
#   tools/fuzz.sh build-diff       # builder target on the uninstrumented Release library (FUZZ_DIFF=1)
#
# TARGET: text_parser | json_graph | weights_manifest | safetensors | builder | onnx_importer | all
# onnx_importer is the Python layer under atheris (pip install '.[fuzz]'; tests/fuzz/
# fuzz_onnx_importer.py): it fuzzes python/webnn when python/webnn/_webnn*.so is there (a copy
# of the built extension), else the installed webnn package.
# The corpus grows in build/fuzz/corpus/TARGET (seeded from tests/fuzz/seeds/TARGET and, for
# the graph parsers, tests/data/format); crashes land in build/fuzz/findings/TARGET. A finding
# becomes a regression test by copying its input to tests/data/fuzz_regressions/TARGET/.
# FUZZ_JOBS (default 1) sets -jobs/-workers; the executions are printed at the end.
# FUZZ_NO_BUILD=1 skips the (incremental) build. A fixed count: tools/fuzz.sh T 3600 -runs=1000000
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS="text_parser json_graph weights_manifest safetensors builder"
CLANG_VERSION="${CLANG_VERSION:-16}"  # clang 14 lacks _Float16 on x86-64
CXX_BIN="${CXX_BIN:-clang++-$CLANG_VERSION}"
# Only the libFuzzer builds need clang (the onnx_importer target is Python under atheris).
need_clang() {
  if ! command -v "$CXX_BIN" >/dev/null; then
    echo "fuzz.sh: $CXX_BIN not found; apt-get install clang-$CLANG_VERSION libclang-rt-$CLANG_VERSION-dev" >&2
    exit 2
  fi
}
BUILD=build/fuzz
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"

configure() {
  need_clang
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$CXX_BIN" "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fsanitize=fuzzer-no-link \
-fno-sanitize-recover=all -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DWEBNN_BUILD_FUZZERS=ON -DWEBNN_BUILD_TESTS=ON -DWEBNN_BUILD_PYTHON=OFF >/dev/null
}

build() {
  configure
  cmake --build "$BUILD" -j "${BUILD_JOBS:-2}" $(for t in $TARGETS; do echo "--target fuzz_$t"; done)
}

seed() {
  local t=$1 dir="$BUILD/corpus/$1"
  mkdir -p "$dir" "$BUILD/findings/$t"
  cp -n tests/fuzz/seeds/"$t"/* "$dir"/ 2>/dev/null || true
  if [ -d "tests/data/fuzz_regressions/$t" ]; then
    cp -n tests/data/fuzz_regressions/"$t"/* "$dir"/ 2>/dev/null || true
    rm -f "$dir/README.md"
  fi
  case $t in
    text_parser) cp -n tests/data/format/*.webnn "$dir"/ 2>/dev/null || true ;;
  esac
}

run_onnx() {
  local secs=$1 py="${PYTHON:-python3}"
  shift
  [ -x .venv/bin/python ] && py="${PYTHON:-.venv/bin/python}"
  local dir="$BUILD/corpus/onnx_importer" log="$BUILD/findings/onnx_importer/last_run.log"
  mkdir -p "$dir" "$BUILD/findings/onnx_importer"
  local pypath="${PYTHONPATH:-}"
  compgen -G "python/webnn/_webnn*.so" >/dev/null && pypath="$PWD/python${pypath:+:$pypath}"
  # Seeds: the node-test models as raw protos, structured picks of every base model.
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] || PYTHONPATH="$pypath" "$py" tests/fuzz/fuzz_onnx_importer.py --seeds "$dir"
  cp -n tests/data/fuzz_regressions/onnx_importer/*.bin "$dir"/ 2>/dev/null || true
  PYTHONPATH="$pypath" WEBNN_NUM_THREADS=1 "$py" tests/fuzz/fuzz_onnx_importer.py "$dir" \
    -max_total_time="$secs" -artifact_prefix="$BUILD/findings/onnx_importer/" -timeout=60 \
    -rss_limit_mb=6144 -max_len=65536 -print_final_stats=1 "$@" 2>&1 | tee "$log" |
    grep -E "^#[0-9]+.*DONE|stat::number_of_executed_units|Finding|Traceback|SUMMARY" || true
  local execs
  execs=$(grep -h "stat::number_of_executed_units" "$log" | awk '{s+=$2} END {print s+0}')
  echo "fuzz.sh: onnx_importer: $execs executions in ${secs}s; corpus $(ls "$dir" | wc -l) files;" \
    "findings: $(ls "$BUILD/findings/onnx_importer" | grep -v last_run.log | grep -cv "\.txt$" || true)"
}

run() {
  local t=$1 secs=$2
  shift 2
  if [ "$t" = onnx_importer ]; then run_onnx "$secs" "$@"; return; fi
  # The builder's feature set is large: libFuzzer's entropic schedule spent over half of the
  # time ranking rare features (perf), -entropic=0 runs it about 3x faster.
  [ "$t" = builder ] && set -- -entropic=0 "$@"
  seed "$t"
  local jobs="${FUZZ_JOBS:-1}" log="$BUILD/findings/$t/last_run.log"
  local exe="$BUILD/fuzz_$t"
  [ "$t" = builder ] && [ -n "${FUZZ_DIFF:-}" ] && exe=build/fuzz-diff/fuzz_builder
  [ -x "$exe" ] || { echo "fuzz.sh: $exe was not built" >&2; exit 1; }
  # One thread per context keeps the builder target cheap; the pool has its own stress test.
  WEBNN_NUM_THREADS="${WEBNN_NUM_THREADS:-1}" WEBNN_FUZZ_STATS=1 \
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
    "$exe" "$BUILD/corpus/$t" -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" \
    -artifact_prefix="$BUILD/findings/$t/" -timeout=20 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 "$@" 2>&1 | tee "$log" | grep -E "^#[0-9]+.*DONE|stat::number_of_executed_units|ERROR|finding|SUMMARY|stats:" || true
  local execs
  # -jobs mode leaves one fuzz-N.log per job (the parent echoes them too): count those once.
  local logs=("$log")
  compgen -G "fuzz-*.log" >/dev/null && logs=(fuzz-*.log)
  execs=$(grep -h "stat::number_of_executed_units" "${logs[@]}" | awk '{s+=$2} END {print s+0}')
  echo "fuzz.sh: $t: $execs executions in ${secs}s; corpus $(ls "$BUILD/corpus/$t" | wc -l) files;" \
    "findings: $(ls "$BUILD/findings/$t" | grep -cv last_run.log || true)"
  rm -f fuzz-*.log
}

# The builder target against the uninstrumented Release library of the Python build
# (build/cp3*: pip install .): only the target itself carries libFuzzer's coverage, the
# library has neither coverage nor sanitizers, so an input runs about 10x faster than in
# build/fuzz. What it checks is the target's differential part: cpu against reference on
# random op sequences, clean errors. Then: FUZZ_NO_BUILD=1 FUZZ_DIFF=1 tools/fuzz.sh builder S
build_diff() {
  need_clang
  local lib="${WEBNN_LIB_DIR:-$(ls -d build/cp3*-*/ 2>/dev/null | head -1)}"
  [ -n "$lib" ] && [ -f "$lib/libwebnn_core.a" ] || {
    echo "fuzz.sh: no Release library (pip install . first, or set WEBNN_LIB_DIR)" >&2
    exit 1
  }
  mkdir -p build/fuzz-diff
  local inc=(-Iinclude -Itests/fuzz)
  for d in "$lib"/layers/*/private "$lib"/layers/*/public; do inc+=("-I$d"); done
  "$CXX_BIN" -std=gnu++20 -O2 -g -DNDEBUG -fsanitize=fuzzer "${inc[@]}" \
    -DWEBNN_FUZZ_TARGET='"builder"' tests/fuzz/fuzz_main.cc tests/fuzz/fuzz_targets.cc \
    tests/fuzz/fuzz_builder.cc $(for l in runtime format graph_passes graph backends \
    backend_cpu backend_reference ops core; do echo "$lib/libwebnn_$l.a"; done) -pthread \
    -o build/fuzz-diff/fuzz_builder
  echo "fuzz.sh: built build/fuzz-diff/fuzz_builder against $lib"
}

case "${1:-}" in
  build) build ;;
  build-diff) build_diff ;;
  configure) configure ;;
  "" | -h | --help) sed -n 2,14p "$0"; exit 2 ;;
  *)
    target=$1 secs=${2:?SECONDS}
    shift 2
    [ "$target" = onnx_importer ] || [ -n "${FUZZ_NO_BUILD:-}" ] || build
    if [ "$target" = all ]; then
      for t in $TARGETS onnx_importer; do run "$t" "$secs" "$@"; done
    else
      case " $TARGETS onnx_importer " in *" $target "*) ;; *) echo "unknown target $target" >&2; exit 2 ;; esac
      run "$target" "$secs" "$@"
    fi
    ;;
esac
