"""The cpu backend's vector float32 comparisons (cpu/predicate.inc, via typed_elementwise.cc)
and `where` selects (via where.cc: 4-byte elements on predicate.inc, others branchless)
against the reference backend bit for bit and numpy:
NaN (unordered: only notEqual is true), infinities, signed zeros (equal), subnormals, equal
and neighbouring values; each operand contiguous or broadcast (rows with steps 0 and 1, row
lengths that leave vector tails); where's condition bytes other than 0 / 1 and values whose
bits must pass unchanged (NaN payloads, -0). The file reruns itself on every instruction set
at 1 thread and with 3 threads."""

import numpy as np
import pytest
import rerun
import webnn

COMPARISONS = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater": np.greater,
    "greater_or_equal": np.greater_equal,
    "lesser": np.less,
    "lesser_or_equal": np.less_equal,
}
# (a shape, b shape): both contiguous, one a scalar or a broadcast row / column.
SHAPES = [
    ([37], [37]),
    ([1], [37]),
    ([37], [1]),
    ([5, 1], [1, 23]),
    ([3, 70], [70]),
    ([2, 3, 1], [3, 9]),
    ([40001], [40001]),
    ([1], [1]),
]

_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _floats(rng, shape):
    special = np.array(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.0, 1.0000001, 2.0],
        np.float32,
    )
    x = rng.choice(special, shape).astype(np.float32)
    mask = rng.random(shape) < 0.3
    x[mask] = rng.standard_normal(int(mask.sum())).astype(np.float32)
    return x


def _compute(backend, build, feeds):
    ctx = _context(backend)
    b = ctx.create_graph_builder()
    ins = {k: b.input(k, list(v.shape), str(v.dtype)) for k, v in feeds.items()}
    return ctx.compute(b.build(build(b, ins)), feeds)


def test_float32_comparisons_match_reference_and_numpy():
    rng = np.random.default_rng(41)
    for sa, sb in SHAPES:
        a, b = _floats(rng, sa), _floats(rng, sb)
        # Equal values in places: b's elements copied into a where the shapes agree.
        if sa == sb:
            a[::3] = b[::3]
        build = lambda bl, i: {op: getattr(bl, op)(i["a"], i["b"]) for op in COMPARISONS}
        got = _compute("cpu", build, {"a": a, "b": b})
        want = _compute("reference", build, {"a": a, "b": b})
        for op, fn in COMPARISONS.items():
            what = f"{op} {sa} {sb}"
            assert got[op].dtype == np.uint8, what
            np.testing.assert_array_equal(got[op], want[op], err_msg=what)
            np.testing.assert_array_equal(got[op], fn(a, b).astype(np.uint8), err_msg=what)


# (condition, true, false shapes) for where.
WHERE_SHAPES = [
    ([37], [37], [37]),
    ([37], [1], [37]),
    ([37], [37], [1]),
    ([37], [1], [1]),
    ([4, 29], [29], [4, 1]),
    ([4, 1], [4, 29], [29]),
    ([3, 40001], [40001], [3, 40001]),
    ([1], [5], [5]),
]


_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.mark.parametrize(
    "dtype", ["float32", "int32", "uint32", "int64", "uint64", "uint8", "int8", "float16"]
)
def test_where_matches_reference_and_numpy(dtype):
    # 4-byte elements on the vector select, the others on branchless bit selects.
    rng = np.random.default_rng(42)
    bits = _BITS[np.dtype(dtype).itemsize]
    width = 8 * np.dtype(bits).itemsize
    # NaN payloads, -0 and infinities for the float types, extremes for the integers.
    payloads = np.array(
        [(1 << (width - 1)) | 1, (1 << width) - 1, 1 << (width - 1), (1 << (width - 2)) + 5, 1, 0],
        dtype=np.uint64,
    ).astype(bits)
    for sc, st, sf in WHERE_SHAPES:
        cond = rng.choice(np.array([0, 1, 7, 255], np.uint8), sc)
        t = rng.choice(payloads, st).view(dtype)
        f = rng.integers(0, 2**63, sf, dtype=np.uint64).astype(bits).view(dtype)
        build = lambda bl, i: {"y": bl.where(i["c"], i["t"], i["f"])}
        feeds = {"c": cond, "t": t, "f": f}
        got = _compute("cpu", build, feeds)["y"]
        want = _compute("reference", build, feeds)["y"]
        expect = np.where(cond != 0, t.view(bits), f.view(bits))
        what = f"where {dtype} {sc} {st} {sf}"
        np.testing.assert_array_equal(got.view(bits), want.view(bits), err_msg=what)
        np.testing.assert_array_equal(got.view(bits), expect, err_msg=what)


_SETTINGS = [{"WEBNN_CPU_ISA": isa, "WEBNN_NUM_THREADS": "1"} for isa in ("avx512", "avx2")]
_SETTINGS += [
    {"WEBNN_CPU_ISA": "generic", "WEBNN_NUM_THREADS": "1"},
    {"WEBNN_NUM_THREADS": "3"},
]


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@pytest.mark.parametrize("env", _SETTINGS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_every_isa_and_thread_count(env):
    rerun.assert_file_passes(__file__, env)
