"""Data movement of short innermost runs on the cpu backend (movement.cc): when the innermost
axis is a contiguous run of 2, 4 or 8 bytes ((re, im) float32 pairs, int8 pairs and quads,
float16 pairs) and every other stride is a whole number of runs, the run moves as one wider
element. Compared bit for bit with the reference backend (random bit patterns, NaN payloads
included), with the cases that must keep the narrow walk (a slice starting inside a run, a
strided innermost axis)."""

import numpy as np
import pytest
import rerun
import webnn

DTYPES = {"float32": np.uint32, "float16": np.uint16, "int8": np.int8, "uint8": np.uint8}


def _bits(shape, dtype, seed):
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * np.dtype(
        DTYPES[dtype]).itemsize, dtype=np.uint8)  # fmt: skip
    return raw.view(DTYPES[dtype]).reshape(shape).view(np.dtype(dtype) if dtype != "float16"
                                                       else np.float16)  # fmt: skip


def _run(backend, dtype, shape, build, x):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    b = ctx.create_graph_builder()
    xi = b.input("x", list(shape), dtype)
    graph = b.build({"y": build(b, xi)})
    return ctx.compute(graph, {"x": x})["y"]


# Each builds from x of shape [3, 7, 64, run].
CASES = {
    "reverse_pairs": lambda b, x, run: b.reverse(x, [2]),
    "reverse_two_axes": lambda b, x, run: b.reverse(x, [0, 2]),
    "reverse_run_itself": lambda b, x, run: b.reverse(x, [3]),
    "transpose_pairs": lambda b, x, run: b.transpose(x, [0, 2, 1, 3]),
    "transpose_all": lambda b, x, run: b.transpose(x, [3, 2, 1, 0]),
    "slice_whole_runs": lambda b, x, run: b.slice(x, [1, 2, 3, 0], [2, 5, 40, run]),
    "slice_inside_run": lambda b, x, run: b.slice(x, [0, 0, 1, 1], [3, 7, 40, 1]),
    "slice_strided": lambda b, x, run: b.slice(x, [0, 1, 0, 0], [3, 6, 64, run], strides=[1, 2, 3, 1]),
    "expand": lambda b, x, run: b.expand(b.slice(x, [0, 0, 0, 0], [3, 1, 64, run]), [3, 5, 64, run]),
    "tile": lambda b, x, run: b.tile(x, [1, 2, 1, 1]),
}  # fmt: skip


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("run", [2, 4, 8])
@pytest.mark.parametrize("case", list(CASES))
def test_short_runs_match_reference_bits(dtype, run, case):
    shape = [3, 7, 64, run]
    x = _bits(shape, dtype, run * 13 + len(case))

    def build(b, xi):
        return CASES[case](b, xi, run)

    got = _run("cpu", dtype, shape, build, x)
    want = _run("reference", dtype, shape, build, x)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@rerun.each_isa_and_threads
def test_every_cpu_setting(env):
    rerun.assert_file_passes(__file__, env)
