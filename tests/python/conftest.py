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
