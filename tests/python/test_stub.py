"""The checked-in _webnn.pyi stub matches the compiled module exactly."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))


def test_stub_is_up_to_date(tmp_path):
    if importlib.util.find_spec("nanobind") is None:
        pytest.fail("nanobind (a test dependency) is needed to regenerate the stub")
    import gen_stub

    fresh = tmp_path / "_webnn.pyi"
    gen_stub.generate(fresh)
    checked_in = ROOT / "python" / "webnn" / "_webnn.pyi"
    assert fresh.read_text() == checked_in.read_text(), (
        "python/webnn/_webnn.pyi is stale: run `python tools/gen_stub.py`"
    )


def test_stub_lists_every_operation():
    import webnn

    stub = (ROOT / "python" / "webnn" / "_webnn.pyi").read_text()
    limits = webnn.ML().create_context(accelerated=False).op_support_limits()
    for name in limits:
        if name in ("preferredInputLayout", "maxTensorByteLength", "input", "constant", "output"):
            continue
        method = next(m for m in dir(webnn.MLGraphBuilder) if m.replace("_", "") == name.lower())
        assert f"def {method}(self" in stub


def test_ops_doc_is_up_to_date():
    import gen_ops_doc

    checked_in = ROOT / "docs" / "ops.md"
    assert gen_ops_doc.render() == checked_in.read_text(), (
        "docs/ops.md is stale: run `python tools/gen_ops_doc.py`"
    )
