"""Shape and layout: Reshape, Transpose, Concat, Split, Slice, Squeeze, Expand, Shape ..."""

import numpy as np

from ..host_cuts import HOST_OPS
from ..model_io import sparse_to_numpy, tensor_to_numpy
from ..sequence_values import NON_TENSOR
from .registry import op
from .util import MAX_MADE_ELEMENTS, norm_axes, norm_axis, prod

# Larger ConstantOfShape results stay run-time values (the fold limit of folding.py).
_MAX_MATERIALIZED_ELEMENTS = 1 << 24


def _ints(array):
    return [int(v) for v in np.asarray(array).reshape(-1)]


@op("Constant", fold_without_inputs=True)
def constant(n):
    for a in n.node.attribute:
        if a.name == "value":  # external data is read like an initializer's (location checked)
            return tensor_to_numpy(a.t, n.importer.base_dir)
        if a.name == "sparse_value":
            return sparse_to_numpy(a.sparse_tensor, n.importer.base_dir)
        if a.name == "value_float":
            return np.array(a.f, np.float32)
        if a.name == "value_floats":
            return np.array(list(a.floats), np.float32)
        if a.name == "value_int":
            return np.array(a.i, np.int64)
        if a.name == "value_ints":
            return np.array(list(a.ints), np.int64)
    n.fail("Constant without a tensor or numeric value (strings are not supported)")


def _check_inference_dropout(n):
    """Dropout is the identity in inference mode, and in training mode with ratio 0; training
    mode with another ratio draws a random mask, which this importer does not reproduce. A
    training_mode or ratio computed at run time is refused: the graph would silently be the
    identity whatever it says."""
    if n.opset < 7:
        # is_test defaults to 0 there, but exporters of that era wrote inference graphs
        # without it (and ONNX Runtime has no such Dropout): the identity, unless the random
        # mask itself is asked for.
        mask = len(n.node.output) > 1 and n.node.output[1]
        if mask and n.attr("is_test", 1) == 0 and n.attr("ratio", 0.5) != 0:
            n.fail("training-mode Dropout (is_test=0) is random and not supported")
        return
    if n.opset < 12 or not n.has(2):
        return
    if not n.is_const(2):
        n.fail(
            "input 2 (training_mode) must be known at import (a constant, or given with "
            "constants=): a training-mode Dropout is random"
        )
    if not bool(n.c(2).reshape(-1)[0]):
        return
    ratio = 0.5
    if n.has(1):
        if not n.is_const(1):
            n.fail("input 1 (ratio) must be known at import when training_mode is true")
        ratio = float(n.c(1).reshape(-1)[0])
    if ratio != 0:
        n.fail(f"training_mode Dropout with ratio {ratio} draws a random mask: not supported")


@op("Identity", "Dropout")
def identity(n):
    if n.node.op_type == "Identity" and isinstance(n.value(0), NON_TENSOR):
        return [n.value(0)]  # a sequence or optional, held at import
    if n.node.op_type == "Dropout":
        _check_inference_dropout(n)
    outs = [n.b.identity(n.x(0))]
    if len(n.node.output) > 1 and n.node.output[1]:
        shape = n.static_shape(0)
        if prod(shape) <= MAX_MADE_ELEMENTS:
            outs.append(np.ones(shape, dtype=np.bool_))  # a constant later nodes can fold
        else:  # a declared [3, 2^31-1, 5] was 30 GiB at import (fuzz finding, sixth session)
            outs.append(n.b.expand(n.const(1, "uint8"), [int(d) for d in shape]))
    return outs


def reshape_target(n, in_shape, shape, allowzero):
    out = []
    for i, d in enumerate(shape):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                n.fail(f"shape entry {i} is 0 (copy) but the input has rank {len(in_shape)}")
            out.append(in_shape[i])
        else:
            out.append(int(d))
    if -1 in out:
        if out.count(-1) > 1:
            n.fail(f"shape {shape} has more than one -1")
        if any(isinstance(d, dict) for d in in_shape) or any(isinstance(d, dict) for d in out):
            dyn_in = [d["name"] for d in in_shape if isinstance(d, dict)]
            dyn_out = [d["name"] for d in out if isinstance(d, dict)]
            known = prod([d for d in out if isinstance(d, int) and d != -1])
            total = prod([d for d in in_shape if isinstance(d, int)])
            if sorted(dyn_in) == sorted(dyn_out) and total % known == 0:
                out[out.index(-1)] = total // known
                return out
            n.fail("Reshape with -1 on a dynamic shape: the missing size is not static")
        known = prod([d for d in out if d != -1])
        total = prod(in_shape)
        if known == 0 or total % known:
            n.fail(f"cannot reshape {list(in_shape)} to {list(shape)}")
        out[out.index(-1)] = total // known
    return out


@op("Reshape")
def reshape(n):
    in_shape = n.shape(0)
    if n.opset < 5:
        shape = list(n.attr("shape"))
    else:
        shape = _ints(n.c(1, what="the target shape"))
    out = reshape_target(n, in_shape, shape, n.attr("allowzero", 0))
    if 0 in out:
        n.fail(f"reshape to {out}: WebNN operands cannot have 0-sized dimensions")
    return n.b.reshape(n.x(0), out)


@op("Flatten")
def flatten(n):
    shape = n.static_shape(0)
    axis = int(n.attr("axis", 1))
    axis = axis + len(shape) if axis < 0 else axis
    return n.b.reshape(n.x(0), [prod(shape[:axis]), prod(shape[axis:])])


@op("Transpose")
def transpose(n):
    perm = n.attr("perm", None)
    rank = n.rank(0)
    if perm is None:
        perm = list(range(rank))[::-1]
    return n.b.transpose(n.x(0), [int(p) for p in perm])


@op("Concat")
def concat(n):
    ops_ = [i for i in range(n.n_inputs) if n.has(i)]
    rank = n.rank(ops_[0])
    axis = norm_axis(n, int(n.attr("axis", 1 if n.opset < 4 else None)), rank)  # Concat-1: 1
    parts = [n.x(i) for i in ops_ if 0 not in n.shape(i)]
    if len(parts) == 1:
        return n.b.identity(parts[0])
    return n.b.concat(parts, axis)


@op("Split")
def split(n):
    shape = n.shape(0)
    rank = len(shape)
    axis = norm_axis(n, int(n.attr("axis", 0)), rank)
    count = len(n.node.output)
    if n.opset >= 13 and n.has(1):
        sizes = _ints(n.c(1, what="split sizes"))
    elif n.attr("split") is not None:
        sizes = [int(s) for s in n.attr("split")]
    else:
        total = shape[axis]
        if not isinstance(total, int):
            n.fail(f"Split along dynamic axis {axis}")
        parts = int(n.attr("num_outputs", count))
        chunk = -(-total // parts)
        sizes = [chunk] * (total // chunk)
        if total % chunk:
            sizes.append(total % chunk)
        if len(sizes) != parts and n.attr("num_outputs") is None:
            n.fail(f"size {total} does not split into {parts} equal parts")
    nonzero = [s for s in sizes if s]
    if len(nonzero) == 1:
        parts = [n.b.identity(n.x(0))]
    else:
        parts = list(n.b.split(n.x(0), nonzero, axis))
    # Empty pieces are known at import (they hold no data): empty numpy arrays.
    out, it = [], iter(parts)
    for s in sizes:
        if s:
            out.append(next(it))
        else:
            empty = list(shape)
            empty[axis] = 0
            out.append(np.zeros(empty, dtype=n.np_dtype(0)))
    return out


def _axes_arg(n, index, attr="axes"):
    if n.opset >= 13 and n.has(index):
        return _ints(n.c(index, what="axes"))
    if n.attr(attr) is not None:
        return [int(a) for a in n.attr(attr)]
    return None


@op("Squeeze")
def squeeze(n):
    shape = n.shape(0)
    axes = _axes_arg(n, 1)
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    axes = norm_axes(n, axes, len(shape))
    keep = [d for i, d in enumerate(shape) if i not in axes]
    return n.b.reshape(n.x(0), keep)


@op("Unsqueeze")
def unsqueeze(n):
    shape = n.shape(0)
    axes = _axes_arg(n, 1)
    out_rank = len(shape) + len(axes)
    axes = sorted(norm_axes(n, axes, out_rank))
    if len(set(axes)) != len(axes):  # found by the fuzzer (the shape ran out: StopIteration)
        n.fail(f"axes {axes} repeat an axis")
    out, it = [], iter(shape)
    for i in range(out_rank):
        out.append(1 if i in axes else next(it))
    return n.b.reshape(n.x(0), out)


@op("Expand")
def expand(n):
    target = _ints(n.c(1, what="the shape"))
    shape = n.shape(0)
    rank = max(len(target), len(shape))
    a = [1] * (rank - len(shape)) + list(shape)
    t = [1] * (rank - len(target)) + target
    out = []
    for da, dt in zip(a, t):
        out.append(da if dt == 1 else dt)
    x = n.x(0)
    if len(shape) < rank:
        x = n.b.reshape(x, a)
    if out == a:
        return n.b.identity(x)
    result = n.b.expand(x, out)
    n.importer.expanded[id(result)] = (result, x)
    return result


@op("Tile")
def tile(n):
    reps = _ints(n.c(1, what="repeats"))
    if all(r == 1 for r in reps):
        return n.b.identity(n.x(0))
    return n.b.tile(n.x(0), reps)


@op("Shape")
def shape_(n):
    shape = n.shape(0)
    start, end = n.attr("start", 0), n.attr("end", None)
    dynamic = [d["name"] for d in shape if isinstance(d, dict)]
    if dynamic:
        where = []
        for name in dynamic:
            origin = n.importer.dynamic_origin.get(name)
            where.append(
                f"'{name}'" + (f" (input '{origin[0]}' axis {origin[1]})" if origin else "")
            )
        n.fail(
            f"the shape of '{n.node.input[0]}' has dynamic dimensions {', '.join(where)}, and "
            "shape arithmetic on them is not expressible in WebNN; fix them with free_dims= or "
            "input_shapes= (one graph per shape)"
        )
    return np.array(shape[slice(start, end)], dtype=np.int64)


@op("Size")
def size(n):
    return np.array(prod(n.static_shape(0)), dtype=np.int64)


@op("ConstantOfShape")
def constant_of_shape(n):
    shape = _ints(n.c(0, what="the shape"))
    value = n.attr("value")
    fill = (
        tensor_to_numpy(value, n.importer.base_dir).reshape(-1)
        if value is not None
        else np.zeros(1, np.float32)
    )
    if any(d < 0 for d in shape):
        n.fail(f"negative dimension in the shape {shape}")
    count = 1
    for d in shape:
        count *= d
    if count > _MAX_MATERIALIZED_ELEMENTS:
        # Not materialized at import (a few bytes of model can declare terabytes): an expand
        # of the scalar, whose size the builder checks like any operand's.
        return n.b.expand(n.importer.operand(np.asarray(fill[0], fill.dtype), n), shape)
    return np.full(shape, fill[0], dtype=fill.dtype)


@op("EyeLike")
def eye_like(n):
    from ..types import ONNX_TO_NUMPY

    shape = n.static_shape(0)
    dtype = ONNX_TO_NUMPY.get(n.attr("dtype"), n.np_dtype(0)) if n.attr("dtype") else n.np_dtype(0)
    if len(shape) != 2:
        n.fail(f"input must have rank 2 (got shape {list(shape)})")
    if shape[0] * shape[1] > _MAX_MATERIALIZED_ELEMENTS:
        # A constant made at import from a declared shape (found by the fuzzer: [4, 2^31 - 1]
        # made numpy allocate 32 GiB, MemoryError).
        n.fail(f"an identity of {shape[0]} x {shape[1]} elements is too large to import")
    return np.eye(shape[0], shape[1], k=int(n.attr("k", 0)), dtype=dtype)


def _fold_only(reason):
    def convert(n):
        where = ""
        if n.node.op_type in HOST_OPS:  # a session cuts the graph there instead (host_cuts.py)
            where = " (webnn.onnx.InferenceSession runs it on the host between graphs)"
        n.fail(f"needs inputs known at import: {reason}{where}")

    return convert


for _name, _why in {
    "Range": "its output size depends on the input values",
    "NonZero": "its output size depends on the input values",
    "Unique": "its output size depends on the input values",
    "Compress": "its output size depends on the input values",
    "NonMaxSuppression": "its output size depends on the input values",
    "StringNormalizer": "WebNN has no string type",
    "RandomNormal": "random",
    "RandomUniform": "random",
    "RandomNormalLike": "random",
    "RandomUniformLike": "random",
    "Multinomial": "random",
    "Bernoulli": "random",
    "BitShift": "WebNN has no bit shifts",
    "BitCast": "WebNN has no bit reinterpretation (its cast converts values)",
    "BitwiseAnd": "WebNN has no bitwise operators",
    "BitwiseOr": "WebNN has no bitwise operators",
    "BitwiseXor": "WebNN has no bitwise operators",
    "BitwiseNot": "WebNN has no bitwise operators",
    "MelWeightMatrix": "a table of its scalar inputs (known at import in audio front ends)",
}.items():
    op(_name, runtime=False, note=_why, fold_without_inputs=_name.startswith("Random"))(
        _fold_only(_why)
    )
