"""Det: the determinant of small matrices as Leibniz's sum (WebNN has no determinant).

det A = sum over the permutations p of sign(p) * prod_i A[i, p(i)]: one gather of every
permutation's entries, a product along each and a signed sum. Exact in the sense of one
float32 product of n factors and one sum of n! terms per matrix (no pivoting: a matrix whose
terms cancel loses relative precision as any float32 evaluation does; numpy's LU in float32
or float64 rounds differently). Up to MAX_ORDER (6: 720 terms); larger matrices fold only.
"""

import functools
import itertools

import numpy as np

from .registry import op

MAX_ORDER = 6


@functools.cache
def _terms(n):
    perms = list(itertools.permutations(range(n)))
    flat = np.array([[i * n + p[i] for i in range(n)] for p in perms], np.int32).reshape(-1)
    signs = []
    for p in perms:
        inversions = sum(1 for i in range(n) for j in range(i + 1, n) if p[i] > p[j])
        signs.append(-1.0 if inversions % 2 else 1.0)
    return flat, np.array(signs, np.float32), len(perms)


@op("Det")
def det(n):
    shape = n.static_shape(0)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        n.fail(f"input must be [..., M, M] (got shape {shape})")
    order = shape[-1]
    if order > MAX_ORDER:
        n.fail(
            f"a determinant of order {order} at run time (Leibniz's sum is used up to order "
            f"{MAX_ORDER}; a constant input folds at any order)"
        )
    b = n.b
    x = n.x(0)
    dtype = b.operand_data_type(x)
    if dtype != "float32":
        x = b.cast(x, "float32")
    lead = shape[:-2]
    flat, signs, count = _terms(order)
    rows = b.reshape(x, [*lead, order * order] if lead else [order * order])
    entries = b.gather(rows, n.importer.operand(flat), axis=len(lead))
    entries = b.reshape(entries, [*lead, count, order])
    products = b.reduce_product(entries, axes=[len(lead) + 1], keep_dimensions=False)
    y = b.reduce_sum(b.mul(products, n.importer.operand(signs)), axes=[len(lead)],
                     keep_dimensions=False)  # fmt: skip
    return b.cast(y, dtype) if dtype != "float32" else y
