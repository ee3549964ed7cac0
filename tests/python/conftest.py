import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "wpt: a W3C WPT conformance case")


def pytest_terminal_summary(terminalreporter):
    """States how many WPT conformance cases ran, passed, failed and were skipped."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome in counts:
        for report in terminalreporter.stats.get(outcome, []):
            is_wpt = "test_wpt_case" in getattr(report, "nodeid", "")
            # Skips are reported at setup, passes and failures at call.
            if is_wpt and (
                report.when == "call" or (outcome == "skipped" and report.when == "setup")
            ):
                counts[outcome] += 1
    total = sum(counts.values())
    if total:
        terminalreporter.write_line(
            f"WPT conformance: {total} cases, {counts['passed']} passed, "
            f"{counts['failed']} failed, {counts['skipped']} skipped"
        )
    _onnx_node_summary(terminalreporter)


def _onnx_node_summary(terminalreporter):
    """ONNX backend node tests: passed / claimed / total, per backend (claimed = not skipped)."""
    per_backend = {}
    for outcome in ("passed", "failed", "skipped", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if "test_onnx_node_case[" not in nodeid:
                continue
            if report.when != "call" and not (outcome == "skipped" and report.when == "setup"):
                continue
            backend = nodeid.rsplit("-", 1)[-1].rstrip("]")
            counts = per_backend.setdefault(backend, {"passed": 0, "total": 0, "claimed": 0})
            counts["total"] += 1
            if outcome != "skipped":
                counts["claimed"] += 1
            if outcome in ("passed", "xpassed"):
                counts["passed"] += 1
    for backend, c in sorted(per_backend.items()):
        terminalreporter.write_line(
            f"ONNX node tests ({backend}): {c['passed']} passed / {c['claimed']} claimed / "
            f"{c['total']} total"
        )
