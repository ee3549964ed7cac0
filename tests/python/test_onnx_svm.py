"""ai.onnx.ml SVMClassifier / SVMRegressor built with onnx.helper from random support vectors
(every kernel, one-vs-one voting with and without Platt probabilities, each post_transform,
linear mode) and compared with ONNX Runtime on both backends: scores within 1e-4 of max|ORT|
(float sums in another order), labels equal."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import BACKENDS, onnxruntime_outputs

FEATURES = 4
ROWS = 9
KERNELS = {
    "LINEAR": [0.0, 0.0, 0.0],
    "POLY": [0.3, 0.5, 3.0],
    "RBF": [0.4, 0.0, 0.0],
    "SIGMOID": [0.2, -0.1, 0.0],
}


def _model(op_type, attrs, outputs, rows=ROWS):
    node = helper.make_node(op_type, ["X"], [o.name for o in outputs], domain="ai.onnx.ml",
                            **attrs)  # fmt: skip
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [rows, FEATURES])
    graph = helper.make_graph([node], "g", [x], outputs)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    model.ir_version = 8
    return model


def _x(seed, rows=ROWS):
    return np.random.default_rng(seed).uniform(-2, 2, (rows, FEATURES)).astype(np.float32)


def _compare(model, x, rtol=1e-4):
    want = onnxruntime_outputs(model, {"X": x})
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"X": x})
        for name, w in want.items():
            where = f"{backend}: output {name}"
            assert got[name].shape == w.shape, where
            if np.issubdtype(w.dtype, np.floating):
                err = float(np.max(np.abs(got[name] - w)))
                assert err <= rtol * max(1.0, float(np.max(np.abs(w)))), (where, err, got[name], w)
            else:
                np.testing.assert_array_equal(got[name], w, err_msg=where)
    return want


def _classifier_attrs(seed, classes, kernel, proba, post, per_class=None):
    rng = np.random.default_rng(seed)
    per_class = per_class or [int(v) for v in rng.integers(1, 4, classes)]
    vectors = sum(per_class)
    pairs = classes * (classes - 1) // 2
    attrs = {
        "classlabels_ints": list(range(3, 3 + classes)),
        "coefficients": rng.uniform(-1, 1, (classes - 1) * vectors).tolist(),
        "kernel_params": KERNELS[kernel],
        "kernel_type": kernel,
        "post_transform": post,
        "rho": rng.uniform(-0.5, 0.5, pairs).tolist(),
        "support_vectors": rng.uniform(-2, 2, vectors * FEATURES).tolist(),
        "vectors_per_class": per_class,
    }
    if proba:
        attrs["prob_a"] = rng.uniform(-3, -0.5, pairs).tolist()
        attrs["prob_b"] = rng.uniform(-0.3, 0.3, pairs).tolist()
    return attrs


CLASSIFIER_OUT = [
    helper.make_tensor_value_info("label", TensorProto.INT64, [ROWS]),
    helper.make_tensor_value_info("scores", TensorProto.FLOAT, None),
]


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("classes", [2, 3, 4])
@pytest.mark.parametrize("proba", [False, True])
def test_svc_matches_onnxruntime(kernel, classes, proba):
    attrs = _classifier_attrs(classes * 7 + len(kernel), classes, kernel, proba, "NONE")
    want = _compare(_model("SVMClassifier", attrs, CLASSIFIER_OUT), _x(classes))
    assert np.ptp(want["scores"]) > 0.1  # the random model is not degenerate


@pytest.mark.parametrize("post", ["LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
@pytest.mark.parametrize("classes,proba", [(2, False), (2, True), (3, False), (3, True)])
def test_svc_post_transforms(post, classes, proba):
    if post == "PROBIT" and classes == 2 and not proba:
        pytest.skip("refused: ORT fills one score column only (test below)")
    attrs = _classifier_attrs(11 + classes, classes, "RBF", proba, post)
    x = _x(5)
    if post == "PROBIT" and not proba:
        x = x * 0.1  # probit is defined on (0, 1): keep the decision values inside it
        attrs["coefficients"] = [c * 0.1 for c in attrs["coefficients"]]
        attrs["rho"] = [0.5 + 0.1 * r for r in attrs["rho"]]
    _compare(_model("SVMClassifier", attrs, CLASSIFIER_OUT), x)


def test_svc_probabilities_many_classes_and_a_one_row_input():
    attrs = _classifier_attrs(3, 6, "RBF", True, "NONE", per_class=[2, 1, 3, 2, 1, 2])
    _compare(_model("SVMClassifier", attrs, CLASSIFIER_OUT), _x(8))
    model = _model("SVMClassifier", attrs, [
        helper.make_tensor_value_info("label", TensorProto.INT64, None),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, None)], rows=1)  # fmt: skip
    _compare(model, _x(9, rows=1))


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
@pytest.mark.parametrize("positive", [False, True])
def test_linear_mode_classifier(classes, post, positive):
    # No support vectors: liblinear's form, one coefficient row per class plus rho[0]; with two
    # classes ORT's thresholds (0.5 for all-positive coefficients, else 0) pick the label.
    rng = np.random.default_rng(classes + 10 * positive)
    coefficients = rng.uniform(0 if positive else -1, 1, classes * FEATURES)
    attrs = {
        "classlabels_ints": list(range(classes)),
        "coefficients": (coefficients * 0.3).tolist(),
        "rho": [0.1],
        "post_transform": post,
        "kernel_type": "LINEAR",
        "kernel_params": [0.0, 0.0, 0.0],
    }
    _compare(_model("SVMClassifier", attrs, CLASSIFIER_OUT), _x(1) * 0.5)


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("one_class", [0, 1])
def test_svm_regressor(kernel, one_class):
    rng = np.random.default_rng(len(kernel) + one_class)
    supports = 5
    attrs = {
        "coefficients": rng.uniform(-1, 1, supports).tolist(),
        "kernel_params": KERNELS[kernel],
        "kernel_type": kernel,
        "n_supports": supports,
        "one_class": one_class,
        "rho": [0.2],
        "support_vectors": rng.uniform(-2, 2, supports * FEATURES).tolist(),
    }
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    _compare(_model("SVMRegressor", attrs, out), _x(2))


def test_linear_svm_regressor():
    attrs = {"coefficients": [0.5, -1.0, 0.25, 2.0], "rho": [-0.3], "kernel_type": "LINEAR",
             "kernel_params": [0.0, 0.0, 0.0]}  # fmt: skip
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    _compare(_model("SVMRegressor", attrs, out), _x(3))


def test_binary_svc_probit_without_probabilities_is_refused():
    attrs = _classifier_attrs(1, 2, "RBF", False, "PROBIT")
    with pytest.raises(wo.OnnxImportError, match="PROBIT"):
        wo.load(webnn.ML().create_context(accelerated=False), _model("SVMClassifier", attrs,
                                                                     CLASSIFIER_OUT))  # fmt: skip
