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
            if "test_wpt_case" in getattr(report, "nodeid", "") and report.when in (
                "call",
                "setup",
            ):
                if outcome == "skipped" or report.when == "call":
                    counts[outcome] += 1
    total = sum(counts.values())
    if total:
        terminalreporter.write_line(
            f"WPT conformance: {total} cases, {counts['passed']} passed, "
            f"{counts['failed']} failed, {counts['skipped']} skipped"
        )
