"""The `webnn` command: inspect, run and draw graph files, list supported operations.

webnn info FILE                       inputs, outputs, op histogram, parameters, FLOPs,
                                      compiler passes' effect and memory-plan arena size
webnn run FILE -i name=x.npy ... -o DIR   run a graph on .npy inputs, write .npy outputs
          [--profile RUNS]            and time every node over RUNS more dispatches
webnn ops                             the support table of the chosen backend
webnn viz FILE -o graph.svg|graph.dot picture via graphviz, or DOT text
webnn convert MODEL.onnx -o MODEL.webnn [--dim name=value] [--shape input=1,3,224,224]
                                      import an ONNX model and write it as a graph file
"""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import webnn
from webnn.profile import profile_table


def _context(args):
    return webnn.ML().create_context(accelerated=False, backend=args.backend)


def _shape_text(shape):
    dims = [d if isinstance(d, int) else f"{d['name']}<={d['maxSize']}" for d in shape]
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _human(count):
    for unit in ("", "K", "M", "G", "T"):
        if abs(count) < 1000:
            return f"{count:.4g}{unit}"
        count /= 1000
    return f"{count:.4g}P"


def cmd_info(args):
    graph = _context(args).load_graph(args.file)
    info = graph._describe()
    stats = info["stats"]
    print(f"graph: {args.file}")
    print("inputs:")
    for name, desc in graph.input_descriptors.items():
        print(f"  {name}: {desc['data_type']} {_shape_text(desc['shape'])}")
    print("outputs:")
    for name, desc in graph.output_descriptors.items():
        print(f"  {name}: {desc['data_type']} {_shape_text(desc['shape'])}")
    print(f"operations: {len(info['nodes'])}")
    for op, count in sorted(stats["op_histogram"].items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {op:<24} {count}")
    print(f"parameters: {stats['parameter_count']} ({_human(stats['parameter_bytes'])}B)")
    print(f"FLOPs (estimate): {_human(stats['flops'])}")
    compiled = graph.compile_stats
    passes = ", ".join(f"{name} {count}" for name, count in compiled["passes"].items())
    print(
        f"compiled: {compiled['nodes_before']} -> "
        f"{compiled['nodes_after']} operations ({passes or 'no passes'})"
    )
    if compiled["plans"]:
        print(
            f"memory plan: arena {_human(compiled['arena_bytes'])}B for intermediates "
            f"of {_human(compiled['unshared_bytes'])}B"
        )
    return 0


def _parse_feed(text):
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise SystemExit(f"webnn run: -i expects name=file.npy (got {text!r})")
    return name, path


def cmd_run(args):
    context = _context(args)
    graph = context.load_graph(args.file)
    feeds = dict(_parse_feed(item) for item in args.input)
    wanted = graph.input_descriptors
    missing = sorted(set(wanted) - set(feeds))
    unknown = sorted(set(feeds) - set(wanted))
    if missing or unknown:
        raise SystemExit(f"webnn run: missing inputs {missing}, unknown inputs {unknown}")
    arrays = {name: np.load(path, allow_pickle=False) for name, path in feeds.items()}
    inputs = {}
    for name, array in arrays.items():
        tensor = context.create_tensor(list(array.shape), wanted[name]["data_type"], writable=True)
        context.write_tensor(tensor, array)
        inputs[name] = tensor
    shapes = graph._output_shapes({name: list(a.shape) for name, a in arrays.items()})
    outputs = {
        name: context.create_tensor(shapes[name], desc["data_type"], readable=True)
        for name, desc in graph.output_descriptors.items()
    }
    context.dispatch(graph, inputs, outputs)
    if args.profile:
        # The first dispatch above built the plan; time only the later, steady-state ones.
        graph.set_profiling(True)
        for _ in range(args.profile):
            context.dispatch(graph, inputs, outputs)
        print(profile_table(graph.profile))
    out_dir = Path(args.output)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, tensor in outputs.items():
        result = context.read_tensor(tensor)
        path = out_dir / f"{name}.npy"
        np.save(path, result)
        print(f"{name}: {result.dtype} {list(result.shape)} -> {path}")
    return 0


def cmd_ops(args):
    limits = _context(args).op_support_limits()
    print(f"backend: {args.backend}; preferred input layout: {limits['preferredInputLayout']}")
    for op, entry in limits.items():
        if not isinstance(entry, dict) or "dataTypes" in entry:
            continue
        print(op)
        for operand, limit in entry.items():
            ranks = limit["rankRange"]
            print(
                f"  {operand:<20} rank {ranks['min']}-{ranks['max']}  "
                + ", ".join(limit["dataTypes"])
            )
    return 0


def _dot_label(*lines):
    """DOT label text: each line escaped, joined by DOT's centred line break."""
    return "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)


def to_dot(graph):
    """DOT text: one box per operation, ellipses for inputs/constants, edges with shapes."""
    info = graph._describe()
    operands = {o["id"]: o for o in info["operands"]}
    output_names = {oid: name for name, oid in info["outputs"].items()}
    lines = ["digraph webnn {", "  rankdir=TB;", '  node [fontname="Helvetica"];']
    for o in info["operands"]:
        if o["kind"] == "input":
            label = _dot_label(o["name"], f"{o['data_type']} {_shape_text(o['shape'])}")
            lines.append(f'  v{o["id"]} [shape=ellipse, label="{label}"];')
        elif o["kind"] == "constant":
            label = _dot_label("constant", f"{o['data_type']} {_shape_text(o['shape'])}")
            lines.append(f'  v{o["id"]} [shape=note, label="{label}"];')
    producer = {}
    for index, node in enumerate(info["nodes"]):
        label = _dot_label(node["op"], *([f"'{node['label']}'"] if node["label"] else []))
        lines.append(f'  n{index} [shape=box, style=rounded, label="{label}"];')
        for oid in node["outputs"]:
            producer[oid] = f"n{index}"
    for index, node in enumerate(info["nodes"]):
        for oid in node["inputs"]:
            source = producer.get(oid, f"v{oid}")
            o = operands[oid]
            edge = _dot_label(f"{o['data_type']} {_shape_text(o['shape'])}")
            lines.append(f'  {source} -> n{index} [label="{edge}", fontsize=9];')
    for oid, name in output_names.items():
        o = operands[oid]
        label = f"{name}\\n{o['data_type']} {_shape_text(o['shape'])}"
        lines.append(
            f'  out_{oid}_{name} [shape=ellipse, style=bold, label="{_dot_label(label)}"];'
        )
        lines.append(f"  {producer[oid]} -> out_{oid}_{name};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def cmd_viz(args):
    graph = _context(args).load_graph(args.file)
    dot = to_dot(graph)
    out = Path(args.output)
    if out.suffix.lower() == ".dot":
        out.write_text(dot)
        print(f"wrote DOT to {out}")
        return 0
    fmt = out.suffix.lower().lstrip(".") or "svg"
    dot_tool = shutil.which("dot")
    if dot_tool is None:
        fallback = out.with_suffix(".dot")
        fallback.write_text(dot)
        print(f"graphviz `dot` is not installed: wrote DOT text to {fallback} instead of {out}")
        return 0
    subprocess.run([dot_tool, f"-T{fmt}", "-o", str(out)], input=dot, text=True, check=True)
    print(f"wrote {fmt.upper()} to {out}")
    return 0


def _parse_dim(text):
    name, sep, value = text.partition("=")
    if not sep or not name or not value.isdigit():
        raise SystemExit(f"webnn convert: --dim expects name=value (got {text!r})")
    return name, int(value)


def _parse_shape(text):
    name, sep, dims = text.partition("=")
    try:
        shape = [int(d) for d in dims.split(",")] if sep and name else None
    except ValueError:
        shape = None
    if not shape:
        raise SystemExit(f"webnn convert: --shape expects input=1,3,224,224 (got {text!r})")
    return name, shape


def cmd_convert(args):
    import webnn.onnx

    renamed = webnn.onnx.convert(
        args.model,
        args.output,
        free_dims=dict(_parse_dim(d) for d in args.dim) or None,
        input_shapes=dict(_parse_shape(s) for s in args.shape) or None,
        context=_context(args),
    )
    print(f"wrote {args.output}")
    for onnx_name, file_name in sorted(renamed.items()):
        print(f"  renamed {onnx_name!r} -> {file_name!r}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="webnn", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--backend",
        default="cpu",
        choices=webnn.backends(),
        help="backend to compile for (default: cpu)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", help="summarise a graph file")
    p.add_argument("file")
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("run", help="run a graph on .npy inputs")
    p.add_argument("file")
    p.add_argument("-i", "--input", action="append", default=[], metavar="NAME=FILE.npy")
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    p.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="RUNS",
        help="after the first dispatch, time every node over RUNS more and print where time goes",
    )
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("ops", help="list supported operations and data types")
    p.set_defaults(func=cmd_ops)
    p = sub.add_parser("viz", help="draw a graph (SVG/PNG via graphviz, or DOT)")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, metavar="graph.svg|graph.dot")
    p.set_defaults(func=cmd_viz)
    p = sub.add_parser("convert", help="convert an ONNX model to a .webnn graph file")
    p.add_argument("model", metavar="MODEL.onnx")
    p.add_argument("-o", "--output", required=True, metavar="MODEL.webnn")
    p.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="fix a named symbolic dimension (repeatable)",
    )
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="INPUT=D0,D1,...",
        help="fix the whole shape of an input (repeatable)",
    )
    p.set_defaults(func=cmd_convert)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into e.g. `head`
        return 0
    except (OSError, ValueError, RuntimeError, NotImplementedError, ImportError) as error:
        print(f"webnn {args.command}: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
