"""ai.onnx.ml operators that are arithmetic on float tensors (what skl2onnx emits for scalers,
normalizers, imputers and linear models), with ONNX Runtime's semantics (tree ensembles are in
trees.py, SVMs in svm.py, encoders and ZipMap in ml_encoders.py). Map operators have no
converter: the unsupported-operator error lists them.
"""

import numpy as np

from .registry import op
from .util import norm_axis, to_dtype

ML = "ai.onnx.ml"


def _float_input(n, i=0):
    """Input i as float32: the ml operators take float, double, int64 or int32 and compute in
    float (ONNX Runtime casts integer features to float the same way)."""
    return to_dtype(n, n.x(i), "float32")


def _per_feature(n, name, count, default):
    """A float attribute with one value per feature (the last axis) or one for all."""
    values = [float(v) for v in n.attr(name, [default])]
    if len(values) not in (1, count):
        n.fail(f"'{name}' has {len(values)} values; it needs 1 or one per feature ({count})")
    return n.const(np.asarray(values, np.float32), "float32")


def _features(n, i=0):
    shape = n.static_shape(i)
    if not shape:
        n.fail("the input must have at least one dimension (the features)")
    return shape[-1]


@op("Scaler", domain=ML)
def scaler(n):
    # Y = (X - offset) * scale, per feature.
    count = _features(n)
    offset = _per_feature(n, "offset", count, 0.0)
    scale = _per_feature(n, "scale", count, 1.0)
    return n.b.mul(n.b.sub(_float_input(n), offset), scale)


@op("Binarizer", domain=ML)
def binarizer(n):
    x = n.x(0)
    dtype = n.dtype(0)
    threshold = n.const(float(n.attr("threshold", 0.0)), dtype)
    return n.b.cast(n.b.greater(x, threshold), dtype)


@op("Imputer", domain=ML)
def imputer(n):
    dtype = n.dtype(0)
    count = _features(n)
    if dtype == "float32":
        values = n.attr("imputed_value_floats", None)
        replaced = float(n.attr("replaced_value_float", 0.0))
    elif dtype in ("int32", "int64"):
        values = n.attr("imputed_value_int64s", None)
        replaced = int(n.attr("replaced_value_int64", 0))
    else:
        n.fail(f"Imputer of {dtype} input (float32, int32 or int64 only)")
    if not values or len(values) not in (1, count):
        n.fail(f"Imputer needs 1 or {count} imputed values, got {len(values or [])}")
    x = n.x(0)
    imputed = n.const(np.asarray(values, np.float32 if dtype == "float32" else dtype), dtype)
    if dtype == "float32" and np.isnan(replaced):
        hit = n.b.is_nan(x)
    else:
        hit = n.b.equal(x, n.const(replaced, dtype))
    return n.b.where(hit, n.b.expand(imputed, n.static_shape(0)), x)


@op("Normalizer", domain=ML)
def normalizer(n):
    # Each row (the last axis of a 1-D or 2-D input) divided by its MAX, L1 or L2 norm; a row
    # whose norm is 0 stays 0 (ONNX Runtime skips the division).
    b = n.b
    x = _float_input(n)
    if n.rank(0) not in (1, 2):
        n.fail(f"Normalizer of a rank-{n.rank(0)} input (1-D or 2-D only)")
    axis = [n.rank(0) - 1]
    norm = n.attr("norm", "MAX")
    if norm == "MAX":
        scale = b.reduce_max(x, axes=axis, keep_dimensions=True)
    elif norm == "L1":
        scale = b.reduce_l1(x, axes=axis, keep_dimensions=True)
    elif norm == "L2":
        scale = b.reduce_l2(x, axes=axis, keep_dimensions=True)
    else:
        n.fail(f"norm '{norm}' (MAX, L1 or L2)")
    zero = n.const(0.0, "float32")
    is_zero = b.equal(scale, zero)
    safe = b.where(is_zero, n.const(1.0, "float32"), scale)
    return b.div(x, safe)


def _linear(n, count):
    """X (rank 1 as one row) times coefficients [count, features]^T plus intercepts."""
    b = n.b
    x = _float_input(n)
    shape = n.static_shape(0)
    if len(shape) == 1:
        x = b.reshape(x, [1, shape[0]])
    elif len(shape) != 2:
        n.fail(f"a rank-{len(shape)} input (1-D or 2-D only)")
    features = n.static_shape(0)[-1]
    coefficients = np.asarray(n.attr("coefficients", []), np.float32)
    if coefficients.size != count * features:
        n.fail(f"{coefficients.size} coefficients for {count} outputs x {features} features")
    w = n.const(np.ascontiguousarray(coefficients.reshape(count, features).T), "float32")
    y = b.matmul(x, w)
    intercepts = n.attr("intercepts", None)
    if intercepts:
        if len(intercepts) not in (1, count):
            n.fail(f"{len(intercepts)} intercepts for {count} outputs")
        y = b.add(y, n.const(np.asarray(intercepts, np.float32), "float32"))
    return y


@op("LinearRegressor", domain=ML)
def linear_regressor(n):
    from .ml_scores import TRANSFORMS, post_transform, probit

    post = n.attr("post_transform", "NONE")
    if post not in TRANSFORMS:
        n.fail(f"post_transform '{post}' (one of {', '.join(TRANSFORMS)})")
    targets = int(n.attr("targets", 1))
    y = _linear(n, targets)
    if targets == 1:
        # ORT transforms a single target only with PROBIT (measured, 1.32).
        return probit(n, y) if post == "PROBIT" else y
    return post_transform(n, y, post)


@op("LinearClassifier", domain=ML)
def linear_classifier(n):
    """Outputs the label (argmax, or for one coefficient row of two classes score > 0) and the
    scores, as ONNX Runtime computes them: with two classes and one coefficient row the scores
    are [1 - s, s] (s the raw score, or its logistic for LOGISTIC)."""
    from .ml_scores import class_labels, label_output, post_transform

    b = n.b
    labels, is_string = class_labels(n)
    classes = len(labels)
    coefficients = n.attr("coefficients", [])
    features = n.static_shape(0)[-1]
    if features == 0 or len(coefficients) % features:
        n.fail(f"{len(coefficients)} coefficients do not fit {features} features")
    rows = len(coefficients) // features
    post = n.attr("post_transform", "NONE")
    if post not in ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"):
        n.fail(f"post_transform '{post}'")
    # multi_class (1 in skl2onnx's multinomial LogisticRegression) changes nothing in ONNX
    # Runtime's kernel (measured: equal labels and scores for every post_transform).
    raw = _linear(n, rows)
    if rows == 1 and classes == 2:
        if post == "PROBIT":
            n.fail("post_transform 'PROBIT' with one coefficient row for two classes")
        s = b.sigmoid(raw) if post == "LOGISTIC" else raw
        scores = b.concat([b.sub(n.const(1.0, "float32"), s), s], 1)
        index = b.cast(b.greater(raw, n.const(0.0, "float32")), "int32")
        index = b.reshape(index, [n.static_shape(0)[0] if n.rank(0) == 2 else 1])
        return [label_output(n, index, labels, is_string), scores]
    if rows != classes:
        n.fail(f"{rows} coefficient rows for {classes} classes")
    scores = post_transform(n, raw, post)
    index = b.arg_max(raw, 1, keep_dimensions=False, output_data_type="int32")
    return [label_output(n, index, labels, is_string), scores]


@op("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(n):
    # Y = X[..., indices] (indices flattened); a 1-D X gives [1, len(indices)].
    b = n.b
    indices = n.x(1)
    count = 1
    for d in n.static_shape(1):
        count *= d
    indices = b.reshape(indices, [count])
    y = b.gather(n.x(0), indices, axis=norm_axis(n, -1, n.rank(0)))
    if n.rank(0) == 1:
        y = b.reshape(y, [1, count])
    return y


@op("FeatureVectorizer", domain=ML)
def feature_vectorizer(n):
    # The inputs' features (their last axis, each cut or zero-padded to its inputdimensions
    # entry) concatenated as float32 into [N, sum(inputdimensions)].
    b = n.b
    sizes = [int(v) for v in n.attr("inputdimensions", [])]
    if len(sizes) != n.n_inputs:
        n.fail(f"{len(sizes)} inputdimensions for {n.n_inputs} inputs")
    parts = []
    for i, size in enumerate(sizes):
        x = _float_input(n, i)
        shape = n.static_shape(i)
        rows = shape[0] if len(shape) > 1 else 1
        width = 1
        for d in shape[1:] if len(shape) > 1 else shape:
            width *= d
        x = b.reshape(x, [rows, width])
        if width > size:
            x = b.slice(x, [0, 0], [rows, size])
        elif width < size:
            x = b.pad(x, [0, 0], [0, size - width])
        parts.append(x)
    return parts[0] if len(parts) == 1 else b.concat(parts, 1)
