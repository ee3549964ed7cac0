"""TfIdfVectorizer over integer token ids (its pools are attributes, known at import).

An n-gram (a_1, ..., a_n) with skip distance d occurs at position i when x[i + (j-1) d] = a_j
for every j. Every input element is compared once with every distinct pool value (a 0/1
tensor [B, C, V]); for each n-gram length n and distance d = 1 .. max_skip_count + 1 the
comparisons of each n-gram's j-th value, shifted by (j-1) d, are combined and summed over the
positions. Unigrams count once (distance plays no part), as ONNX defines; a pool n-gram listed
twice is refused, as ONNX Runtime refuses it.
The counts of each pool n-gram go to its `ngram_indexes` entry (several n-grams sharing an
entry add up), then the mode weighs them: TF counts, IDF `weights[k]` (or 1) where the count is
not 0, TFIDF `weights[k]` x count. Strings (`pool_strings`) are no WebNN type.
"""

import numpy as np

from .registry import op

MAX_COMPARISON_ELEMENTS = 1 << 26  # [B, C, V] and [B, C, n-grams] 0/1 tensors
MAX_OUTPUTS = 1 << 24  # the output's last axis, max(ngram_indexes) + 1


def _pool_ngrams(n):
    """{n: [(pool id, ngram tuple)]}: the n-grams whose length is in [min, max], in pool
    order; and the number of pool n-grams."""
    pool = [int(v) for v in (n.attr("pool_int64s") or [])]
    starts = [int(v) for v in n.attr("ngram_counts") or []]
    low, high = int(n.attr("min_gram_length", 0)), int(n.attr("max_gram_length", 0))
    if not 1 <= low <= high:
        n.fail(f"min_gram_length {low} and max_gram_length {high} (1 <= min <= max expected)")
    if any(not 0 <= s <= len(pool) for s in starts) or starts != sorted(starts):
        n.fail(f"ngram_counts {starts}: the start of each n-gram length's run in the pool "
               f"(ascending, from 0 to the pool's {len(pool)} values)")  # fmt: skip
    grams, next_id = {}, 0
    for size, start in enumerate(starts, 1):
        end = starts[size] if size < len(starts) else len(pool)
        items = pool[start:end]
        if len(items) % size:
            n.fail(f"the pool's {size}-grams hold {len(items)} values, not a multiple of {size}")
        for g in range(len(items) // size):
            gram = tuple(items[g * size : (g + 1) * size])
            table = grams.setdefault(size, {})
            if gram in table:
                n.fail(f"the pool lists the {size}-gram {list(gram)} twice")
            if low <= size <= high:
                table[gram] = next_id
            next_id += 1
    return {
        size: sorted((i, g) for g, i in table.items()) for size, table in grams.items()
    }, next_id


@op("TfIdfVectorizer")
def tfidf_vectorizer(n):
    bl = n.b
    if n.attr("pool_strings"):
        n.fail("pool_strings: WebNN has no string type (integer token ids only)")
    dtype = n.dtype(0)
    if dtype not in ("int32", "int64"):
        n.fail(f"input of type {dtype} (int32 or int64 token ids expected)")
    shape = n.static_shape(0)
    if len(shape) not in (1, 2):
        n.fail(f"input of shape {shape} ([C] or [B, C] expected)")
    batch, length = (1, shape[0]) if len(shape) == 1 else shape
    mode = n.attr("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        n.fail(f"mode {mode!r} (TF, IDF or TFIDF expected)")
    indexes = [int(v) for v in n.attr("ngram_indexes") or []]
    skips = int(n.attr("max_skip_count", 0))
    by_size, pool_count = _pool_ngrams(n)
    if len(indexes) != pool_count:
        n.fail(f"{len(indexes)} ngram_indexes for {pool_count} pool n-grams")
    if not indexes or not all(0 <= i < MAX_OUTPUTS for i in indexes):
        n.fail(f"ngram_indexes {indexes[:8]}{'...' if len(indexes) > 8 else ''}: output "
               f"positions from 0 to {MAX_OUTPUTS - 1} expected")  # fmt: skip
    if skips < 0:
        n.fail(f"max_skip_count {skips} (0 or more)")
    outputs = max(indexes) + 1
    if mode == "IDF" and n.attr("weights") and len(set(indexes)) < len(indexes):
        # ONNX Runtime writes the weight of the n-gram it found last in its scan order there
        n.fail("IDF weights with n-grams sharing an output index (ngram_indexes repeats): "
               "ONNX Runtime gives such an output the weight of the occurrence it scans last, "
               "which is not reproduced")  # fmt: skip
    weights = n.attr("weights")
    if weights is not None and len(weights) and len(weights) != pool_count:
        n.fail(f"{len(weights)} weights for {pool_count} pool n-grams")

    info = np.iinfo(np.int32 if dtype == "int32" else np.int64)
    values = sorted({v for grams in by_size.values() for _, g in grams for v in g
                     if info.min <= v <= info.max})  # fmt: skip
    column = {v: c for c, v in enumerate(values)}
    x = bl.reshape(n.x(0), [batch, length, 1])
    counts = [None] * pool_count  # pool id -> (counts [B, grams] operand, its column) or None
    if values:
        if batch * length * len(values) > MAX_COMPARISON_ELEMENTS:
            n.fail(f"{batch} x {length} tokens compared with {len(values)} pool values is above "
                   f"the bound of {MAX_COMPARISON_ELEMENTS} elements")  # fmt: skip
        table = np.asarray(values, dtype=np.int32 if dtype == "int32" else np.int64)
        hits = bl.cast(bl.equal(x, n.importer.operand(table.reshape(1, 1, -1))), "float32")
    for size, grams in sorted(by_size.items()):
        grams = [(i, g) for i, g in grams if all(v in column for v in g)]
        if not grams:
            continue
        ids = [i for i, _ in grams]
        total = None
        for distance in range(1, (1 if size == 1 else skips + 1) + 1):
            span = length - (size - 1) * distance  # start positions where the n-gram fits
            if span < 1:
                break
            if batch * span * len(grams) > MAX_COMPARISON_ELEMENTS:
                n.fail(f"{len(grams)} {size}-grams over {batch} x {length} tokens are above the "
                       f"bound of {MAX_COMPARISON_ELEMENTS} elements")  # fmt: skip
            found = None
            for j in range(size):
                cols = np.asarray([column[g[j]] for _, g in grams], dtype=np.int32)
                shifted = bl.slice(hits, [0, j * distance, 0], [batch, span, len(values)])
                part = bl.gather(shifted, n.importer.operand(cols), 2)  # [B, span, grams]
                found = part if found is None else bl.mul(found, part)
            here = bl.reduce_sum(found, [1], False)  # [B, grams]
            total = here if total is None else bl.add(total, here)
        if total is not None:
            for k, i in enumerate(ids):
                counts[i] = (total, k)
    return _weighted(n, counts, indexes, outputs, weights, mode, batch, len(shape))


def _weighted(n, counts, indexes, outputs, weights, mode, batch, rank):
    """The counts of each pool n-gram placed at its output index and weighed by the mode, as
    ONNX Runtime does: `weights` belong to the pool n-grams (onnx's reference indexes them by
    output, the same only when ngram_indexes is the identity); TFIDF adds weight x count of
    the n-grams sharing an output."""
    bl = n.b
    have_weights = weights is not None and len(weights) > 0
    columns = {}  # output index -> [(operand, column, pool id)]
    for i, entry in enumerate(counts):
        if entry is not None:
            columns.setdefault(indexes[i], []).append((*entry, i))
    # one [B, n-grams] operand per n-gram length: each output gathers its columns from them
    parts, offsets, at = [], {}, 0
    for entry in {id(e[0]): e[0] for group in columns.values() for e in group}.values():
        offsets[id(entry)] = at
        parts.append(entry)
        at += bl.operand_shape(entry)[1]
    zero_col = at
    parts.append(bl.expand(n.const(0, "float32"), [batch, 1]))
    flat = bl.concat(parts, 1) if len(parts) > 1 else parts[0]
    if mode == "TFIDF" and have_weights:
        scale = np.zeros(zero_col + 1, np.float32)
        for group in columns.values():
            for operand, k, i in group:
                scale[offsets[id(operand)] + k] = weights[i]
        flat = bl.mul(flat, n.importer.operand(scale.reshape(1, -1)))
    rounds = max((len(group) for group in columns.values()), default=1)
    freq = None
    for r in range(rounds):  # outputs shared by several n-grams add up, one per round
        pick = [zero_col] * outputs
        for out, group in columns.items():
            if r < len(group):
                operand, k, _ = group[r]
                pick[out] = offsets[id(operand)] + k
        term = bl.gather(flat, n.importer.operand(np.asarray(pick, dtype=np.int32)), 1)
        freq = term if freq is None else bl.add(freq, term)
    if mode == "IDF":
        freq = bl.cast(bl.greater(freq, n.const(0, "float32")), "float32")
        if have_weights:  # one n-gram per output (refused otherwise)
            placed = np.zeros(outputs, np.float32)
            placed[indexes] = weights
            freq = bl.mul(freq, n.importer.operand(placed.reshape(1, outputs)))
    if rank == 1:
        return bl.reshape(freq, [outputs])
    return freq
