"""The supported-operator list of docs/onnx.md, generated from the converter table.

python -m webnn.onnx.oplist docs/onnx.md   rewrites the list between the markers.
"""

import sys
from pathlib import Path

from .ops import TABLE

BEGIN = "<!-- BEGIN GENERATED OPERATOR LIST (python -m webnn.onnx.oplist docs/onnx.md) -->"
END = "<!-- END GENERATED OPERATOR LIST -->"


def markdown():
    lines = []
    domains = sorted({d for d, _ in TABLE})
    for domain in domains:
        runtime = sorted(o for d, o in TABLE if d == domain and TABLE[(d, o)].runtime)
        folded = sorted(o for d, o in TABLE if d == domain and not TABLE[(d, o)].runtime)
        title = domain or "ai.onnx (standard)"
        noun = "operator" if len(runtime) == 1 else "operators"
        lines.append(f"**{title}** — {len(runtime)} {noun}:")
        lines.append("")
        lines.append(", ".join(f"`{o}`" for o in runtime))
        lines.append("")
        if folded:
            lines.append(
                f"Folded at import only (their inputs must be known at import) — {len(folded)}:"
            )
            lines.append("")
            for o in folded:
                lines.append(f"- `{o}`: {TABLE[(domain, o)].note}")
            lines.append("")
    return "\n".join(lines)


def rewrite(path):
    path = Path(path)
    text = path.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    path.write_text(text[:start] + "\n" + markdown() + text[end:])


if __name__ == "__main__":
    rewrite(sys.argv[1])
