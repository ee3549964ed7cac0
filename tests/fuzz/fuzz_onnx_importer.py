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


def _keeping_findings(artifact_prefix):
    """run_one that first writes a finding's input (and its cause's traceback) itself: libFuzzer
    writes the input only if its crash path completes, and once (fifth session) the process
    died of its own timeout alarm (SIGALRM) after a MemoryError, before writing anything."""
    import hashlib
    import traceback

    def run(data):
        try:
            target.run_one(data)
        except target.Finding as exc:
            name = f"{artifact_prefix}finding-{hashlib.sha1(bytes(data)).hexdigest()}"
            Path(name).write_bytes(bytes(data))
            cause = exc.__cause__ or exc
            Path(name + ".txt").write_text(
                f"{exc}\n\n" + "".join(traceback.format_exception(cause))
            )
            raise

    return run


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
    prefix = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("-artifact_prefix=")), "")
    atheris.Setup(sys.argv, _keeping_findings(prefix))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
