"""DeformConv compared with ONNX Runtime on both backends (2-D): offsets reaching outside the
image, a modulation mask, groups and offset groups, strides, pads and dilations. 3-D, which
neither ONNX Runtime 1.32 nor onnx's reference runs, is compared with ONNX's definition written
out in numpy below (itself checked against ONNX Runtime in 2-D)."""

import itertools
import math

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import BACKENDS, assert_matches_onnxruntime, graph_model, onnxruntime_outputs


def _case(spatial, c_in, c_out, k, group, offset_group, mask, attrs):
    """(model, feeds, initializers) of one DeformConv with a k x ... x k kernel."""
    rank = len(spatial)
    rng = np.random.default_rng(c_in * 10 + k + (rank - 2) * 100)
    strides = attrs.get("strides", [1] * rank)
    dil = attrs.get("dilations", [1] * rank)
    pads = attrs.get("pads", [0] * (2 * rank))
    out = [
        (spatial[a] + pads[a] + pads[rank + a] - dil[a] * (k - 1) - 1) // strides[a] + 1
        for a in range(rank)
    ]
    taps = k**rank
    feeds = {
        "x": rng.standard_normal((2, c_in, *spatial)).astype(np.float32),
        "off": (rng.standard_normal((2, offset_group * rank * taps, *out)) * 1.5).astype(
            np.float32
        ),
    }
    inits = {
        "w": rng.standard_normal((c_out, c_in // group, *[k] * rank)).astype(np.float32),
        "b": rng.standard_normal(c_out).astype(np.float32),
    }
    inputs = ["x", "w", "off", "b"]
    if mask:
        feeds["m"] = rng.uniform(0, 1, (2, offset_group * taps, *out)).astype(np.float32)
        inputs.append("m")
    node = helper.make_node(
        "DeformConv", inputs, ["y"], group=group, offset_group=offset_group,
        kernel_shape=[k] * rank, **attrs,
    )  # fmt: skip
    model = graph_model([node], feeds, {"y": TensorProto.FLOAT}, inits, {"": 19}, ir_version=9)
    return model, feeds, inits


def _reference(x, w, offsets, bias, mask, attrs, group, offset_group):
    """ONNX's DeformConv of any rank with numpy loops: each tap reads the input at its offset
    position, the multilinear interpolation of the 2^rank neighbours (zero outside)."""
    n_batch, channels, *spatial = x.shape
    oc, cpg, *kernel = w.shape
    rank, out = len(spatial), offsets.shape[2:]
    strides = attrs.get("strides", [1] * rank)
    dil = attrs.get("dilations", [1] * rank)
    pads = attrs.get("pads", [0] * (2 * rank))
    taps, cg = math.prod(kernel), channels // offset_group
    off = offsets.reshape(n_batch, offset_group, taps, rank, *out).astype(np.float64)
    cols = np.zeros((n_batch, channels, taps, *out))
    for b, g, t in itertools.product(range(n_batch), range(offset_group), range(taps)):
        tap = np.unravel_index(t, kernel)
        group_channels = slice(g * cg, (g + 1) * cg)
        for o in np.ndindex(*out):
            pos = [o[a] * strides[a] - pads[a] + tap[a] * dil[a] + off[(b, g, t, a, *o)]
                   for a in range(rank)]  # fmt: skip
            value = np.zeros(cg)
            for ends in itertools.product((0, 1), repeat=rank):
                idx = [math.floor(p) + e for p, e in zip(pos, ends)]
                if all(0 <= i < s for i, s in zip(idx, spatial)):
                    weight = math.prod(1 - abs(p - i) for p, i in zip(pos, idx))
                    value += weight * x[(b, group_channels, *idx)]
            if mask is not None:
                value *= mask.reshape(n_batch, offset_group, taps, *out)[(b, g, t, *o)]
            cols[(b, group_channels, t, *o)] = value
    cols = cols.reshape(n_batch, group, cpg * taps, -1)
    y = np.einsum("gok,bgkp->bgop", w.reshape(group, oc // group, cpg * taps), cols)
    return y.reshape(n_batch, oc, *out) + bias.reshape(1, oc, *[1] * rank)


CASES_2D = [
    (2, 3, 3, 1, 1, False, {"pads": [1, 1, 1, 1]}),
    (4, 4, 3, 2, 2, True, {"strides": [2, 2], "pads": [1, 0, 1, 0]}),
    (3, 2, 2, 1, 3, True, {"dilations": [2, 1]}),
]


@pytest.mark.parametrize("c_in,c_out,k,group,offset_group,mask,attrs", CASES_2D)
def test_deform_conv_matches_onnxruntime(c_in, c_out, k, group, offset_group, mask, attrs):
    model, feeds, _ = _case([7, 8], c_in, c_out, k, group, offset_group, mask, attrs)
    assert_matches_onnxruntime(model, feeds, rtol=1e-4, atol=1e-4)


def test_numpy_definition_matches_onnxruntime_in_2d():
    c_in, c_out, k, group, offset_group, mask, attrs = CASES_2D[1]
    model, feeds, inits = _case([7, 8], c_in, c_out, k, group, offset_group, mask, attrs)
    want = onnxruntime_outputs(model, feeds)["y"]
    got = _reference(feeds["x"], inits["w"], feeds["off"], inits["b"], feeds.get("m"), attrs,
                     group, offset_group)  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "c_in,c_out,k,group,offset_group,mask,attrs",
    [
        (2, 3, 2, 1, 1, False, {"pads": [1, 0, 1, 0, 1, 1]}),
        (4, 2, 2, 2, 2, True, {"strides": [2, 1, 2], "dilations": [1, 2, 1]}),
    ],
)
def test_deform_conv_3d_matches_its_definition(c_in, c_out, k, group, offset_group, mask, attrs):
    spatial = [4, 5, 6]
    model, feeds, inits = _case(spatial, c_in, c_out, k, group, offset_group, mask, attrs)
    want = _reference(feeds["x"], inits["w"], feeds["off"], inits["b"], feeds.get("m"), attrs,
                      group, offset_group)  # fmt: skip
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), feeds)["y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=backend)


@pytest.mark.parametrize(
    "change,message",
    [
        ({"kernel_shape": [2, 2, 3]}, "does not match the weights"),
        ({"strides": [1, 1]}, "do not fit 3-D"),
        ({"offset_group": 3}, "inconsistent"),
        ({"strides": [1, 2**62, 1]}, r"do not match the output size \[3, 1, 5\]"),
    ],
)
def test_deform_conv_3d_refuses_inconsistent_attributes(change, message):
    model, _, _ = _case([4, 5, 6], 2, 3, 2, 1, 1, False, {})
    node = model.graph.node[0]
    keep = [a for a in node.attribute if a.name not in change]
    del node.attribute[:]
    node.attribute.extend(keep + [helper.make_attribute(k, v) for k, v in change.items()])
    context = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(wo.OnnxImportError, match=f"DeformConv.*{message}"):
        wo.load(context, model)


def test_deform_conv_refuses_a_sampling_grid_too_large_to_import():
    # A declared output of 2^24 positions per axis: its position constants alone would be
    # gigabytes (taps x axes x positions).
    model, _, _ = _case([4, 5, 6], 2, 3, 2, 1, 1, False, {})
    dims = model.graph.input[1].type.tensor_type.shape.dim
    dims[2].dim_value, dims[3].dim_value = 1 << 12, 1 << 12
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = (1 << 12) + 1
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_value = (1 << 12) + 1
    context = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(wo.OnnxImportError, match="DeformConv.*too many sample positions"):
        wo.load(context, model)
