"""The cpu backend's vectorized casts (cpu/cast.inc: float32 <-> int8, uint8, int32, uint32,
int64, uint64 and every pair of those integer types) against the reference backend, bit for
bit, over hostile values: NaN (with payloads and sign), infinities, signed zeros, subnormals,
every target's bounds and their float32 neighbours (just in and just out of range), x.5 and
x.9 (truncation toward zero), huge values; integers at every type's bounds, around 2^24, 2^53
and 2^63 (int -> float rounding ties, broken by bits far below the rounding position), and
random bit patterns. Lengths cover one element, vector tails and several tasks; the file reruns
itself on every instruction set at 1 thread and with 3 threads."""

import numpy as np
import pytest
import rerun
import webnn

TYPES = ["float32", "int8", "uint8", "int32", "uint32", "int64", "uint64"]
LENGTHS = [1, 3, 17, 100, 70001]

_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _float_values(rng):
    f = np.float32
    bounds = [1, 127, 128, 255, 256, 2.0**24, 2.0**31, 2.0**32, 2.0**53, 2.0**63, 2.0**64]
    vals = [0.0, -0.0, 0.5, 0.9999, 1.5, 2.5, -2.5, 300.5, -129.9, 1e-40, -1e-40, 1e-45, -1e-45]
    vals += [3e38, -3e38, np.inf, -np.inf, 2.0**40 + 2.0**20, -(2.0**62) - 2.0**40]
    for b in bounds:
        for v in (f(b), f(-b), f(b + 0.5), f(-b - 0.5), f(b - 0.5)):
            vals += [v, np.nextafter(v, f(np.inf)), np.nextafter(v, f(-np.inf))]
    x = np.array(vals, np.float32)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF], np.uint32).view(np.float32)
    noise = [
        rng.uniform(-300, 300, 64),
        rng.uniform(-5e9, 5e9, 32),
        rng.standard_normal(32) * 2.0**62,
        rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32).view(np.float32),
    ]
    return np.concatenate([x, nans] + [np.asarray(n).astype(np.float32) for n in noise])


def _int_values(rng, dtype):
    info = np.iinfo(dtype)
    cands = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 2**24 - 1, 2**24 + 1, 2**24 + 3]
    cands += [2**25 + 2, 2**25 + 6, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32 - 1, 2**32]
    cands += [2**53 - 1, 2**53 + 1, 2**54 + 2, 2**60 + 2**36, 2**60 + 2**36 + 1, 2**63 - 1]
    cands += [-(2**60) - 2**36, -(2**60) - 2**36 - 1, -(2**63), 2**64 - 1, 2**64 - 2**39]
    cands += [info.min, info.max, info.min + 1, info.max - 1]
    keep = [int(c) for c in cands if info.min <= c <= info.max]
    bits = rng.integers(0, 2**63, 128, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    random = bits.view(np.int64).astype(dtype) if info.min < 0 else bits.astype(dtype)
    shifts = np.arange(64, dtype=np.uint64)
    powers = (np.uint64(1) << shifts).astype(dtype)  # wraps to the type where it is narrower
    return np.concatenate([np.array(keep, dtype=dtype), random, powers, powers - 1])


def _values(dtype, n):
    rng = np.random.default_rng(TYPES.index(dtype))
    base = _float_values(rng) if dtype == "float32" else _int_values(rng, np.dtype(dtype))
    # Shifted copies so every value also lands in other lanes and in the tail.
    reps = -(-n // len(base)) + 1
    tiled = np.concatenate([np.roll(base, 5 * k) for k in range(reps)])
    return tiled[:n].copy()


def _casts(backend, x):
    ctx = _context(backend)
    b = ctx.create_graph_builder()
    xin = b.input("x", list(x.shape), str(x.dtype))
    outs = {t: b.cast(xin, t) for t in TYPES if t != str(x.dtype)}
    return ctx.compute(b.build(outs), {"x": x})


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("source", TYPES)
def test_casts_match_reference_bitwise(source, n):
    x = _values(source, n)
    got = _casts("cpu", x)
    want = _casts("reference", x)
    for target, w in want.items():
        g = got[target]
        assert g.dtype == w.dtype and g.shape == w.shape, target
        np.testing.assert_array_equal(
            g.view(np.uint8), w.view(np.uint8), err_msg=f"cast {source} -> {target}, n={n}"
        )


def test_float_casts_follow_the_definition():
    # The reference's rule stated independently: NaN -> 0, saturation, truncation toward zero.
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 2.9, -2.9, 1e10, -1e10, 3e38], np.float32)
    got = _casts("cpu", x)
    for target in TYPES[1:]:
        info = np.iinfo(target)

        def rule(v, info=info):
            if np.isnan(v):
                return 0
            if v >= info.max:
                return int(info.max)
            if v <= info.min:
                return int(info.min)
            return int(v)  # toward zero

        want = np.array([rule(float(v)) for v in x], dtype=target)
        np.testing.assert_array_equal(got[target], want, err_msg=target)


_SETTINGS = [{"WEBNN_CPU_ISA": isa, "WEBNN_NUM_THREADS": "1"} for isa in ("avx512", "avx2")]
_SETTINGS += [
    {"WEBNN_CPU_ISA": "generic", "WEBNN_NUM_THREADS": "1"},
    {"WEBNN_NUM_THREADS": "3"},
    {"WEBNN_CPU_ISA": "generic", "WEBNN_NUM_THREADS": "3"},
]


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@pytest.mark.parametrize("env", _SETTINGS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_every_isa_and_thread_count(env):
    rerun.assert_file_passes(__file__, env)
