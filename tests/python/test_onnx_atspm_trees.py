"""The ai.onnx.ml opset 5 TreeEnsemble models of the atspm-detector 1.1.0 wheel (LightGBM
regressors and classifiers exported with float64 inputs and double thresholds; installed
--no-deps by the test set-up, model files never committed), compared with ONNX Runtime.

ORT runs each model as shipped, on float64 inputs whose values are float32-representable.
Ours runs the same model with its input and output declared float32 (the trees' double
tensors kept): the thresholds rounded toward each comparison (ops/trees.py,
float32_threshold) must then give exactly ORT's double comparisons, so the outputs differ
only by the float32 sums of the leaf weights (<= 1e-6 of max|ORT|)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto
from ort_compare import BACKENDS

MODELS = [
    "decode_v3.onnx",
    "phase_lgbm_v5_s0.onnx",
    "function/function229_s0.onnx",
    "lanes/lane_pair_D_s0.onnx",
    "setback/setback_full_q50_s0.onnx",
    "setback/setback_q90_s1.onnx",
    "stacker/stacker_mean3_s0.onnx",
]


def _weights_dir():
    spec = importlib.util.find_spec("atspm_detector")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(
            "atspm-detector 1.1.0 is not installed (pip install --no-deps atspm-detector==1.1.0)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "weights"


def _inputs(model, features, rows=48):
    """Random rows, half of whose values are the float32 roundings of the model's own split
    values on that feature (where a threshold rounded to nearest would flip comparisons)."""
    from onnx import helper, numpy_helper

    attrs = {a.name: a for a in model.graph.node[0].attribute}
    splits = numpy_helper.to_array(attrs["nodes_splits"].t)
    on = np.asarray(helper.get_attribute_value(attrs["nodes_featureids"]))
    rng = np.random.default_rng(features)
    x = rng.normal(size=(rows, features)) * rng.choice([0.01, 1, 10, 1000], features)
    x = x.astype(np.float32)
    for f in np.unique(on):
        at = rng.random(rows) < 0.5
        x[at, f] = rng.choice(splits[on == f], int(at.sum())).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    return x


@pytest.mark.parametrize("name", MODELS)
def test_atspm_tree_model_matches_onnxruntime(name):
    path = _weights_dir() / name
    model = onnx.load(str(path))
    assert [n.op_type for n in model.graph.node] == ["TreeEnsemble"]
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.DOUBLE
    features = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    x = _inputs(model, features)
    want = ort.InferenceSession(str(path)).run(None, {"X": x.astype(np.float64)})[0]
    float_model = onnx.ModelProto()
    float_model.CopyFrom(model)
    float_model.graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT
    float_model.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = wo.load(context, float_model, input_shapes={"X": list(x.shape)})
        got = context.compute(graph, {"X": x})["Y"]
        assert got.shape == want.shape, backend
        err = float(np.max(np.abs(got - want)))
        assert err <= 1e-6 * float(np.max(np.abs(want))), (backend, err)
