"""The `webnn` command (python/webnn/cli.py): info, run, ops, viz."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
import webnn
from webnn import cli


@pytest.fixture
def saved_graph(tmp_path):
    ctx = webnn.ML().create_context(accelerated=False)
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "batch", "maxSize": 8}, 4], "float32")
    w = b.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    bias = np.array([0.5, -0.5, 0.0], np.float32)
    y = b.relu(b.add(b.matmul(x, w), b.constant(bias)), label="act")
    path = tmp_path / "mlp.webnn"
    b.save({"y": y}, str(path))
    return path, np.arange(12, dtype=np.float32).reshape(4, 3) / 10, bias


def run_cli(*args):
    return cli.main([str(a) for a in args])


def test_info(saved_graph, capsys):
    path, _, _ = saved_graph
    assert run_cli("info", path) == 0
    out = capsys.readouterr().out
    assert "x: float32 [batch<=8, 4]" in out
    assert "y: float32 [batch<=8, 3]" in out
    assert "matmul" in out and "relu" in out and "add" in out
    assert "parameters: 15 (60B)" in out
    # matmul 2*8*3*4 + add 8*3 + relu 8*3 at the maxSize bound
    assert "FLOPs (estimate): 240" in out


def test_run_writes_npy_outputs(saved_graph, tmp_path, capsys):
    path, w, bias = saved_graph
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    assert run_cli("run", path, "-i", f"x={tmp_path / 'x.npy'}", "-o", out_dir) == 0
    y = np.load(out_dir / "y.npy")
    np.testing.assert_allclose(y, np.maximum(x @ w + bias, 0), rtol=1e-6, atol=1e-6)
    assert "y: float32 [5, 3]" in capsys.readouterr().out


def test_run_rejects_missing_inputs(saved_graph, tmp_path):
    path, _, _ = saved_graph
    with pytest.raises(SystemExit, match="missing inputs"):
        run_cli("run", path, "-o", tmp_path / "out")


def test_ops_lists_support_table(capsys):
    assert run_cli("--backend", "reference", "ops") == 0
    out = capsys.readouterr().out
    assert out.startswith("backend: reference")
    assert "conv2d" in out and "gatherND" in out
    assert "float32" in out


def test_viz_dot(saved_graph, tmp_path):
    path, _, _ = saved_graph
    dot = tmp_path / "g.dot"
    assert run_cli("viz", path, "-o", dot) == 0
    text = dot.read_text()
    assert text.startswith("digraph webnn {")
    assert "matmul" in text and "relu\\n'act'" in text and "->" in text


def test_viz_svg_uses_graphviz_or_falls_back_to_dot(saved_graph, tmp_path, capsys):
    path, _, _ = saved_graph
    svg = tmp_path / "g.svg"
    assert run_cli("viz", path, "-o", svg) == 0
    if shutil.which("dot"):
        assert "<svg" in svg.read_text()
    else:
        assert (tmp_path / "g.dot").read_text().startswith("digraph")
        assert "not installed" in capsys.readouterr().out


def test_errors_are_reported_not_raised(tmp_path, capsys):
    assert run_cli("info", tmp_path / "missing.webnn") == 1
    assert "FileNotFoundError" in capsys.readouterr().err


def test_console_script_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "webnn.cli", "ops"], capture_output=True, text=True, check=True
    )
    assert "reduceLogSumExp" in result.stdout
