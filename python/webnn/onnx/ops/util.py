"""Helpers shared by the converters."""

import numpy as np


def norm_axis(n, axis, rank):
    if not -rank <= axis < max(rank, 1):
        n.fail(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def norm_axes(n, axes, rank):
    return [norm_axis(n, int(a), rank) for a in axes]


def scalar(n, value, dtype):
    """A scalar constant operand of a WebNN dtype."""
    return n.const(value, dtype)


def unsqueeze(b, x, axes):
    return b.unsqueeze(x, list(axes))


def reshape(b, x, shape):
    return b.reshape(x, [int(d) if not isinstance(d, dict) else d for d in shape])


def prod(values):
    out = 1
    for v in values:
        out *= int(v)
    return out


def broadcast_shapes(*shapes):
    return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def to_dtype(n, x, dtype):
    """Cast an operand if its data type differs."""
    if n.b.operand_data_type(x) == dtype:
        return x
    return n.b.cast(x, dtype)


def window_attributes(n, rank):
    """strides, dilations and pads (begins, then ends) of a window sliding over `rank` spatial
    axes (ONNX's defaults 1, 1, 0), checked: one value per axis (two pads), strides and
    dilations positive, pads not negative."""
    strides = [int(v) for v in n.attr("strides", [1] * rank)]
    dilations = [int(v) for v in n.attr("dilations", [1] * rank)]
    pads = [int(v) for v in n.attr("pads", [0] * (2 * rank))]
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        n.fail(f"strides {strides}, dilations {dilations} and pads {pads} do not fit {rank}-D")
    if min(strides + dilations) < 1 or min(pads) < 0:
        n.fail(f"strides {strides} and dilations {dilations} must be positive and pads {pads} "
               "not negative")  # fmt: skip
    return strides, dilations, pads


# Constants the importer makes from declared sizes (positions, masks): a dimension costs
# nothing in a file, so a constant beyond this is refused before numpy allocates it.
MAX_MADE_ELEMENTS = 1 << 26


def check_made(n, what, shape):
    """Refuses (naming `what`) a constant of `shape` too large to make at import."""
    count = prod(shape)
    if count > MAX_MADE_ELEMENTS:
        n.fail(f"{what} of shape {list(shape)} is too large to make at import ({count} "
               f"elements, at most {MAX_MADE_ELEMENTS})")  # fmt: skip


def zeros(n, shape, dtype):
    """Zeros of `shape` and WebNN `dtype`: a scalar expanded in the graph, so that nothing of
    a declared size is allocated at import."""
    return n.b.expand(n.const(0, dtype), [int(d) for d in shape])


def tensor_attr_array(n, tensor, name):
    """A TensorProto attribute as numpy, its external data read like an initializer's (the
    location checked, relative to the model directory, never to the working directory)."""
    from ..errors import OnnxImportError
    from ..model_io import tensor_to_numpy

    try:
        return tensor_to_numpy(tensor, n.importer.base_dir)
    except OnnxImportError as exc:
        n.fail(f"attribute '{name}': {exc}")
