"""Regenerates python/webnn/_webnn.pyi from the built extension module.

Usage: python tools/gen_stub.py [output-path]
The stub is checked in; tests/python/test_stub.py fails when it is out of date.
"""

import subprocess
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[1] / "python" / "webnn" / "_webnn.pyi"


def generate(output):
    subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "webnn._webnn", "-o", str(output)],
        check=True,
    )


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
