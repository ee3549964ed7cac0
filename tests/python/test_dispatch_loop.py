"""A whole model dispatched in a tight loop at 2 and 4 pool threads must neither hang, nor
change results, nor grow in memory.

Before the thread-pool claim protocol was fixed, a MobileNet-style CNN dispatched 20,000 times at
WEBNN_NUM_THREADS=2 hung in most runs and crashed in some. The loop is tools/soak.py (which
runs 100,000 dispatches by hand) in a child process with a time limit and its own watchdog, so
a hang fails the test instead of stalling the suite.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[2] / "tools" / "soak.py"
# tools/sanitize.sh runs the suite with ASan or TSan preloaded (children inherit it):
# dispatches are several times slower (TSan: 5-15x), and both runtimes keep freed memory
# resident by design (ASan's quarantine, TSan's shadow and its delayed reuse), so RSS growth
# says nothing there; the hang and drift checks stay.
_PRELOAD = os.environ.get("LD_PRELOAD", "")
UNDER_SANITIZER = "asan" in _PRELOAD or "tsan" in _PRELOAD
DISPATCHES = "1000" if UNDER_SANITIZER else "5000"
MAX_GROWTH_MB = "1024" if UNDER_SANITIZER else "8"


@pytest.mark.parametrize("threads", ["2", "4"])
def test_model_dispatch_loop_neither_hangs_drifts_nor_grows(threads):
    cmd = [sys.executable, str(SOAK), "--dispatches", DISPATCHES, "--threads", threads]
    # The watchdog inside fires first and dumps the stacks; the outer limit is a backstop.
    cmd += ["--timeout", "200", "--max-growth-mb", MAX_GROWTH_MB]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{DISPATCHES} dispatches at {threads} threads did not finish in 240 s (hang)")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1].startswith(f"ok {DISPATCHES} dispatches")
