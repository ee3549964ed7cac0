"""Where a model loses to ONNX Runtime: our per-op time next to ORT's own profiler, per op kind.

    WEBNN_NUM_THREADS=1 python bench/profile_vs_ort.py magika orinet [--runs 20] [--threads 1]

Models are the cases of tests/python/wheel_models.py (installed wheels). Ours is profiled with
MLGraph.set_profiling, ORT with SessionOptions.enable_profiling (node events only); both run
bound tensors on the same thread count. ONNX op types and WebNN ops do not map one to one
(ORT fuses Conv+Relu, we fuse conv2d+add+clamp), so read the two tables side by side: the slowest
nodes of each, with shapes, show which kernels to look at.
"""

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import wheel_models as wm
from models import Ours, model_cases
from profile_models import profiled


def ort_profile(path, feeds, threads, runs, top):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    for _ in range(runs + 1):
        session.run(None, feeds)
    with open(session.end_profiling()) as f:
        trace = json.load(f)
    nodes = [e for e in trace if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    by_op = defaultdict(lambda: [0.0, 0])
    per_node = defaultdict(float)
    shapes = {}
    for e in nodes:
        op = e["args"].get("op_name", "?")
        by_op[op][0] += e["dur"] / 1e3 / (runs + 1)
        by_op[op][1] += 1
        name = e["name"][: -len("_kernel_time")]
        per_node[(op, name)] += e["dur"] / 1e3 / (runs + 1)
        out = e["args"].get("output_type_shape", [])
        shapes[name] = ",".join(
            "x".join(str(d) for d in next(iter(s.values()))) for s in out if isinstance(s, dict)
        )
    total = sum(ms for ms, _ in by_op.values())
    lines = [f"ORT: {total:.3f} ms per run in node kernels"]
    for op, (ms, count) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"{op:<28}{count // (runs + 1):>6}{ms:>10.3f}{ms / total:>8.1%}")
    lines.append(f"slowest {top} ORT nodes:")
    for (op, name), ms in sorted(per_node.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {ms:8.3f} ms  {op:<24} [{shapes.get(name, '')}] {name}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "names", nargs="+", help="wheel_models case names or bench/models.py names (det, rec, ...)"
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    os.environ["WEBNN_NUM_THREADS"] = str(args.threads)
    cases = {case.name: case for case in wm.CASES}
    for name in args.names:
        if name in cases:
            path, consts = cases[name].path(), {}
            if path is None:
                print(f"== {name}: not installed")
                continue
            feeds = cases[name].make_feeds()
        else:  # one of bench/models.py's models (det, rec, cls, minilm, ...)
            ((path, feeds, consts),) = model_cases([name]).values()
        if not isinstance(path, (str, os.PathLike)):
            print(f"== {name}: built in memory; ORT's profile needs a file")
            continue
        table = profiled(Ours(path, feeds, consts), args.runs, args.top)
        print(f"== {name} (threads: {args.threads})")
        print(table)
        print(ort_profile(path, feeds, args.threads, args.runs, args.top))
        print()


if __name__ == "__main__":
    main()
