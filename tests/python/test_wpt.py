"""WPT WebNN conformance cases on every backend of this build.

A case may be skipped only when listed, with its reason, in wpt_skips.json.
"""

import json
from pathlib import Path

import pytest
import webnn
from wpt_runner import check_case, load_cases

SKIPS = json.loads((Path(__file__).parent / "wpt_skips.json").read_text())
CASES = list(load_cases())
BACKENDS = webnn.backends()


def _params():
    for backend in BACKENDS:
        for operation, index, case in CASES:
            case_id = f"{operation}/{index}"
            marks = []
            if case_id in SKIPS:
                marks.append(pytest.mark.skip(reason=SKIPS[case_id]))
            yield pytest.param(backend, case, id=f"{backend}:{case_id}", marks=marks)


_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


@pytest.mark.wpt
@pytest.mark.parametrize("backend,case", list(_params()))
def test_wpt_case(backend, case):
    problems = check_case(_context(backend), case)
    assert not problems, f"{case['name']}: " + "; ".join(problems)


def _float16_cases():
    for operation, index, case in CASES:
        case_id = f"{operation}/{index}"
        if "float16" in json.dumps(case["graph"]) and case_id not in SKIPS:
            yield pytest.param(case, id=f"cpu:{case_id}")


@pytest.mark.skipif("cpu" not in BACKENDS, reason="no cpu backend")
@pytest.mark.parametrize("case", list(_float16_cases()))
def test_wpt_float16_promoted(case, monkeypatch):
    # The cpu backend computes float16 graphs of two or more nodes in float32
    # (graph/passes/float16_promotion.cc); WPT's are mostly one node, so force the float32 form.
    monkeypatch.setenv("WEBNN_FLOAT16", "promote")  # read when the graph is built
    problems = check_case(_context("cpu"), case)
    assert not problems, f"{case['name']}: " + "; ".join(problems)


def test_skip_list_names_existing_cases():
    known = {f"{operation}/{index}" for operation, index, _ in CASES}
    assert set(SKIPS) <= known, sorted(set(SKIPS) - known)
    assert all(reason.strip() for reason in SKIPS.values())
