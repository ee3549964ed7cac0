"""Hostile random call sequences on the public API (tests/fuzz/fuzz_python_api.py), and the
regressions they found. Every call must succeed or raise a documented exception (api.md §5)
whose message is not an internal error; a hang fails through the fuzzer's watchdog.

Longer runs (docs/reliability.md): WEBNN_API_FUZZ_SEEDS=N WEBNN_API_FUZZ_STEPS=M, also under
tools/sanitize.sh asan-py / tsan."""

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
import webnn

_PATH = Path(__file__).parents[1] / "fuzz" / "fuzz_python_api.py"
_spec = importlib.util.spec_from_file_location("fuzz_python_api", _PATH)
fuzz_python_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz_python_api)

SEEDS = int(os.environ.get("WEBNN_API_FUZZ_SEEDS", "3"))
STEPS = int(os.environ.get("WEBNN_API_FUZZ_STEPS", "800"))
HANG_SECONDS = 600.0  # one step; sanitizer builds run tens of times slower


@pytest.mark.parametrize("seed", range(1, SEEDS + 1))
def test_random_call_sequences_raise_only_documented_errors(seed, tmp_path):
    fuzz = fuzz_python_api.run(seed, STEPS, hang_seconds=HANG_SECONDS, workdir=tmp_path)
    assert not fuzz.findings, fuzz.findings[:5]
    # The sequences reach far enough to mean something: graphs are built and dispatched.
    assert fuzz.ok_by_call.get("build", 0) > 0 and fuzz.ok_by_call.get("dispatch", 0) > 0


@pytest.mark.parametrize("seed", range(101, 101 + SEEDS))
def test_random_call_sequences_from_4_threads_sharing_every_object(seed, tmp_path):
    fuzz = fuzz_python_api.run(
        seed, STEPS // 4, threads=4, hang_seconds=HANG_SECONDS, workdir=tmp_path
    )
    assert not fuzz.findings, fuzz.findings[:5]
    assert fuzz.counts["steps"] == 4 * (STEPS // 4)


@pytest.mark.parametrize("not_a_mapping", ["x", b"x", bytearray(b"x"), np.zeros(2), range(2)])
def test_bindings_and_outputs_that_are_not_mappings_raise_type_error(not_a_mapping):
    """Found by the fuzzer: a str (or bytes, an array) passed PyMapping_Check, then failed
    with AttributeError ('str' object has no attribute 'items')."""
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    y = b.relu(b.input("x", [2], "float32"))
    with pytest.raises(TypeError, match="save: outputs must be a dict"):
        b.save(not_a_mapping, "unused.webnn")
    graph = b.build({"y": y})
    t = ctx.create_tensor([2], "float32", readable=True, writable=True)
    with pytest.raises(TypeError, match="dispatch: inputs must be a dict"):
        ctx.dispatch(graph, not_a_mapping, {"y": t})
    with pytest.raises(TypeError, match="dispatch: outputs must be a dict"):
        ctx.dispatch(graph, {"x": t}, not_a_mapping)
    with pytest.raises(TypeError, match="compute: inputs must be a dict"):
        ctx.compute(graph, not_a_mapping)
    with pytest.raises(TypeError, match="build: outputs must be a dict"):
        ctx.create_graph_builder().build(not_a_mapping)
