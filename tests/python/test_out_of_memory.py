"""Allocation failures are Python errors naming the operation, never std::terminate.

Each case runs in a child process whose address space is limited (RLIMIT_AS, the soft limit
only, so the child can lift it again) just before the allocation that must fail, and checks
that the error is raised, that the objects still work once the limit is lifted, and that the
child exits normally (a std::bad_alloc escaping through noexcept code or a pool worker thread
ends it with SIGABRT instead). The first case is the path of the onnx_importer fuzz finding
split_to_sequence_huge_axis_bad_alloc.bin (docs/reliability.md).
"""

import os
import subprocess
import sys
import textwrap

import pytest

# AddressSanitizer and ThreadSanitizer reserve terabytes of address space for their shadow
# memory: under an address-space limit the child cannot start.
SANITIZED = any(name in os.environ.get("LD_PRELOAD", "") for name in ("asan", "tsan"))
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc"),
    pytest.mark.skipif(SANITIZED, reason="a sanitizer's shadow memory exceeds the limit"),
]

PRELUDE = """
import resource
import numpy as np
import webnn


def limit_to(extra_bytes):
    # Soft limit: the address space mapped now plus `extra_bytes`; the hard limit stays.
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra_bytes, resource.RLIM_INFINITY))


def unlimit():
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
"""


def run_child(body, threads):
    env = dict(os.environ, WEBNN_NUM_THREADS=str(threads))
    script = PRELUDE + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_operand_objects_beyond_memory_raise_memory_error():
    # nanobind's table of live Python objects doubles when its size reaches a power of two
    # (here 2^17: a 12 MB bucket array). With 6 MB of address space left a few thousand
    # operands before that point, the growth is the allocation that fails: it used to
    # happen inside nanobind's noexcept instance registration (std::terminate).
    child = run_child(
        """
        ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
        b = ctx.create_graph_builder()
        x = b.input("x", [4, 6], "float32")
        parts = [b.slice(x, [0, 0], [1, 6]) for _ in range(2**17 - 1500)]
        limit_to(6 << 20)
        try:
            for _ in range(3000):
                parts.append(b.slice(x, [0, 0], [1, 6]))
        except MemoryError as exc:
            unlimit()
            print("MemoryError:", exc)
        else:
            unlimit()
            print("no error")
        del parts
        # The builder goes on once memory is back.
        y = b.slice(x, [1, 2], [2, 3])
        graph = b.build({"y": y})
        data = np.arange(24, dtype=np.float32).reshape(4, 6)
        got = ctx.compute(graph, {"x": data})["y"]
        assert np.array_equal(got, data[1:3, 2:5]), got
        print("ok")
        """,
        threads=1,
    )
    assert child.returncode == 0, (child.returncode, child.stdout, child.stderr[-2000:])
    lines = child.stdout.splitlines()
    assert lines[0].startswith("MemoryError: slice: out of memory allocating room for "), lines
    assert "live Python objects" in lines[0], lines
    assert lines[-1] == "ok", lines


def test_kernel_scratch_beyond_memory_in_pool_tasks_is_an_error_naming_the_op():
    # A grouped conv2d whose filter is an input packs each group's filter in a pool task, in a
    # 38 MB buffer of its own (above glibc's largest mmap threshold: always a fresh mapping).
    # With 8 MB of address space left, both tasks fail: the worker thread's std::bad_alloc used
    # to end the process, the caller's left the worker running on its freed captures.
    child = run_child(
        """
        ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
        b = ctx.create_graph_builder()
        gi, go, groups = 1024, 1024, 2
        x = b.input("x", [1, gi * groups, 3, 3], "float32")
        w = b.input("w", [go * groups, gi, 3, 3], "float32")
        graph = b.build({"y": b.conv2d(x, w, groups=groups)})
        rng = np.random.default_rng(0)
        xv = rng.standard_normal((1, gi * groups, 3, 3), dtype=np.float32)
        wv = rng.standard_normal((go * groups, gi, 3, 3), dtype=np.float32)
        tx = ctx.create_tensor([1, gi * groups, 3, 3], "float32", writable=True)
        tw = ctx.create_tensor([go * groups, gi, 3, 3], "float32", writable=True)
        ty = ctx.create_tensor([1, go * groups, 1, 1], "float32", readable=True)
        ctx.write_tensor(tx, xv)
        ctx.write_tensor(tw, wv)
        ctx.dispatch(graph, {"x": tx, "w": tw}, {"y": ty})  # starts the pool's worker
        first = ctx.read_tensor(ty)
        want = np.stack([
            wv[g * go:(g + 1) * go].astype(np.float64).reshape(go, -1)
            @ xv[0, g * gi:(g + 1) * gi].astype(np.float64).reshape(-1)
            for g in range(groups)
        ]).reshape(1, go * groups, 1, 1)
        np.testing.assert_allclose(first, want, rtol=1e-4, atol=1e-3)
        limit_to(8 << 20)
        try:
            ctx.dispatch(graph, {"x": tx, "w": tw}, {"y": ty})
        except RuntimeError as exc:
            unlimit()
            print("RuntimeError:", exc)
        else:
            unlimit()
            print("no error")
        ctx.dispatch(graph, {"x": tx, "w": tw}, {"y": ty})
        again = ctx.read_tensor(ty)
        assert np.array_equal(again, first)
        print("ok")
        """,
        threads=2,
    )
    assert child.returncode == 0, (child.returncode, child.stdout, child.stderr[-2000:])
    lines = child.stdout.splitlines()
    assert lines[0] == (
        "RuntimeError: conv2d: out of memory allocating the kernel's working memory (dispatch)"
    ), lines
    assert lines[-1] == "ok", lines
