"""QDQ models on the cpu backend's int8 kernels (graph/passes/qdq_fusion.cc, cpu/qconv.cc).

Each model is quantized here from a float model with onnxruntime.quantization.quantize_static
(QDQ format, per-tensor and per-channel weights): a small CNN built in the test (plain,
depthwise, grouped, strided, dilated and 1x1 convolutions, relu, a final matmul) and the PP-OCR direction
classifier from the rapidocr_onnxruntime wheel. The integer path must give exactly the output
of the same graph without the QDQ pass (the pass only rewrites where the float32 convolution
is exact, see qdq_fusion.cc), be within one quantization step of the float path with no
passes at all and of ONNX Runtime's QDQ session, at 1 and 2 threads.
"""

import importlib.util
import sysconfig
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
quantization = pytest.importorskip("onnxruntime.quantization")

import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper
from qdq_quantize import output_step, perturbed, quantize_qdq

# Every pass but qdq_fusion: the float path the int8 kernels must reproduce bit for bit.
ALL_BUT_QDQ = "constant_folding,batch_norm_folding,layout_assignment,epilogue_fusion"


def _small_cnn(path):
    rng = np.random.default_rng(5)
    inits, nodes = [], []

    def conv(name, x, cin, cout, k, group=1, stride=1, pad=0, dilation=1, relu=True):
        w = rng.standard_normal((cout, cin // group, k, k)).astype(np.float32)
        w *= 1.5 / np.sqrt(cin // group * k * k)
        b = (0.1 * rng.standard_normal(cout)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"{name}_w"))
        inits.append(numpy_helper.from_array(b, f"{name}_b"))
        attrs = {"kernel_shape": [k, k], "group": group, "strides": [stride, stride]}
        attrs.update(pads=[pad] * 4, dilations=[dilation, dilation])
        out = f"{name}_y"
        nodes.append(helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [out], **attrs))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [f"{name}_r"]))
            out = f"{name}_r"
        return out

    y = conv("c1", "x", 3, 8, 3, pad=1)
    y = conv("dw", y, 8, 8, 3, group=8, stride=2, pad=1)
    y = conv("pw", y, 8, 12, 1)
    y = conv("grp", y, 12, 12, 3, group=3, pad=1)
    y = conv("dil", y, 12, 17, 3, dilation=2, pad=2, relu=False)
    y = conv("s2", y, 17, 5, 2, stride=2, relu=False)
    nodes.append(helper.make_node("Relu", [y], ["r"]))
    nodes.append(helper.make_node("GlobalAveragePool", ["r"], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    fc = (rng.standard_normal((5, 7)) / 2).astype(np.float32)
    inits.append(numpy_helper.from_array(fc, "fc_w"))
    nodes.append(helper.make_node("MatMul", ["flat", "fc_w"], ["fc"]))
    y = "fc"
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 20, 26])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return {"x": rng.standard_normal((1, 3, 20, 26)).astype(np.float32)}


def _cls_model():
    for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        p = Path(base) / "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
        if p.is_file():
            return str(p)
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec and spec.submodule_search_locations:
        for base in spec.submodule_search_locations:
            p = Path(base) / "models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
            if p.is_file():
                return str(p)
    pytest.skip("the rapidocr_onnxruntime wheel is not installed")


def _quantize(src, dst, feeds, per_channel):
    quantize_qdq(src, dst, perturbed(feeds, 3, 0.1, seed=2), per_channel)


def _ours(path, feeds, monkeypatch, passes, threads):
    monkeypatch.setenv("WEBNN_PASSES", passes)
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    graph = wo.load(context, path, input_shapes={k: list(v.shape) for k, v in feeds.items()})
    (name,) = graph.get_output_names()
    return context.compute(graph, feeds)[name], graph.compile_stats


def _theirs(path, feeds):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _check(path, feeds, monkeypatch, min_fused):
    step = output_step(path)
    theirs = _theirs(path, feeds)
    float_path, _ = _ours(path, feeds, monkeypatch, ALL_BUT_QDQ, 1)
    no_passes, _ = _ours(path, feeds, monkeypatch, "none", 1)
    for threads in (1, 2):
        ours, stats = _ours(path, feeds, monkeypatch, "all", threads)
        assert stats["passes"].get("qdq_fusion", 0) >= min_fused, stats["passes"]
        np.testing.assert_array_equal(ours, float_path)
        assert float(np.max(np.abs(ours - no_passes))) <= step * 1.001
        err = float(np.max(np.abs(ours - theirs)))
        assert err <= step * 1.001, f"max error {err:.3g} vs ORT > one step {step:.3g}"
    assert np.ptp(theirs) > 4 * step  # the quantized output is not constant


@pytest.mark.parametrize("per_channel", [False, True])
def test_small_qdq_cnn(tmp_path, monkeypatch, per_channel):
    src = str(tmp_path / "cnn.onnx")
    feeds = _small_cnn(src)
    dst = str(tmp_path / "cnn_qdq.onnx")
    _quantize(src, dst, feeds, per_channel)
    _check(dst, feeds, monkeypatch, min_fused=7)  # six conv2d and the matmul


@pytest.mark.parametrize("per_channel", [False, True])
def test_qdq_direction_classifier(tmp_path, monkeypatch, per_channel):
    src = _cls_model()
    rng = np.random.default_rng(4)
    feeds = {"x": rng.uniform(-1, 1, (2, 3, 48, 192)).astype(np.float32)}
    dst = str(tmp_path / "cls_qdq.onnx")
    _quantize(src, dst, feeds, per_channel)
    _check(dst, feeds, monkeypatch, min_fused=54)  # all 53 conv2d and the matmul


def _qdq_graph(backend, x, scale, zp, quantize):
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    b = context.create_graph_builder()
    xt = "float32" if quantize else str(zp.dtype)
    inp = b.input("x", list(x.shape), xt)
    s = b.constant(np.full([1] * x.ndim, scale, np.float32))
    z = b.constant(np.full([1] * x.ndim, zp, zp.dtype))
    y = b.quantize_linear(inp, s, z) if quantize else b.dequantize_linear(inp, s, z)
    return context.compute(b.build({"y": y}), {"x": x})["y"]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("scale", [1.0, 0.0173, 3.0])
def test_per_tensor_quantize_dequantize_match_reference(dtype, scale):
    """The cpu kernels of per-tensor quantizeLinear / dequantizeLinear (cpu/quantize_linear.cc)
    give the reference backend's bits: ties, saturation, infinities and NaN included."""
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(70007) * 120 * scale).astype(np.float32)
    specials = [0.5, 1.5, 2.5, -0.5, -1.5, 127.5, -128.5, 255.5, 1e9, -1e9, np.inf, -np.inf, np.nan]
    x[: len(specials)] = np.asarray(specials, np.float32) * np.float32(scale)
    x = x.reshape(7, 10001)
    zp = np.array(3 if dtype == np.int8 else 121, dtype)
    q_cpu, q_ref = (_qdq_graph(be, x, scale, zp, True) for be in ("cpu", "reference"))
    np.testing.assert_array_equal(q_cpu, q_ref)
    dq_cpu, dq_ref = (_qdq_graph(be, q_ref, scale, zp, False) for be in ("cpu", "reference"))
    np.testing.assert_array_equal(dq_cpu.view(np.int32), dq_ref.view(np.int32))


def _elementwise_cnn(path):
    """Convolutions separated by the element-wise ops QDQ models keep in float between them
    (batch normalization, hard-swish, sigmoid, leaky relu, clip, per-channel scale and shift),
    which graph/passes/qdq_tables.cc tabulates into the preceding int8 convolution."""
    rng = np.random.default_rng(11)
    inits, nodes = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a, np.float32), name))
        return name

    def conv(name, x, cin, cout, k, group=1):
        w = rng.standard_normal((cout, cin // group, k, k)) * 1.5 / np.sqrt(cin // group * k * k)
        b = 0.1 * rng.standard_normal(cout)
        attrs = {"kernel_shape": [k, k], "group": group, "pads": [k // 2] * 4}
        inputs = [x, const(f"{name}_w", w), const(f"{name}_b", b)]
        nodes.append(helper.make_node("Conv", inputs, [f"{name}_y"], **attrs))
        return f"{name}_y", cout

    def node(op, inputs, **attrs):
        out = f"t{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    y, c = conv("c1", "x", 3, 8, 3)
    stats = {"s": rng.uniform(0.5, 2, c), "b": rng.standard_normal(c)}
    stats.update(m=0.1 * rng.standard_normal(c), v=rng.uniform(0.5, 2, c))
    bn = [const(f"bn_{k}", v) for k, v in stats.items()]
    y = node("BatchNormalization", [y, *bn], epsilon=1e-3)
    y = node("HardSwish", [y])
    y, c = conv("dw", y, c, c, 3, group=c)
    y = node("Mul", [y, node("Sigmoid", [y])])  # swish
    y, c = conv("pw", y, c, 12, 1)
    y = node("LeakyRelu", [y], alpha=0.1)
    scaled = node("Mul", [y, const("sc", rng.uniform(0.5, 2, (1, c, 1, 1)))])
    y = node("Add", [scaled, const("sh", rng.standard_normal((1, c, 1, 1)))])
    y, c = conv("c4", y, c, 6, 3)
    y = node("Clip", [y, const("lo", -1.0), const("hi", 2.0)])
    y = node("HardSigmoid", [y], alpha=0.3, beta=0.4)
    y, c = conv("c5", y, c, 5, 1)
    graph = helper.make_graph(
        nodes,
        "elementwise_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 14, 18])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return {"x": rng.standard_normal((2, 3, 14, 18)).astype(np.float32)}


@pytest.mark.parametrize("per_channel", [False, True])
def test_qdq_tables_of_elementwise_regions(tmp_path, monkeypatch, per_channel):
    """The element-wise float ops between int8 convolutions, tabulated per channel into the
    convolution's requantization, give the float graph's bits (1 and 2 threads)."""
    src = str(tmp_path / "ew.onnx")
    feeds = _elementwise_cnn(src)
    dst = str(tmp_path / "ew_qdq.onnx")
    _quantize(src, dst, feeds, per_channel)
    _check(dst, feeds, monkeypatch, min_fused=5)
    _, stats = _ours(dst, feeds, monkeypatch, "all", 1)
    assert stats["passes"].get("qdq_tables", 0) >= 4, stats["passes"]
    assert "batchNormalization" not in stats["ops_after"], stats["ops_after"]


def _quantized_conv_graph(context, case):
    """webnn.onnx's QLinearConv form (cast - x_zp -> conv2d -> mul -> quantizeLinear(1, y_zp)),
    followed by an element-wise region back to (u)int8 (dequantize -> batch norm -> hard-swish
    -> per-channel add -> sigmoid -> quantize), as the builder states it."""
    rng = np.random.default_rng(case["seed"])
    nhwc, xt, yt = case["nhwc"], case["x_type"], case["y_type"]
    n, c, h, w, oc, k, g = (case[key] for key in ("n", "c", "h", "w", "oc", "k", "groups"))
    b = context.create_graph_builder()

    def const(a, t=None):
        a = np.asarray(a)
        return b.constant(a, shape=list(a.shape), data_type=t or a.dtype.name)

    x_shape = [n, h, w, c] if nhwc else [n, c, h, w]
    x = b.input("x", x_shape, xt)
    lo, hi = (-128, 127) if xt == "int8" else (0, 255)
    x_zp = int(rng.integers(lo, hi + 1))
    shifted = b.sub(b.cast(x, "float32"), const(np.full([1] * 4, x_zp, np.float32)))
    wmax = case.get("weight_max", 127)
    wts = rng.integers(-wmax, wmax + 1, [oc, c // g, k, k]).astype(np.float32)
    bias = rng.integers(-3000, 3000, [oc]).astype(np.float32)
    s, d = case["stride"], case["dilation"]
    layout = "nhwc" if nhwc else "nchw"
    acc = b.conv2d(
        shifted,
        const(wts),
        strides=[s, s],
        dilations=[d, d],
        padding=case["pads"],
        groups=g,
        input_layout=layout,
        bias=const(bias),
    )
    ch = [1, 1, 1, oc] if nhwc else [1, oc, 1, 1]
    scale = 1.0 / (np.sqrt(c // g * k * k) * 60 * 127)
    m = (scale * rng.uniform(0.5, 2, oc if case["per_channel"] else 1)).astype(np.float32)
    mult = const(m.reshape(ch) if case["per_channel"] else m.reshape([1] * 4))
    ylo = -128 if yt == "int8" else 0
    y_zp = int(rng.integers(ylo, ylo + 256))
    one = const(np.ones([1] * 4, np.float32))
    y = b.quantize_linear(b.mul(acc, mult), one, const(np.full([1] * 4, y_zp), yt))
    if case["region"]:
        s1, z1 = np.float32(0.05), const(np.full([1] * 4, y_zp), yt)
        v = b.dequantize_linear(y, const(np.full([1] * 4, s1, np.float32)), z1)
        stats = [const(rng.uniform(0.5, 2, oc).astype(np.float32)) for _ in range(4)]
        v = b.batch_normalization(v, *stats, axis=3 if nhwc else 1)
        v = b.hard_swish(v)
        v = b.add(v, const(rng.standard_normal(ch).astype(np.float32)))
        v = b.sigmoid(v)
        out_t = case["region_type"]
        zp2 = const(np.full([1] * 4, 0 if out_t == "uint8" else -128), out_t)
        y = b.quantize_linear(b.div(v, const(np.full([1] * 4, 2 / 255, np.float32))), one, zp2)
    graph = b.build({"y": y})
    xv = rng.integers(lo, hi + 1, x_shape).astype(np.uint8 if xt == "uint8" else np.int8)
    return graph, {"x": xv}


def _random_conv_cases(count):
    rng = np.random.default_rng(21)
    cases = []
    for seed in range(count):
        k = int(rng.choice([1, 2, 3, 5]))
        c = int(rng.choice([1, 3, 8, 12, 17]))
        kind = rng.choice(["plain", "depthwise", "grouped"])
        if kind == "depthwise":
            groups = c
        elif kind == "grouped":
            groups = int(rng.choice([g for g in (2, 3) if c % g == 0] or [1]))
        else:
            groups = 1
        oc = c if kind == "depthwise" else groups * int(rng.integers(1, 23))
        case = {"seed": seed, "k": k, "c": c, "groups": groups, "oc": oc}
        case.update(n=int(rng.integers(1, 3)), h=int(rng.integers(k, 14)))
        case.update(w=int(rng.integers(k, 40)), stride=int(rng.choice([1, 1, 2, 3])))
        case.update(dilation=int(rng.choice([1, 1, 2])), nhwc=bool(rng.integers(0, 2)))
        case.update(pads=[int(p) for p in rng.integers(0, 3, 4)])
        case.update(x_type=str(rng.choice(["uint8", "int8"])))
        case.update(y_type=str(rng.choice(["uint8", "int8"])))
        case.update(per_channel=bool(rng.integers(0, 2)), region=bool(rng.integers(0, 3)))
        case.update(region_type=str(rng.choice(["uint8", "int8"])))
        if seed % 4 == 0:  # pointwise (the NCHW 1x1 fast path)
            case.update(k=1, stride=1, dilation=1, pads=[0, 0, 0, 0])
        cases.append(case)

    def fits(c, axis):
        size, pads = (c["h"], c["pads"][:2]) if axis == 0 else (c["w"], c["pads"][2:])
        return size + sum(pads) - c["dilation"] * (c["k"] - 1) - 1 >= 0

    return [c for c in cases if fits(c, 0) and fits(c, 1)]


def _cpu_and_reference(case):
    """The case's graph on cpu and on reference: (cpu output, reference output, cpu stats)."""
    outs, stats = [], None
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        graph, feeds = _quantized_conv_graph(context, case)
        outs.append(context.compute(graph, feeds)["y"])
        stats = stats or graph.compile_stats
    return outs[0], outs[1], stats


@pytest.mark.parametrize("threads", [1, 2])
def test_random_int8_convolutions_match_reference(monkeypatch, threads):
    """Random int8 convolutions (plain, grouped, depthwise; 1x1 to 5x5; strides, dilations,
    asymmetric padding; NCHW and NHWC; uint8 and int8 in and out; per-tensor and per-channel
    multipliers), some followed by a tabulated element-wise region: the cpu int8 kernels give
    the reference backend's bytes exactly."""
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    cases = _random_conv_cases(40)
    assert len(cases) >= 30
    fused = tables = 0
    for case in cases:
        ours, want, stats = _cpu_and_reference(case)
        fused += stats["passes"].get("qdq_fusion", 0)
        tables += stats["passes"].get("qdq_tables", 0)
        np.testing.assert_array_equal(ours, want, err_msg=str(case))
        assert len(np.unique(want)) > 2, case  # not a saturated constant
    assert fused == len(cases)
    assert tables >= len(cases) // 4


def test_qdq_fusion_walks_deep_graphs():
    """Whether a DequantizeLinear's input is constant is traced back iteratively: a deep chain
    of activations behind a MatMul's second input (attention in a QDQ transformer or in
    PP-OCRv4 rec) once hit Python's recursion limit."""
    from webnn.onnx.qdq import fuse_qdq

    s = numpy_helper.from_array(np.array(0.1, np.float32), "s")
    z = numpy_helper.from_array(np.array(3, np.uint8), "z")
    nodes = [helper.make_node("Relu", ["x"], ["r0"])]
    for i in range(3000):
        nodes.append(helper.make_node("Relu", [f"r{i}"], [f"r{i + 1}"]))
    nodes += [
        helper.make_node("QuantizeLinear", ["r3000", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["a"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["b"]),
        helper.make_node("MatMul", ["a", "b"], ["m"]),
        helper.make_node("QuantizeLinear", ["m", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "deep",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [4, 4])],
        [s, z],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert fuse_qdq(model) == 0  # the second input is an activation: not a weight


def test_dequantized_weights_fold_into_constant_filters():
    # A 3x3 conv whose int8 filter (147 KB as float32: above the folding size limit for
    # results larger than their operands) is dequantized in the graph: the weights fold into
    # one float constant filter (packed once), and the result matches the reference.
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 12, 12, 64)).astype(np.float32)
    w_q = rng.integers(-127, 128, (64, 3, 3, 64)).astype(np.int8)
    scale = np.full((1, 1, 1, 1), 0.01, np.float32)
    outs = {}
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        b = context.create_graph_builder()
        zero = b.constant(np.zeros((1, 1, 1, 1), np.int8))
        w = b.dequantize_linear(b.constant(w_q), b.constant(scale), zero)
        y = b.conv2d(b.input("x", list(x.shape), "float32"), w, padding=[1] * 4,
                     input_layout="nhwc", filter_layout="ohwi")  # fmt: skip
        graph = b.build({"y": y})
        outs[backend] = context.compute(graph, {"x": x})["y"]
        if backend == "cpu":
            assert graph.compile_stats["passes"]["constant_folding"] >= 1
            assert "dequantizeLinear" not in graph.compile_stats["ops_after"]
    k = 9 * 64
    bound = (k + 2) * np.finfo(np.float32).eps * np.abs(outs["reference"]).max() * 4
    assert np.abs(outs["cpu"] - outs["reference"]).max() <= bound


@pytest.mark.parametrize("per_channel", [False, True])
def test_layout_moves_through_quantize_dequantize(monkeypatch, per_channel):
    # NCHW conv -> quantizeLinear -> dequantizeLinear -> NCHW conv: the NHWC layout of the
    # convolutions stays across the pair (transposes only at the graph's edges), with the same
    # bits as without layout assignment.
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 6, 9, 11)).astype(np.float32)
    w1 = rng.standard_normal((8, 6, 1, 1)).astype(np.float32)
    w2 = rng.standard_normal((5, 8, 1, 1)).astype(np.float32)
    pshape = (1, 8, 1, 1) if per_channel else (1, 1, 1, 1)
    scale = rng.uniform(0.01, 0.05, pshape).astype(np.float32)
    zp = rng.integers(100, 156, pshape).astype(np.uint8)

    def run(passes):
        monkeypatch.setenv("WEBNN_PASSES", passes)
        context = webnn.ML().create_context(accelerated=False, backend="cpu")
        b = context.create_graph_builder()
        y = b.conv2d(b.input("x", list(x.shape), "float32"), b.constant(w1))
        q = b.quantize_linear(y, b.constant(scale), b.constant(zp))
        y = b.dequantize_linear(q, b.constant(scale), b.constant(zp))
        graph = b.build({"y": b.conv2d(y, b.constant(w2))})
        return context.compute(graph, {"x": x})["y"], graph.compile_stats["ops_after"]

    got, ops = run("all")
    want, _ = run("constant_folding,batch_norm_folding,epilogue_fusion")
    assert ops.get("transpose", 0) == 2, ops
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bias_as", ["initializer", "constant_node"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_float_bias_quantized_as_onnxruntime_does(bias_as, per_channel):
    """A QDQ Conv whose bias the quantizer left in float (PaddlePaddle exports hold biases in
    Constant nodes): ONNX Runtime's BiasQuantization transformer quantizes it to int32 with
    scale x_scale * w_scale before fusing the group into QLinearConv, and so does the importer
    (onnx/qdq.py): one integer conv2d, the same bytes as ORT's session."""
    rng = np.random.default_rng(8 + per_channel)
    o, c = 12, 6
    w = rng.integers(-60, 61, (o, c, 3, 3)).astype(np.int8)
    sw = (rng.uniform(0.5, 1.5, o) * 0.01).astype(np.float32) if per_channel else np.float32(0.01)
    bias = (rng.standard_normal(o) * 0.7).astype(np.float32)
    inits = {"sx": np.array(0.02, np.float32), "zx": np.array(128, np.uint8), "w": w,
             "sw": np.asarray(sw, np.float32), "zw": np.zeros(np.shape(sw), np.int8),
             "sy": np.array(0.05, np.float32), "zy": np.array(100, np.uint8)}  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "b"], ["p"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["y"]),
    ]
    tensors = [numpy_helper.from_array(v, k) for k, v in inits.items()]
    if bias_as == "initializer":
        tensors.append(numpy_helper.from_array(bias, "b"))
    else:
        nodes.insert(
            0, helper.make_node("Constant", [], ["b"], value=numpy_helper.from_array(bias))
        )
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        tensors,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    x = (rng.standard_normal((1, c, 9, 9)) * 1.5).astype(np.float32)
    context = webnn.ML().create_context(accelerated=False)
    g = wo.load(context, data)
    got = context.compute(g, {"x": x})["y"]
    assert g.compile_stats["passes"]["qdq_fusion"] == 1, g.compile_stats["passes"]
    assert g.compile_stats["ops_after"].get("conv2d") == 1
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("left", [0, 1, 2])
@pytest.mark.parametrize("width", [15, 16, 41])
@pytest.mark.parametrize("x_type", ["uint8", "int8"])
def test_depthwise_stride_two_phases(left, width, x_type):
    """NCHW depthwise int8 convolutions of stride 2 split each input row into its two column
    phases in one pass (cpu/qconv.cc split_phases): odd and even first columns (the left
    padding), odd and even widths; the reference backend's bytes."""
    case = {"seed": 100 + left * 7 + width, "k": 3, "c": 8, "groups": 8, "oc": 8, "n": 1,
            "h": 9, "w": width, "stride": 2, "dilation": 1, "nhwc": False,
            "pads": [1, 0, left, 1], "x_type": x_type, "y_type": "uint8", "per_channel": True,
            "region": False, "region_type": "uint8"}  # fmt: skip
    ours, want, stats = _cpu_and_reference(case)
    assert stats["passes"]["qdq_fusion"] == 1
    np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("threads", [1, 2])
def test_convolutions_whose_weight_pairs_never_saturate(monkeypatch, threads):
    """Weights within [-64, 64] (no pair can leave int16 for any bytes): on machines without
    VNNI, filters of several taps run on the raw-byte route of the pair-saturating tiles
    (cpu/qconv.cc pairs_never_saturate), which is exact then: the reference's bytes for the
    random cases (plain and grouped, strides, dilations, padding, NCHW / NHWC, uint8 / int8)."""
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    cases = [dict(c, weight_max=64) for c in _random_conv_cases(60) if c["groups"] != c["c"]]
    assert len(cases) >= 20
    for case in cases:
        ours, want, _ = _cpu_and_reference(case)
        np.testing.assert_array_equal(ours, want, err_msg=str(case))
