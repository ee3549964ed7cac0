"""Reruns a test file in a fresh interpreter with extra environment variables, for settings the
engine reads once per process (WEBNN_CPU_ISA) or per context (WEBNN_NUM_THREADS)."""

import os
import subprocess
import sys

import pytest

_NESTED = "WEBNN_TEST_RERUN"

# The settings the cpu kernel tests rerun themselves under: the other kernel sets (a machine
# without AVX2 falls back further; the results must hold either way) and thread counts.
each_cpu_setting = pytest.mark.parametrize(
    "env",
    [
        {"WEBNN_CPU_ISA": "avx2"},
        {"WEBNN_CPU_ISA": "generic"},
        {"WEBNN_NUM_THREADS": "1"},
        {"WEBNN_NUM_THREADS": "3"},
    ],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()),
)

# Every instruction set (a machine without AVX-512 runs its best one for "avx512") and a thread
# count that splits work unevenly: for kernels whose results must not depend on either.
each_isa_and_threads = pytest.mark.parametrize(
    "env",
    [
        {"WEBNN_CPU_ISA": "avx512"},
        {"WEBNN_CPU_ISA": "avx2"},
        {"WEBNN_CPU_ISA": "generic"},
        {"WEBNN_NUM_THREADS": "3"},
    ],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()),
)


def nested():
    """True inside a rerun: the rerunning tests skip themselves there."""
    return os.environ.get(_NESTED) == "1"


def assert_file_passes(path, env):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(path), "-q", "-x", "-p", "no:cacheprovider"],
        env=dict(os.environ, **{_NESTED: "1"}, **env),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
