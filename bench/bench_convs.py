"""Every convolution of the OCR models, timed alone on webnn's cpu backend and on ONNX Runtime.

The Conv / ConvTranspose nodes of PP-OCRv4 det and rec (and the cls model) are collected from
the ONNX files with their shapes (onnx shape inference at the benchmark input size) and their
real weights; identical configurations are timed once and counted with their multiplicity.
Each is built as a one-node WebNN graph in the layout our layout assignment gives it (NHWC
activations, the ONNX filter as is) and as a one-node ONNX model for ORT (NCHW), run
interleaved in one process with the same thread count. GFLOP/s are also shown as a share of the
FMA peak of one core measured by bench/fma_peak.c (built here with cc; --peak overrides), run
between the cases since the shared machine's speed drifts.

    python bench/bench_convs.py --models det rec --threads 1 [--filter depthwise]
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import statistics
import time

import onnx
from bench_ops import Case, Ort
from bench_ops import Ours as OursGraph
from models import model_cases
from onnx import helper, numpy_helper, shape_inference

_HERE = os.path.dirname(os.path.abspath(__file__))


def _peak_tool():
    """Path of the built fma_peak binary, or None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        return None
    out = os.path.join(tempfile.gettempdir(), f"webnn_fma_peak_{os.getuid()}")
    src = os.path.join(_HERE, "fma_peak.c")
    subprocess.run([cc, "-O2", "-mavx2", "-mfma", src, "-o", out], check=True)
    return out


def _measure_peak(tool, samples=3):
    runs = [
        subprocess.run([tool], check=True, capture_output=True, text=True) for _ in range(samples)
    ]
    return max(float(r.stdout.split()[0]) for r in runs)


def _timed(fn, calls, clock):
    start = clock()
    for _ in range(calls):
        fn()
    return (clock() - start) / calls


def measure(ours, theirs, rounds, clock):
    """Interleaved medians (seconds per call); each sample batches calls to ~5 ms."""
    for _ in range(3):  # warm up both (plans, caches, thread pools)
        ours.run()
        theirs.run()
    single = min(_timed(ours.run, 1, clock), _timed(theirs.run, 1, clock))
    calls = max(1, int(0.005 / max(single, 1e-7)))
    a, b = [], []
    for _ in range(rounds):
        a.append(_timed(ours.run, calls, clock))
        b.append(_timed(theirs.run, calls, clock))
    return statistics.median(a), statistics.median(b)


def _same_pads(x, y, k, attrs, mode):
    """Explicit ONNX pads [begins..., ends...] of a SAME_UPPER / SAME_LOWER convolution."""
    strides, dil = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    total = [
        max(0, (o - 1) * s + (kk - 1) * d + 1 - i) for i, o, kk, s, d in zip(x, y, k, strides, dil)
    ]
    small = [t // 2 for t in total]
    big = [t - t // 2 for t in total]
    return small + big if mode == "SAME_UPPER" else big + small


def collect(path, feed):
    """[(key, count, node, weights {name: array}, x shape, y shape)] of a model's convs."""
    model = onnx.load(path)
    for i in model.graph.input:
        if i.name in feed:
            dims = i.type.tensor_type.shape.dim
            for k, v in enumerate(feed[i.name].shape):
                dims[k].ClearField("dim_param")
                dims[k].dim_value = v
    model = shape_inference.infer_shapes(model)
    g = model.graph
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in list(g.value_info) + list(g.input) + list(g.output)
    }
    values = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:  # weights stored as Constant nodes
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            values[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    found = collections.OrderedDict()
    for n in g.node:
        if n.op_type not in ("Conv", "ConvTranspose"):
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        x, y = shapes.get(n.input[0], []), shapes.get(n.output[0], [])
        w = values.get(n.input[1])
        if w is None or len(x) != 4 or len(y) != 4 or min(x + y) <= 0:
            continue  # a filter computed at run time, or shapes inference could not resolve
        auto_pad = attrs.pop("auto_pad", b"NOTSET")
        auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
        if auto_pad in ("SAME_UPPER", "SAME_LOWER") and n.op_type == "Conv":
            attrs["pads"] = _same_pads(x[2:], y[2:], w.shape[2:], attrs, auto_pad)
        elif auto_pad not in ("NOTSET", "VALID"):
            continue
        key = (
            n.op_type,
            tuple(x),
            tuple(y),
            w.shape,
            attrs.get("group", 1),
            tuple(attrs.get("strides", [1, 1])),
            tuple(attrs.get("pads", [0, 0, 0, 0])),
            tuple(attrs.get("dilations", [1, 1])),
        )
        if key in found:
            found[key][1] += 1
            continue
        bias = values[n.input[2]] if len(n.input) > 2 and n.input[2] else None
        found[key] = [key, 1, attrs, w, bias]
    return list(found.values())


def conv_models(names):
    """name -> (model path or proto, feed): the OCR models of bench/models.py, else wheels."""
    sys.path.insert(0, os.path.join(_HERE, "..", "tests", "python"))
    import wheel_models

    wheels = {case.name: case for case in wheel_models.CASES}
    ocr = [n for n in names if n not in wheels]
    found = {name: (path, feed) for name, (path, feed, _) in model_cases(ocr).items()}
    for name in names:
        if name in wheels and wheels[name].path() is not None:
            found[name] = (str(wheels[name].path()), wheels[name].make_feeds())
    return found


def describe(key):
    op, x, y, w, groups, strides, _, dil = key
    kind = "convT" if op == "ConvTranspose" else "conv"
    if op == "Conv" and groups == x[1] and w[1] == 1:
        kind = "dw"
    elif groups > 1:
        kind += f" g{groups}"
    s = f" s{strides[0]}x{strides[1]}" if strides != (1, 1) else ""
    d = f" d{dil[0]}" if dil != (1, 1) else ""
    return f"{kind} {w[2]}x{w[3]}{s}{d} {x[1]}->{y[1]} {y[2]}x{y[3]}"


def flops(key):
    op, x, y, w, *_ = key
    if op == "Conv":
        return 2 * y[0] * y[1] * y[2] * y[3] * w[1] * w[2] * w[3]
    return 2 * x[0] * x[1] * x[2] * x[3] * w[1] * w[2] * w[3]


def build_case(entry, rng):
    """(bench_ops Case for ORT, our inputs, our constants, builder function, NHWC->NCHW)."""
    key, _, attrs, w, bias = entry
    op, x_shape, y_shape, _, groups, strides, pads, dil = key
    x = rng.standard_normal(x_shape, dtype=np.float32)
    constants = {"w": w.astype(np.float32)}
    if bias is not None:
        constants["bias"] = bias.astype(np.float32)
    inputs = ["x", "w"] + (["bias"] if bias is not None else [])
    onnx_attrs = dict(attrs)
    node = helper.make_node(op, inputs, ["y"], **onnx_attrs)
    case = Case(describe(key), flops(key), {"x": x}, constants, None, [node], list(y_shape))
    options = {
        "strides": list(strides),
        "dilations": list(dil),
        "padding": [pads[0], pads[2], pads[1], pads[3]],
        "groups": groups,
        "input_layout": "nhwc",
    }
    if op == "ConvTranspose":
        options["filter_layout"] = "iohw"
        if "output_padding" in attrs:
            options["output_padding"] = list(attrs["output_padding"])
        options["output_sizes"] = list(y_shape[2:])

    def build(g, o):
        fn = g.conv2d if op == "Conv" else g.conv_transpose2d
        return fn(o["x"], o["w"], bias=o.get("bias"), **options)

    our_inputs = {"x": x.transpose(0, 2, 3, 1).copy()}
    return case, our_inputs, constants, build, lambda y: y.transpose(0, 3, 1, 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        nargs="+",
        default=["det", "rec"],
        help="det, rec, cls or any installed case of tests/python/wheel_models.py",
    )
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument("--peak", type=float, help="one core's FMA peak in GFLOP/s")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by the calling thread's CPU time (1 thread only: both engines then run on "
        "it), so that time the shared machine gives to other processes is not counted",
    )
    parser.add_argument("--min-mflop", type=float, default=1.0, help="skip smaller convs")
    args = parser.parse_args()
    tool = None if args.peak else _peak_tool()
    if args.cpu_time and args.threads != [1]:
        raise SystemExit("--cpu-time measures one thread: use it with --threads 1")
    clock = time.thread_time if args.cpu_time else time.perf_counter
    rng = np.random.default_rng(0)
    best_peak = _measure_peak(tool, 5) if tool else 0.0
    rows = []
    for threads in args.threads:
        os.environ["WEBNN_NUM_THREADS"] = str(threads)
        import webnn

        context = webnn.ML().create_context(accelerated=False, backend="cpu")
        for name, (path, feed) in conv_models(args.models).items():
            for entry in collect(path, feed):
                key, count = entry[0], entry[1]
                if flops(key) < args.min_mflop * 1e6 or args.filter not in describe(key):
                    continue
                case, our_in, our_const, build, to_nchw = build_case(entry, rng)
                ours = OursGraph(context, our_in, our_const, build)
                theirs = Ort(case, threads)
                got, want = to_nchw(ours.result()), theirs.result()
                err = float(np.abs(got - want).max() / (np.abs(want).max() or 1.0))
                if not err <= 1e-4:
                    raise SystemExit(f"{name} {case.name}: outputs differ (max error {err:.1e})")
                if not args.peak:  # the best seen so far: the machine is shared
                    best_peak = max(best_peak, _measure_peak(tool, 1))
                peak = args.peak or best_peak
                t_ours, t_ort = measure(ours, theirs, args.rounds, clock)
                g_ours, g_ort = case.flops / t_ours / 1e9, case.flops / t_ort / 1e9
                row = (
                    name.split()[1] if " " in name else name,
                    case.name,
                    count,
                    threads,
                    t_ours,
                    t_ort,
                    g_ours,
                    g_ort,
                )
                rows.append(row + (100 * g_ours / (peak * threads), peak))
                print(
                    f"{row[0]:6s} {case.name:34s} x{count} {threads}T ours {t_ours * 1e3:7.3f} ms"
                    f" ORT {t_ort * 1e3:7.3f} ms  {g_ours:6.1f} vs {g_ort:6.1f} GFLOP/s"
                    f"  {rows[-1][8]:5.1f}% of {peak:.0f}  ours/ORT {t_ours / t_ort:5.2f}",
                    flush=True,
                )
    print()
    print(f"\nFMA peak of one core: {args.peak or best_peak:.1f} GFLOP/s")
    print(
        "| model | conv (NCHW shapes) | count | threads | ours ms | ORT ms | ours GFLOP/s "
        "| ORT GFLOP/s | ours % peak | ours/ORT |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4] * 1e3:.3f} | {r[5] * 1e3:.3f} | "
            f"{r[6]:.1f} | {r[7]:.1f} | {r[8]:.0f}% | {r[4] / r[5]:.2f} |"
        )
    for threads in args.threads:
        sel = [r for r in rows if r[3] == threads]
        ours_t = sum(r[4] * r[2] for r in sel)
        ort_t = sum(r[5] * r[2] for r in sel)
        dw = [r for r in sel if r[1].startswith("dw")]
        print(
            f"\n{threads}T all convs: ours {ours_t * 1e3:.2f} ms, ORT {ort_t * 1e3:.2f} ms "
            f"(ours/ORT {ours_t / ort_t:.2f})"
        )
        if dw:
            dw_ours = sum(r[4] * r[2] for r in dw)
            dw_ort = sum(r[5] * r[2] for r in dw)
            print(
                f"{threads}T depthwise: ours {dw_ours * 1e3:.2f} ms, ORT {dw_ort * 1e3:.2f} ms "
                f"(ORT/ours speed-up {dw_ort / dw_ours:.2f})"
            )


if __name__ == "__main__":
    main()
