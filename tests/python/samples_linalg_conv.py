"""Sample graphs for matmul, gemm, conv2d and convTranspose2d (see test_support_limits.py)."""

from samples_common import const


def _type(dtypes):
    # All operands share one type: the others follow a requested float type, and stay float32
    # when the requested type is unsupported so that the named argument is the one rejected.
    t = next(iter(dtypes.values()), "float32")
    return t if t in ("float32", "float16") else "float32"


def _matmul(b, dtypes):
    t = _type(dtypes)
    return b.matmul(const(b, [2, 3], dtypes.get("a", t)), const(b, [3, 4], dtypes.get("b", t)))


def _gemm(b, dtypes):
    t = _type(dtypes)
    return b.gemm(
        const(b, [2, 3], dtypes.get("a", t)),
        const(b, [3, 4], dtypes.get("b", t)),
        c=const(b, [4], dtypes.get("c", t)),
    )


def _conv2d(b, dtypes):
    t = _type(dtypes)
    return b.conv2d(
        const(b, [1, 2, 3, 3], dtypes.get("input", t)),
        const(b, [4, 2, 2, 2], dtypes.get("filter", t)),
        bias=const(b, [4], dtypes.get("bias", t)),
    )


def _conv_transpose2d(b, dtypes):
    t = _type(dtypes)
    return b.conv_transpose2d(
        const(b, [1, 2, 3, 3], dtypes.get("input", t)),
        const(b, [2, 4, 2, 2], dtypes.get("filter", t)),
        bias=const(b, [4], dtypes.get("bias", t)),
    )


SAMPLES = {
    "matmul": _matmul,
    "gemm": _gemm,
    "conv2d": _conv2d,
    "convTranspose2d": _conv_transpose2d,
}
