#!/usr/bin/env bash
# Runs the test suites under sanitizers (docs/reliability.md).
#
#   tools/sanitize.sh asan     # C++ suite + Python suite, AddressSanitizer + UBSan + LeakSanitizer
#   tools/sanitize.sh tsan     # ThreadSanitizer: pool stress test + Python concurrency tests
#   tools/sanitize.sh tsan-py [PYTEST SELECTION...]  # only Python tests (default: the concurrency ones)
#   tools/sanitize.sh all      # both (default)
#   tools/sanitize.sh asan-cpp # only the C++ suite under ASan
#   tools/sanitize.sh asan-py [PYTEST SELECTION...]  # only the Python suite (default tests/python)
#   SANITIZE_NO_BUILD=1 tools/sanitize.sh asan-py ...  # reuse the staged build/fuzz/pkg
#   SANITIZE_NO_BUILD=1 tools/sanitize.sh tsan-py ...  # reuse the staged build/py-tsan/pkg
#
# The ASan build is the fuzzing build (build/fuzz, tools/fuzz.sh): the C++ suite and the
# Python extension are built there with the same clang flags, and the extension is loaded into
# an uninstrumented python with the ASan runtime preloaded. Each suite runs once:
# the Python suite takes several minutes under ASan and is not part of tools/run_tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

CLANG_VERSION="${CLANG_VERSION:-16}"
CXX_BIN="${CXX_BIN:-clang++-$CLANG_VERSION}"
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] && PY="${PYTHON:-.venv/bin/python}"
JOBS="${BUILD_JOBS:-2}"
SAN_FLAGS="-fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-sanitize-recover=all \
-fno-omit-frame-pointer"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
nanobind_dir=$("$PY" -c "import nanobind; print(nanobind.cmake_dir())")
status=0

stage_python() {  # $1: build dir holding _webnn*.so -> $1/pkg/webnn with the pure-Python files
  rm -rf "$1/pkg" && mkdir -p "$1/pkg"
  cp -r python/webnn "$1/pkg/webnn"
  find "$1/pkg" -name '__pycache__' -prune -exec rm -rf {} +
  rm -f "$1/pkg/webnn/"_webnn*.so
  cp "$1"/_webnn*.so "$1/pkg/webnn/"
}

run_asan_cpp() {
  # Configured only: the fuzz targets are not needed here (five large ASan links).
  tools/fuzz.sh configure
  cmake --build build/fuzz -j "$JOBS" --target webnn_tests
  echo "== C++ suite under ASan + UBSan + LSan"
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1" \
    UBSAN_OPTIONS="print_stacktrace=1" WEBNN_NUM_THREADS=2 \
    build/fuzz/webnn_tests --gtest_brief=1 || status=1
}

run_asan_py() {  # $@: pytest selection, default the whole suite
  [ $# -gt 0 ] || set -- tests/python
  # SANITIZE_NO_BUILD=1 reuses build/fuzz/pkg as staged: parts can then run side by side
  # with a build in build/fuzz.
  if [ -z "${SANITIZE_NO_BUILD:-}" ]; then
    tools/fuzz.sh configure
    echo "== Python extension with ASan + UBSan"
    # In the same build directory: ccache keys include the directory when -g is on, and the
    # library objects are already there.
    cmake -S . -B build/fuzz -DWEBNN_BUILD_PYTHON=ON \
      -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined -shared-libasan" \
      -DPython_EXECUTABLE="$("$PY" -c 'import sys; print(sys.executable)')" \
      -Dnanobind_DIR="$nanobind_dir" >/dev/null
    cmake --build build/fuzz -j "$JOBS" --target _webnn
    cmake -S . -B build/fuzz -DWEBNN_BUILD_PYTHON=OFF >/dev/null  # back to tests + fuzzers
    stage_python build/fuzz
  fi
  local rt logs="$PWD/build/fuzz/sanitizer-logs/$$"
  rt=$("$CXX_BIN" -print-file-name=libclang_rt.asan-x86_64.so)
  # pytest captures file descriptor 2 during a test: a report written there is lost when the
  # process aborts. The reports go to files instead, printed below.
  rm -rf "$logs" && mkdir -p "$logs"
  echo "== Python suite under ASan (several minutes)"
  # PYTHONMALLOC=malloc: Python objects go through ASan too, so a bad pointer into one is seen.
  LD_PRELOAD="$rt" PYTHONMALLOC=malloc PYTHONPATH="$PWD/build/fuzz/pkg" WEBNN_NUM_THREADS=2 \
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$logs/asan" \
    LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS="print_stacktrace=1:log_path=$logs/ubsan" \
    "$PY" -m pytest "$@" -q -p no:cacheprovider -x ${PYTEST_ARGS:-} || status=1
  if compgen -G "$logs/*" >/dev/null; then
    echo "== sanitizer reports ($logs)"
    cat "$logs"/*
    status=1
  else
    rmdir "$logs"
  fi
}

TSAN_TESTS=(tests/python/test_concurrency.py tests/python/test_dispatch_loop.py
  "tests/python/test_cpu_backend.py::test_concurrent_dispatches_share_the_context_pool"
  tests/python/test_random_lifetimes.py tests/python/test_tensor_access_threads.py
  "tests/python/test_onnx_session.py::test_concurrent_runs_with_several_shapes_are_correct"
  tests/python/test_hub.py tests/python/test_async_ordering.py tests/python/test_threads_models.py
  tests/python/test_onnx_session_races.py tests/python/test_hub_threads.py
  tests/python/test_threads_quantized_routes.py
  tests/python/test_api_random_sequences.py tests/python/test_threads_new_kernels.py)

run_tsan_pool() {
  local flags="-fsanitize=thread -fno-omit-frame-pointer"
  # The pool and its stress test need nothing else: two files, built in seconds.
  mkdir -p build/tsan-pool
  "$CXX_BIN" -std=c++20 -O1 -g $flags -Isrc -Iinclude src/core/thread_pool.cc \
    tests/cpp/thread_pool_stress_test.cc -lgtest -lgtest_main -pthread \
    -o build/tsan-pool/thread_pool_stress_test
  echo "== ThreadSanitizer: thread pool stress test"
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
    build/tsan-pool/thread_pool_stress_test --gtest_brief=1 || status=1
}

build_py_tsan() {
  local flags="-fsanitize=thread -fno-omit-frame-pointer"
  cmake -S . -B build/py-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$CXX_BIN" "${launcher[@]}" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=thread" -DWEBNN_BUILD_PYTHON=ON \
    -DPython_EXECUTABLE="$("$PY" -c 'import sys; print(sys.executable)')" \
    -Dnanobind_DIR="$nanobind_dir" >/dev/null
  cmake --build build/py-tsan -j "$JOBS" --target _webnn
  stage_python build/py-tsan
}

run_tsan_py() {  # $@: pytest selection, default the concurrency tests (TSAN_TESTS)
  [ $# -gt 0 ] || set -- "${TSAN_TESTS[@]}"
  echo "== Python tests with a TSan extension"
  [ -n "${SANITIZE_NO_BUILD:-}" ] || build_py_tsan
  local rt logs="$PWD/build/py-tsan/sanitizer-logs/$$"
  rt=$("$CXX_BIN" -print-file-name=libclang_rt.tsan-x86_64.so)
  # As for ASan: the reports go to files (pytest holds file descriptor 2), and the run goes on
  # past a report (halt_on_error=0) so that one run shows them all; any report fails it.
  # tools/tsan.supp: reports inside CPython / NumPy / ONNX Runtime, each with its reason.
  rm -rf "$logs" && mkdir -p "$logs"
  LD_PRELOAD="$rt" PYTHONPATH="$PWD/build/py-tsan/pkg" \
    TSAN_OPTIONS="halt_on_error=0:report_signal_unsafe=0:log_path=$logs/tsan:suppressions=$PWD/tools/tsan.supp" \
    "$PY" -m pytest -q -p no:cacheprovider "$@" ${PYTEST_ARGS:-} || status=1
  if compgen -G "$logs/*" >/dev/null; then
    echo "== ThreadSanitizer reports ($logs)"
    cat "$logs"/*
    status=1
  else
    rmdir "$logs"
  fi
}

case "${1:-all}" in
  asan) run_asan_cpp; run_asan_py ;;
  asan-cpp) run_asan_cpp ;;
  asan-py) shift; run_asan_py "$@" ;;
  tsan) run_tsan_pool; run_tsan_py ;;
  tsan-py) shift; run_tsan_py "$@" ;;
  all) run_asan_cpp; run_asan_py; run_tsan_pool; run_tsan_py ;;
  *) sed -n 2,16p "$0"; exit 2 ;;
esac
[ "$status" = 0 ] && echo "sanitize.sh: clean" || echo "sanitize.sh: FAILED (see above)"
exit "$status"
