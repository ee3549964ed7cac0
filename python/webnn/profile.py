"""Per-node timing tables for `MLGraph.profile` (used by `webnn run --profile` and bench/)."""

from collections import defaultdict


def profile_table(profile, top=15):
    """Text report of a graph's profile: time per op kind, then the `top` slowest nodes."""
    runs = max(profile["runs"], 1)
    nodes = profile["nodes"]
    total = sum(n["total_ms"] for n in nodes) / runs
    by_op = defaultdict(lambda: [0.0, 0, 0.0])
    for n in nodes:
        entry = by_op[n["op"].split("+")[0]]
        entry[0] += n["total_ms"] / runs
        entry[1] += 1
        entry[2] += n["flops"]
    lines = [f"{profile['runs']} profiled run(s); {total:.3f} ms per run in {len(nodes)} nodes"]
    lines.append(f"{'op':<28}{'nodes':>6}{'ms/run':>10}{'share':>8}{'GFLOP/s':>9}")
    for op, (ms, count, flops) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        share = ms / total if total else 0.0
        rate = f"{flops / ms * 1e-6:9.1f}" if ms > 0 and flops > 0 else ""
        lines.append(f"{op:<28}{count:>6}{ms:>10.3f}{share:>8.1%}{rate}")
    lines.append(f"slowest {min(top, len(nodes))} nodes (GFLOP/s where the node computes):")
    for n in sorted(nodes, key=lambda n: -n["total_ms"])[:top]:
        ms = n["total_ms"] / runs
        shape = "x".join(str(d) for d in n["shape"])
        rate = f"{n['flops'] / ms * 1e-6:7.1f}" if ms > 0 and n["flops"] > 0 else " " * 7
        lines.append(f"  {ms:8.3f} ms {rate}  {n['op']:<36} [{shape}] {n['output']}")
    return "\n".join(lines)
