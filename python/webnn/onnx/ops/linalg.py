"""MatMul, Gemm, Einsum (and the integer matmuls' shared float path)."""

import numpy as np

from .fourier_conv import fourier_matmul
from .registry import op
from .util import prod


def matmul_nd(n, a, b):
    """ONNX/numpy matmul: 1-D operands get a unit axis that is removed afterwards."""
    bl = n.b
    sa, sb = bl.operand_shape(a), bl.operand_shape(b)
    squeeze_first = squeeze_last = False
    if len(sa) == 1:
        a = bl.reshape(a, [1, sa[0]])
        squeeze_first = True
    if len(sb) == 1:
        b = bl.reshape(b, [sb[0], 1])
        squeeze_last = True
    y = bl.matmul(a, b)
    if squeeze_first or squeeze_last:
        shape = bl.operand_shape(y)
        if squeeze_last:
            shape = shape[:-1]
        if squeeze_first:
            shape = shape[:-2] + shape[-1:] if not squeeze_last else shape[:-1]
        y = bl.reshape(y, shape)
    return y


@op("MatMul")
def matmul(n):
    dtype = n.dtype(0)
    a = n.x(0)
    if dtype not in ("float32", "float16"):
        # Integer MatMul: exact in float32 while |sums| < 2**24.
        y = matmul_nd(n, n.b.cast(a, "float32"), n.b.cast(n.x(1), "float32"))
        return n.b.cast(y, dtype)
    if n.is_const(1) and n.rank(1) == 2 and n.rank(0) >= 2:
        y = fourier_matmul(n, a, n.c(1))
        if y is not None:
            return y
    return matmul_nd(n, a, n.x(1))


@op("Gemm")
def gemm(n):
    a, b = n.x(0), n.x(1)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    ta, tb = bool(n.attr("transA", 0)), bool(n.attr("transB", 0))
    c = n.x(2) if n.has(2) else None
    if c is not None and n.opset < 7 and not n.attr("broadcast", 0):
        pass
    if c is not None:
        out_shape = [n.shape(0)[1 if ta else 0], n.shape(1)[0 if tb else 1]]
        cs = n.b.operand_shape(c)
        if cs != out_shape:
            c = n.b.expand(
                n.b.reshape(c, [1] * (2 - len(cs)) + cs) if len(cs) < 2 else c, out_shape
            )
    return n.b.gemm(a, b, c, alpha=alpha, beta=beta, a_transpose=ta, b_transpose=tb)


def _parse_einsum(n, equation, ranks):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        n.fail(f"equation '{equation}' has {len(terms)} operands, the node {len(ranks)}")
    letters = "".join(sorted(set(lhs.replace(",", "").replace(".", ""))))
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in letters]
    ell = None
    out_terms = []
    for t, r in zip(terms, ranks):
        if "..." in t:
            k = r - (len(t) - 3)
            if ell is None or len(ell) < k:
                ell = "".join(spare[:k])
            t = t.replace("...", ell[len(ell) - k :] if k else "")
        if len(t) != r:
            n.fail(f"equation term '{t}' does not match an operand of rank {r}")
        out_terms.append(t)
    if rhs is None:
        counts = {}
        for t in out_terms:
            for ch in t:
                counts[ch] = counts.get(ch, 0) + 1
        rhs = (ell or "") + "".join(
            sorted(c for c, k in counts.items() if k == 1 and c not in (ell or ""))
        )
    elif "..." in rhs:
        rhs = rhs.replace("...", ell or "")
    return out_terms, rhs


@op("Einsum")
def einsum(n):
    equation = n.attr("equation")
    count = n.n_inputs
    ranks = [n.rank(i) for i in range(count)]
    terms, out = _parse_einsum(n, equation, ranks)
    bl = n.b
    operands = []
    for i, t in enumerate(terms):
        x = n.x(i)
        while len(set(t)) != len(t):
            x, t = _einsum_diagonal(n, x, t)
        # sum out indices that appear nowhere else
        others = "".join(terms[j] for j in range(count) if j != i) + out
        lone = [k for k, ch in enumerate(t) if ch not in others]
        if lone:
            x = bl.reduce_sum(x, lone, False)
            t = "".join(ch for k, ch in enumerate(t) if k not in lone)
        operands.append((x, t))
    sizes = {}
    for x, t in operands:
        for ch, d in zip(t, bl.operand_shape(x)):
            if sizes.get(ch, 1) == 1:
                sizes[ch] = d
    while len(operands) > 1:
        (a, ta), (b, tb) = operands[0], operands[1]
        rest = "".join(t for _, t in operands[2:]) + out
        a, ta, b, tb, t = _contract(n, a, ta, b, tb, rest, sizes)
        operands = [(a, t)] + operands[2:]
        del b, tb
    x, t = operands[0]
    if sorted(t) != sorted(out):
        n.fail(f"einsum '{equation}': output indices do not match")
    if t != out:
        x = bl.transpose(x, [t.index(ch) for ch in out])
    elif len(operands) == 1 and count == 1 and t == out:
        x = bl.identity(x)
    return x


def _contract(n, a, ta, b, tb, rest, sizes):
    """Contract two operands with one batched matmul: [batch, m, k] x [batch, k, n]."""
    bl = n.b
    batch = [c for c in ta if c in tb and c in rest]
    contract = [c for c in ta if c in tb and c not in rest]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]

    def arrange(x, t, order):
        if list(t) != order:
            x = bl.transpose(x, [t.index(c) for c in order])
        return x

    def size(c, x, t):
        return bl.operand_shape(x)[t.index(c)]

    bsz = [max(size(c, a, ta), size(c, b, tb)) for c in batch]
    a2 = arrange(a, ta, batch + left + contract)
    b2 = arrange(b, tb, batch + contract + right)
    m = prod(size(c, a, ta) for c in left)
    k = prod(size(c, a, ta) for c in contract)
    nn = prod(size(c, b, tb) for c in right)
    ab = [size(c, a, ta) for c in batch]
    bb = [size(c, b, tb) for c in batch]
    a3 = bl.reshape(a2, ab + [m, k])
    b3 = bl.reshape(b2, bb + [k, nn])
    y = bl.matmul(a3, b3)
    y = bl.reshape(y, bsz + [size(c, a, ta) for c in left] + [size(c, b, tb) for c in right])
    return y, ta, b, tb, "".join(batch + left + right)


def _einsum_diagonal(n, x, t):
    """The diagonal of the first index repeated in term t ('...ii' -> '...i'): its two axes
    moved last, flattened, and every (d + 1)-th element gathered (exact, and NaN-safe where a
    0/1 mask product would turn inf into NaN)."""
    bl = n.b
    ch = next(c for c in t if t.count(c) > 1)
    p = t.index(ch)
    q = t.index(ch, p + 1)
    shape = n.b.operand_shape(x)
    d = shape[p]
    if not isinstance(d, int) or shape[q] != d:
        n.fail(f"einsum diagonal '{ch}' over axes of sizes {shape[p]} and {shape[q]}")
    rest = [k for k in range(len(t)) if k not in (p, q)]
    x = bl.transpose(x, rest + [p, q])
    x = bl.reshape(x, [shape[k] for k in rest] + [d * d])
    x = bl.gather(x, n.importer.operand(np.arange(d, dtype=np.int32) * (d + 1)), len(rest))
    return x, "".join(t[k] for k in rest) + ch
