"""Times single operations on webnn's cpu backend against ONNX Runtime, in the same process.

Each case is built twice, as a WebNN graph and as an equivalent single-node ONNX model
(onnx.helper), with the same thread count for both engines. Outputs are checked to agree,
then runs are interleaved (ours, ORT, ours, ORT, ...) and medians reported with the ratio
ours / ORT (below 1 means webnn is faster).

    pip install .[bench]          # onnxruntime, onnx
    python bench/bench_ops.py --threads 1 2 --rounds 30 [--markdown out.md]

Our timing is MLContext.dispatch on tensors created beforehand (bound in place, no copies);
ORT's is run_with_iobinding on OrtValues bound beforehand. ORT's intra-op spinning is turned
off (session.intra_op.allow_spinning=0) unless --ort-spinning: its idle workers would otherwise
keep spinning on the cores our interleaved run uses. Our workers spin for ~100 us at most.
"""

import argparse
import os
import statistics
import time

import numpy as np

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover - optional dependency
    raise SystemExit(f"bench_ops.py needs the [bench] extra (onnxruntime, onnx): {e}") from e


class Case:
    """One operation: inputs, a WebNN builder function and an ONNX node."""

    def __init__(
        self, name, flops, inputs, constants, build_webnn, onnx_nodes, output_shape, rtol=1e-4
    ):
        self.name = name
        self.flops = flops
        self.inputs = inputs  # {name: array}, fed at run time
        self.constants = constants  # {name: array}, weights (ONNX initializers)
        self.build_webnn = build_webnn  # (builder, {name: operand}) -> output operand
        self.onnx_nodes = onnx_nodes
        self.output_shape = output_shape
        self.rtol = rtol


def _rng():
    return np.random.default_rng(0)


def cases():
    rng = _rng()
    out = []

    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    out.append(
        Case(
            "sgemm 1024x1024x1024 (A, B inputs)",
            2 * 1024**3,
            {"a": a, "b": b},
            {},
            lambda g, o: g.matmul(o["a"], o["b"]),
            [helper.make_node("MatMul", ["a", "b"], ["y"])],
            [1024, 1024],
        )
    )

    x = rng.standard_normal((128, 768), dtype=np.float32)
    w = rng.standard_normal((768, 3072), dtype=np.float32)
    out.append(
        Case(
            "128x768 -> 3072 (constant weights)",
            2 * 128 * 768 * 3072,
            {"x": x},
            {"w": w},
            lambda g, o: g.matmul(o["x"], o["w"]),
            [helper.make_node("MatMul", ["x", "w"], ["y"])],
            [128, 3072],
        )
    )

    x = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
    w = (rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.1).astype(np.float32)
    bias = rng.standard_normal(64, dtype=np.float32)
    conv_flops = 2 * 56 * 56 * 64 * 64 * 9
    out.append(
        Case(
            "conv 3x3 64->64 56x56 (nchw)",
            conv_flops,
            {"x": x},
            {"w": w, "bias": bias},
            lambda g, o: g.conv2d(o["x"], o["w"], bias=o["bias"], padding=[1, 1, 1, 1]),
            [helper.make_node("Conv", ["x", "w", "bias"], ["y"], pads=[1, 1, 1, 1])],
            [1, 64, 56, 56],
        )
    )

    x = rng.standard_normal((1, 144, 56, 56), dtype=np.float32)
    w = rng.standard_normal((144, 1, 3, 3), dtype=np.float32)
    bias = rng.standard_normal(144, dtype=np.float32)
    out.append(
        Case(
            "depthwise 3x3 C=144 56x56 (nchw)",
            2 * 56 * 56 * 144 * 9,
            {"x": x},
            {"w": w, "bias": bias},
            lambda g, o: g.conv2d(o["x"], o["w"], bias=o["bias"], padding=[1, 1, 1, 1], groups=144),
            [helper.make_node("Conv", ["x", "w", "bias"], ["y"], pads=[1, 1, 1, 1], group=144)],
            [1, 144, 56, 56],
        )
    )

    n = 1 << 20
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out.append(
        Case(
            "add 1M",
            n,
            {"a": a, "b": b},
            {},
            lambda g, o: g.add(o["a"], o["b"]),
            [helper.make_node("Add", ["a", "b"], ["y"])],
            [n],
        )
    )
    tiny = rng.standard_normal(16, dtype=np.float32)
    out.append(
        Case(
            "relu 16 (dispatch overhead of a 1-op graph)",
            16,
            {"a": tiny},
            {},
            lambda g, o: g.relu(o["a"]),
            [helper.make_node("Relu", ["a"], ["y"])],
            [16],
        )
    )
    out.append(
        Case(
            "relu 1M",
            n,
            {"a": a},
            {},
            lambda g, o: g.relu(o["a"]),
            [helper.make_node("Relu", ["a"], ["y"])],
            [n],
        )
    )

    # PP-OCRv4 det head: two 2x2 stride-2 transposed convolutions, 160 -> 320 -> 640.
    for cin, cout, size in ((24, 24, 160), (24, 1, 320)):
        x = rng.standard_normal((1, cin, size, size), dtype=np.float32)
        w = (rng.standard_normal((cin, cout, 2, 2), dtype=np.float32) * 0.2).astype(np.float32)
        out.append(
            Case(
                f"convTranspose 2x2 s2 {cin}->{cout} {size}x{size} (nchw)",
                2 * cin * cout * 4 * size * size,
                {"x": x},
                {"w": w},
                lambda g, o: g.conv_transpose2d(o["x"], o["w"], strides=[2, 2]),
                [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])],
                [1, cout, 2 * size, 2 * size],
            )
        )
    x = rng.standard_normal((1, 64, 28, 28), dtype=np.float32)
    w = (rng.standard_normal((64, 32, 3, 3), dtype=np.float32) * 0.1).astype(np.float32)
    out.append(
        Case(
            "convTranspose 3x3 s2 64->32 28x28 (nchw)",
            2 * 64 * 32 * 9 * 28 * 28,
            {"x": x},
            {"w": w},
            lambda g, o: g.conv_transpose2d(
                o["x"], o["w"], strides=[2, 2], padding=[1, 1, 1, 1], output_padding=[1, 1]
            ),
            [
                helper.make_node(
                    "ConvTranspose",
                    ["x", "w"],
                    ["y"],
                    strides=[2, 2],
                    pads=[1, 1, 1, 1],
                    output_padding=[1, 1],
                )
            ],
            [1, 32, 56, 56],
        )
    )

    # Resampling (det: nearest x2 / x4 / x8 of 96 and 24 channels); "flops" = output elements.
    for c, size, scale, mode in (
        (96, 40, 2, "nearest"),
        (24, 20, 8, "nearest"),
        (24, 80, 2, "nearest"),
        (24, 80, 2, "linear"),
    ):
        x = rng.standard_normal((1, c, size, size), dtype=np.float32)
        scales = np.array([1, 1, scale, scale], dtype=np.float32)
        ours_mode = "nearest-neighbor" if mode == "nearest" else "linear"
        onnx_attrs = (
            {
                "mode": "nearest",
                "coordinate_transformation_mode": "asymmetric",
                "nearest_mode": "floor",
            }
            if mode == "nearest"
            else {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
        )
        out.append(
            Case(
                f"resample2d {mode} x{scale} C={c} {size}x{size} (nchw)",
                c * (size * scale) ** 2,
                {"x": x},
                {"scales": scales},
                lambda g, o, m=ours_mode, s=float(scale): g.resample2d(
                    o["x"], mode=m, scales=[s, s]
                ),
                [helper.make_node("Resize", ["x", "", "scales"], ["y"], **onnx_attrs)],
                [1, c, size * scale, size * scale],
            )
        )

    # Normalizations; "flops" = elements.
    x = rng.standard_normal((1, 24, 160, 160), dtype=np.float32)
    stats = {
        "mean": rng.standard_normal(24, dtype=np.float32),
        "var": rng.uniform(0.5, 2, 24).astype(np.float32),
        "scale": rng.standard_normal(24, dtype=np.float32),
        "bias": rng.standard_normal(24, dtype=np.float32),
    }
    out.append(
        Case(
            "batchNormalization C=24 160x160 (nchw)",
            x.size,
            {"x": x},
            stats,
            lambda g, o: g.batch_normalization(
                o["x"], o["mean"], o["var"], scale=o["scale"], bias=o["bias"]
            ),
            [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"])],
            list(x.shape),
        )
    )
    x = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
    out.append(
        Case(
            "instanceNormalization C=64 56x56 (nchw)",
            x.size,
            {"x": x},
            {
                "scale": rng.standard_normal(64, dtype=np.float32),
                "bias": rng.standard_normal(64, dtype=np.float32),
            },
            lambda g, o: g.instance_normalization(o["x"], scale=o["scale"], bias=o["bias"]),
            [helper.make_node("InstanceNormalization", ["x", "scale", "bias"], ["y"])],
            list(x.shape),
        )
    )
    x = rng.standard_normal((1, 320, 120), dtype=np.float32)
    out.append(
        Case(
            "layerNormalization 320x120 (last axis)",
            x.size,
            {"x": x},
            {
                "scale": rng.standard_normal(120, dtype=np.float32),
                "bias": rng.standard_normal(120, dtype=np.float32),
            },
            lambda g, o: g.layer_normalization(o["x"], axes=[2], scale=o["scale"], bias=o["bias"]),
            [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1)],
            list(x.shape),
        )
    )

    # Data movement and reductions; "flops" = elements.
    x = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
    out.append(
        Case(
            "transpose nchw->nhwc 64x56x56",
            x.size,
            {"x": x},
            {},
            lambda g, o: g.transpose(o["x"], permutation=[0, 2, 3, 1]),
            [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])],
            [1, 56, 56, 64],
        )
    )
    x = rng.standard_normal((1, 320, 120), dtype=np.float32)
    out.append(
        Case(
            "reduceMean 320x120 (last axis)",
            x.size,
            {"x": x},
            {},
            lambda g, o: g.reduce_mean(o["x"], axes=[2], keep_dimensions=True),
            [helper.make_node("ReduceMean", ["x"], ["y"], axes=[2], keepdims=1)],
            [1, 320, 1],
        )
    )

    # Few-channel convolutions like det's and rec's.
    for cin, cout, size, groups, k in (
        (24, 24, 160, 1, 3),
        (96, 96, 40, 96, 5),
        (48, 48, 80, 48, 3),
    ):
        x = rng.standard_normal((1, cin, size, size), dtype=np.float32)
        w = (rng.standard_normal((cout, cin // groups, k, k), dtype=np.float32) * 0.1).astype(
            np.float32
        )
        bias = rng.standard_normal(cout, dtype=np.float32)
        pad = k // 2
        kind = "depthwise" if groups > 1 else "conv"
        out.append(
            Case(
                f"{kind} {k}x{k} {cin}->{cout} {size}x{size} (nchw)",
                2 * size * size * cout * (cin // groups) * k * k,
                {"x": x},
                {"w": w, "bias": bias},
                lambda g, o, p=pad, gr=groups: g.conv2d(
                    o["x"], o["w"], bias=o["bias"], padding=[p] * 4, groups=gr
                ),
                [helper.make_node("Conv", ["x", "w", "bias"], ["y"], pads=[pad] * 4, group=groups)],
                [1, cout, size, size],
            )
        )
    # ddddocr's recogniser (common.onnx): the classifier Gemm over its 32 time steps with a
    # constant 8210 x 1024 B (transB), and its bidirectional LSTM (hidden 512, 32 steps).
    a = rng.standard_normal((32, 1024), dtype=np.float32)
    w = (rng.standard_normal((8210, 1024)) * 0.03).astype(np.float32)
    bias = rng.standard_normal(8210, dtype=np.float32)
    out.append(
        Case(
            "gemm 32x1024 -> 8210 (constant B^T, bias; ddddocr)",
            2 * 32 * 1024 * 8210,
            {"a": a},
            {"w": w, "bias": bias},
            lambda g, o: g.gemm(o["a"], o["w"], c=o["bias"], b_transpose=True),
            [helper.make_node("Gemm", ["a", "w", "bias"], ["y"], transB=1)],
            [32, 8210],
        )
    )
    steps, hid, inp = 32, 512, 512
    x = rng.standard_normal((steps, 1, inp), dtype=np.float32)
    w = (rng.standard_normal((2, 4 * hid, inp)) * 0.05).astype(np.float32)
    r = (rng.standard_normal((2, 4 * hid, hid)) * 0.05).astype(np.float32)
    bias = (rng.standard_normal((2, 8 * hid)) * 0.1).astype(np.float32)
    out.append(
        Case(
            "lstm bidirectional 32 steps hidden 512 input 512 (ddddocr)",
            2 * 2 * steps * 4 * hid * (inp + hid),
            {"x": x},
            {
                "w": w,
                "r": r,
                "wb": bias[:, : 4 * hid].copy(),
                "rb": bias[:, 4 * hid :].copy(),
                "b": bias,
            },
            lambda g, o: g.lstm(
                o["x"],
                o["w"],
                o["r"],
                steps,
                hid,
                bias=o["wb"],
                recurrent_bias=o["rb"],
                direction="both",
                layout="iofg",
                return_sequence=True,
            )[2],
            [
                helper.make_node(
                    "LSTM", ["x", "w", "r", "b"], ["y"], direction="bidirectional", hidden_size=hid
                )
            ],
            [steps, 2, 1, hid],
        )
    )
    return out


def nhwc_cases():
    """Our NHWC layouts of the two convolutions, timed against ORT's NCHW models."""
    rng = _rng()
    out = []
    x = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
    w = (rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.1).astype(np.float32)
    bias = rng.standard_normal(64, dtype=np.float32)
    out.append(
        (
            Case(
                "conv 3x3 64->64 56x56 (ours nhwc/ohwi)",
                2 * 56 * 56 * 64 * 64 * 9,
                {"x": x},
                {"w": w, "bias": bias},
                None,
                [helper.make_node("Conv", ["x", "w", "bias"], ["y"], pads=[1, 1, 1, 1])],
                [1, 64, 56, 56],
            ),
            {"x": x.transpose(0, 2, 3, 1).copy()},
            {"w": w.transpose(0, 2, 3, 1).copy(), "bias": bias},
            lambda g, o: g.conv2d(
                o["x"],
                o["w"],
                bias=o["bias"],
                padding=[1, 1, 1, 1],
                input_layout="nhwc",
                filter_layout="ohwi",
            ),
            lambda y: y.transpose(0, 3, 1, 2),
        )
    )
    x = rng.standard_normal((1, 144, 56, 56), dtype=np.float32)
    w = rng.standard_normal((144, 1, 3, 3), dtype=np.float32)
    bias = rng.standard_normal(144, dtype=np.float32)
    out.append(
        (
            Case(
                "depthwise 3x3 C=144 56x56 (ours nhwc/ohwi)",
                2 * 56 * 56 * 144 * 9,
                {"x": x},
                {"w": w, "bias": bias},
                None,
                [helper.make_node("Conv", ["x", "w", "bias"], ["y"], pads=[1, 1, 1, 1], group=144)],
                [1, 144, 56, 56],
            ),
            {"x": x.transpose(0, 2, 3, 1).copy()},
            {"w": w.transpose(0, 2, 3, 1).copy(), "bias": bias},
            lambda g, o: g.conv2d(
                o["x"],
                o["w"],
                bias=o["bias"],
                padding=[1, 1, 1, 1],
                groups=144,
                input_layout="nhwc",
                filter_layout="ohwi",
            ),
            lambda y: y.transpose(0, 3, 1, 2),
        )
    )
    return out


class Ours:
    def __init__(self, context, inputs, constants, build):
        builder = context.create_graph_builder()
        ops = {k: builder.input(k, list(v.shape), "float32") for k, v in inputs.items()}
        ops.update({k: builder.constant(v) for k, v in constants.items()})
        self.graph = builder.build({"y": build(builder, ops)})
        self.context = context
        self.inputs = {}
        for k, v in inputs.items():
            t = context.create_tensor(list(v.shape), "float32", writable=True)
            context.write_tensor(t, v)
            self.inputs[k] = t
        y = context.compute(self.graph, inputs)["y"]
        self.output = context.create_tensor(list(y.shape), "float32", readable=True)

    def run(self):
        self.context.dispatch(self.graph, self.inputs, {"y": self.output})

    def result(self):
        self.run()
        return self.context.read_tensor(self.output)


class Ort:
    def __init__(self, case, threads, spin=False):
        inputs = [
            helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
            for k, v in case.inputs.items()
        ]
        output = helper.make_tensor_value_info("y", TensorProto.FLOAT, case.output_shape)
        inits = [numpy_helper.from_array(v, k) for k, v in case.constants.items()]
        graph = helper.make_graph(case.onnx_nodes, "bench", inputs, [output], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if not spin:
            # ORT's idle workers otherwise keep spinning after each run, on the cores our
            # interleaved run is about to use.
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            model.SerializeToString(), so, providers=["CPUExecutionProvider"]
        )
        self.binding = self.session.io_binding()
        self.values = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in case.inputs.items()}
        for k, v in self.values.items():
            self.binding.bind_ortvalue_input(k, v)
        self.out = ort.OrtValue.ortvalue_from_shape_and_type(case.output_shape, np.float32)
        self.binding.bind_ortvalue_output("y", self.out)

    def run(self):
        self.session.run_with_iobinding(self.binding)

    def result(self):
        self.run()
        return self.out.numpy()


def _timed(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def measure(ours, theirs, rounds):
    """Interleaved medians (seconds per call); each sample batches calls to ~5 ms."""
    for _ in range(3):  # warm up both (plans, caches, thread pools)
        ours.run()
        theirs.run()
    single = min(_timed(ours.run, 1), _timed(theirs.run, 1))
    calls = max(1, int(0.005 / max(single, 1e-7)))
    a, b = [], []
    for _ in range(rounds):
        a.append(_timed(ours.run, calls))
        b.append(_timed(theirs.run, calls))
    return statistics.median(a), statistics.median(b)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument(
        "--ort-spinning",
        action="store_true",
        help="leave ORT's worker spinning on (its idle workers then hold the cores during our "
        "interleaved runs, which halves our multi-threaded speed)",
    )
    args = parser.parse_args()

    rows = []
    for threads in args.threads:
        # Our contexts read WEBNN_NUM_THREADS when they are created.
        os.environ["WEBNN_NUM_THREADS"] = str(threads)
        import webnn

        context = webnn.ML().create_context(accelerated=False, backend="cpu")
        plan = [(c, c.inputs, c.constants, c.build_webnn, None) for c in cases()]
        plan += nhwc_cases()
        for case, our_inputs, our_constants, build, to_nchw in plan:
            if args.filter not in case.name:
                continue
            ours = Ours(context, our_inputs, our_constants, build)
            theirs = Ort(case, threads, spin=args.ort_spinning)
            got, want = ours.result(), theirs.result()
            if to_nchw is not None:
                got = to_nchw(got)
            scale = np.abs(want).max() or 1.0
            err = float(np.abs(got - want).max() / scale)
            if not err <= case.rtol:
                raise SystemExit(f"{case.name}: outputs differ (max error {err:.2e} of max |y|)")
            t_ours, t_ort = measure(ours, theirs, args.rounds)
            rows.append((case, threads, t_ours, t_ort))
            print(
                f"{case.name:45s} {threads}T  ours {t_ours * 1e3:9.4f} ms  "
                f"ORT {t_ort * 1e3:9.4f} ms  ratio {t_ours / t_ort:5.2f}",
                flush=True,
            )

    spinning = "on" if args.ort_spinning else "off"
    header = f"ONNX Runtime {ort.__version__} (intra-op spinning {spinning}); medians of "
    lines = [
        header + f"{args.rounds} interleaved samples.",
        "",
        "| case | threads | webnn cpu (ms) | ORT (ms) | ours/ORT | webnn GFLOP/s | ORT GFLOP/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for case, threads, t_ours, t_ort in rows:
        lines.append(
            f"| {case.name} | {threads} | {t_ours * 1e3:.4f} | {t_ort * 1e3:.4f} | "
            f"{t_ours / t_ort:.2f} | {case.flops / t_ours / 1e9:.1f} | "
            f"{case.flops / t_ort / 1e9:.1f} |"
        )
    table = "\n".join(lines)
    print()
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
