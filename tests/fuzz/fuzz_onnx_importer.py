"""atheris driver of the ONNX importer fuzz target (tools/fuzz.sh onnx_importer SECONDS).

    python tests/fuzz/fuzz_onnx_importer.py CORPUS_DIR [libFuzzer flags]
    python tests/fuzz/fuzz_onnx_importer.py --seeds CORPUS_DIR   # write the seed corpus only

The target itself (input kinds, mutations, what counts as a finding) is
tests/fuzz/onnx_importer_target.py. A finding is raised as an uncaught exception, so
libFuzzer writes the input to the artifact prefix; copy it to
tests/data/fuzz_regressions/onnx_importer/ (through `as_raw_input` for a structured input).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("WEBNN_NUM_THREADS", "1")

import onnx_importer_target as target


def write_seeds(directory):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    seeds = target.seed_inputs()
    for name, data in seeds:
        (directory / name).write_bytes(data)
    print(f"{len(seeds)} seeds in {directory}")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--seeds":
        write_seeds(sys.argv[2])
        return
    import atheris

    with atheris.instrument_imports(include=["webnn"]):
        import webnn.onnx  # noqa: F401

    target.bases()  # parse the base models before the first input (not in its time budget)
    target.context()
    target.limit_memory(int(os.environ.get("FUZZ_ONNX_MEMORY_MB", "4096")))
    atheris.Setup(sys.argv, target.run_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
