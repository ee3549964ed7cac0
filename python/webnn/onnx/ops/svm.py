"""ai.onnx.ml SVMClassifier / SVMRegressor (scikit-learn's SVC, SVR, NuSVC, OneClassSVM and
linear SVMs as skl2onnx writes them), as ONNX Runtime computes them (svmclassifier.cc):

- kernel(x, sv): LINEAR x.sv, POLY (gamma x.sv + coef0)^degree, RBF exp(-gamma |x - sv|^2),
  SIGMOID tanh(gamma x.sv + coef0) (kernel_params = [gamma, coef0, degree]);
- SVC mode (support vectors given): one-vs-one decision values per class pair (i, j), i < j,
  from the two classes' support vectors and coefficient rows, plus rho; each votes for i when
  > 0, else for j; the label is the first class with the most votes. Scores: the decision
  values (two classes: [-s, s] without post_transform, [1 - p, p] with one), or, with
  prob_a / prob_b, libsvm's pairwise-coupled probabilities (Platt sigmoids, then the
  iterative method of Wu, Lin and Weng, as ORT runs it: at most 100 rounds, stopping per row);
- linear mode (no support vectors): scores x.coef_c + rho[0] per class, the label their
  arg-max (two classes: ORT's thresholds, below).
"""

import numpy as np

from ..host_svm import CoupledProbabilities
from .ml import ML, _float_input
from .ml_scores import TRANSFORMS, class_labels, label_output, post_transform
from .registry import op

KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")
# Elements of the [batch, vectors, features] difference tensor RBF computes directly; beyond
# this it expands |x - sv|^2 = |x|^2 - 2 x.sv + |sv|^2 (cheaper, a little less exact).
MAX_RBF_DIRECT = 1 << 24
# ORT's multiclass_probability: at most this many rounds, stopping when the error < 0.005 / K.
PROBABILITY_ROUNDS = 100
# The graph form of the coupling unrolls PROBABILITY_ROUNDS x K Gauss-Seidel steps (about 17
# operators each): bounded here (K = 16 is ~27,000 operators, a second to import). An
# InferenceSession couples on the host instead, for any K (host_svm.py).
MAX_UNROLLED_CLASSES = 16


def _c(n, v):
    return n.const(np.float32(v), "float32")


def _rows(n):
    shape = n.static_shape(0)
    x = _float_input(n)
    if len(shape) == 1:
        return n.b.reshape(x, [1, shape[0]]), 1, shape[0]
    if len(shape) != 2:
        n.fail(f"a rank-{len(shape)} input (1-D or 2-D only)")
    return x, shape[0], shape[1]


def _kernel_params(n):
    kernel = n.attr("kernel_type", "LINEAR")
    if kernel not in KERNELS:
        n.fail(f"kernel_type '{kernel}' (one of {', '.join(KERNELS)})")
    params = [float(v) for v in n.attr("kernel_params", [])]
    if params and len(params) < 3:
        n.fail(f"kernel_params has {len(params)} values (gamma, coef0, degree)")
    gamma, coef0, degree = params[:3] if params else (0.0, 0.0, 0.0)
    return kernel, gamma, coef0, degree


def _power(n, y, degree):
    b = n.b
    if float(degree).is_integer() and 1 <= degree <= 8:
        out = y
        for _ in range(int(degree) - 1):
            out = b.mul(out, y)
        return out
    if degree == 0:
        return b.add(b.mul(y, _c(n, 0.0)), _c(n, 1.0))
    return b.pow(y, _c(n, degree))


def _kernel(n, x, vectors, kernel, gamma, coef0, degree):
    """kernel(x, each vector): [batch, vectors] for x [batch, F] and vectors [V, F] (numpy)."""
    b = n.b
    batch = n.b.operand_shape(x)[0]
    count, features = vectors.shape
    if kernel == "RBF":
        if batch * count * features <= MAX_RBF_DIRECT:
            sv = n.const(vectors.reshape(1, count, features), "float32")
            diff = b.sub(b.reshape(x, [batch, 1, features]), sv)
            dist = b.reduce_sum(b.mul(diff, diff), axes=[2], keep_dimensions=False)
        else:
            x2 = b.reduce_sum(b.mul(x, x), axes=[1], keep_dimensions=True)
            sv2 = n.const((vectors.astype(np.float64) ** 2).sum(1).astype(np.float32), "float32")
            dot = b.matmul(x, n.const(np.ascontiguousarray(vectors.T), "float32"))
            dist = b.add(b.sub(x2, b.mul(_c(n, 2.0), dot)), sv2)
            dist = b.max(dist, _c(n, 0.0))
        return b.exp(b.mul(dist, _c(n, -gamma)))
    dot = b.matmul(x, n.const(np.ascontiguousarray(vectors.T), "float32"))
    if kernel == "LINEAR":
        return dot
    y = b.add(b.mul(dot, _c(n, gamma)), _c(n, coef0))
    if kernel == "POLY":
        return _power(n, y, degree)
    return b.tanh(y)


def _floats(n, name, required=True):
    values = n.attr(name, None)
    if values is None or (required and len(values) == 0):
        if required:
            n.fail(f"attribute '{name}' is required")
        return np.zeros([0], np.float32)
    return np.asarray(values, np.float32)


@op("SVMRegressor", domain=ML)
def svm_regressor(n):
    """Y [N, 1] = sum_v coef_v kernel(x, sv_v) + rho[0] (SVC mode) or x.coef + rho[0]; one_class
    maps it to +-1. ORT ignores post_transform here; so does this."""
    b = n.b
    x, _, features = _rows(n)
    kernel, gamma, coef0, degree = _kernel_params(n)
    coefficients = _floats(n, "coefficients")
    rho = _floats(n, "rho")
    supports = int(n.attr("n_supports", 0))
    if supports > 0:
        vectors = _floats(n, "support_vectors")
        if vectors.size != supports * features or coefficients.size < supports:
            n.fail(f"{vectors.size} support vector values and {coefficients.size} coefficients "
                   f"for {supports} vectors of {features} features")  # fmt: skip
        k = _kernel(n, x, vectors.reshape(supports, features), kernel, gamma, coef0, degree)
        weights = coefficients[:supports].reshape(supports, 1)
    else:
        if coefficients.size != features:
            n.fail(f"{coefficients.size} coefficients for {features} features (linear mode)")
        k, weights = x, coefficients.reshape(features, 1)
    y = b.add(b.matmul(k, n.const(weights, "float32")), _c(n, rho[0]))
    if int(n.attr("one_class", 0)):
        y = b.where(b.greater(y, _c(n, 0.0)), _c(n, 1.0), _c(n, -1.0))
    return y


def _pairs(classes):
    return [(i, j) for i in range(classes - 1) for j in range(i + 1, classes)]


def _decision_weights(n, coefficients, per_class, vectors):
    """[V, pairs] weights: the decision value of pair (i, j) is kernels @ column + rho."""
    classes = len(per_class)
    starts = np.concatenate([[0], np.cumsum(per_class)[:-1]]).astype(int)
    if coefficients.size < (classes - 1) * vectors:
        n.fail(f"{coefficients.size} coefficients for {classes - 1} rows of {vectors} vectors")
    coef = coefficients[: (classes - 1) * vectors].reshape(classes - 1, vectors)
    pairs = _pairs(classes)
    w = np.zeros([vectors, len(pairs)], np.float32)
    for c, (i, j) in enumerate(pairs):
        si, sj = starts[i], starts[j]
        w[si : si + per_class[i], c] = coef[j - 1, si : si + per_class[i]]
        w[sj : sj + per_class[j], c] = coef[i, sj : sj + per_class[j]]
    return w, pairs


def _votes(n, decision, pairs, classes):
    """[N] int32: the first class with the most one-vs-one votes."""
    b = n.b
    for_i = np.zeros([len(pairs), classes], np.float32)
    for_j = np.zeros([len(pairs), classes], np.float32)
    for c, (i, j) in enumerate(pairs):
        for_i[c, i] = 1.0
        for_j[c, j] = 1.0
    wins = b.cast(b.greater(decision, _c(n, 0.0)), "float32")
    losses = b.sub(_c(n, 1.0), wins)
    votes = b.add(b.matmul(wins, n.const(for_i, "float32")),
                  b.matmul(losses, n.const(for_j, "float32")))  # fmt: skip
    return b.arg_max(votes, 1, keep_dimensions=False, output_data_type="int32")


def _coupled_probabilities(n, decision, pairs, classes, prob_a, prob_b):
    """libsvm's multiclass probabilities from the pairwise decision values [N, pairs], as ORT's
    multiclass_probability computes them (Gauss-Seidel sweeps, a row stops when converged)."""
    b = n.b
    K = classes
    a = n.const(prob_a[: len(pairs)], "float32")
    bb = n.const(prob_b[: len(pairs)], "float32")
    # r_ij = 1 - logistic(s * A + B), clipped to [1e-7, 1 - 1e-7]; r_ji = 1 - r_ij.
    r = b.sigmoid(b.neg(b.add(b.mul(decision, a), bb)))
    r = b.clamp(r, min_value=1e-7, max_value=float(np.float32(1 - 1e-7)))
    upper = np.zeros([len(pairs), K * K], np.float32)
    lower = np.zeros([len(pairs), K * K], np.float32)
    for c, (i, j) in enumerate(pairs):
        upper[c, i * K + j] = 1.0
        lower[c, j * K + i] = 1.0
    batch = b.operand_shape(decision)[0]
    rm = b.add(b.matmul(r, n.const(upper, "float32")),
               b.matmul(b.sub(_c(n, 1.0), r), n.const(lower, "float32")))  # fmt: skip
    rm = b.reshape(rm, [batch, K, K])  # rm[i, j] = r_ij, 0 on the diagonal
    rt = b.transpose(rm, [0, 2, 1])  # rt[i, j] = r_ji
    # Q[i, i] = sum_j r_ji^2; Q[i, j] = -r_ji r_ij.
    diag = b.reduce_sum(b.mul(rt, rt), axes=[2], keep_dimensions=False)  # [N, K]
    eye = np.eye(K, dtype=np.float32)
    q = b.add(b.mul(b.neg(b.mul(rt, rm)), n.const(1.0 - eye, "float32")),
              b.mul(b.reshape(diag, [batch, K, 1]), n.const(eye, "float32")))  # fmt: skip
    q_rows = [b.reshape(b.slice(q, [0, i, 0], [batch, 1, K]), [batch, K]) for i in range(K)]
    q_diag = [b.slice(diag, [0, i], [batch, 1]) for i in range(K)]
    units = [n.const(eye[i].reshape(1, K), "float32") for i in range(K)]
    eps = _c(n, 0.005 / K)
    one = _c(n, 1.0)
    p = b.expand(_c(n, 1.0 / K), [batch, K])
    done = None
    for _ in range(PROBABILITY_ROUNDS):
        qp = b.reduce_sum(b.mul(q, b.reshape(p, [batch, 1, K])), axes=[2], keep_dimensions=False)
        pqp = b.reduce_sum(b.mul(p, qp), axes=[1], keep_dimensions=True)
        error = b.reduce_max(b.abs(b.sub(qp, pqp)), axes=[1], keep_dimensions=True)
        now = b.lesser(error, eps)
        done = now if done is None else b.logical_or(done, now)
        new_p = p
        for i in range(K):
            qp_i = b.slice(qp, [0, i], [batch, 1])
            diff = b.div(b.sub(pqp, qp_i), q_diag[i])
            new_p = b.add(new_p, b.mul(diff, units[i]))
            grow = b.add(one, diff)
            pqp = b.div(b.div(b.add(pqp, b.mul(diff, b.add(b.mul(diff, q_diag[i]),
                                                             b.mul(_c(n, 2.0), qp_i)))),
                              grow), grow)  # fmt: skip
            qp = b.div(b.add(qp, b.mul(diff, q_rows[i])), grow)
            new_p = b.div(new_p, grow)
        p = b.where(done, p, new_p)
    return p


def _probabilities(n, decision, pairs, K, prob_a, prob_b, post):
    """The scores of an SVC with prob_a / prob_b: coupled on the host in a session (the
    session finishes the decision values), else unrolled in the graph for K <= the bound."""
    if post not in TRANSFORMS:
        post_transform(n, decision, post)  # the error naming the choices
    if n.importer.host_cuts:
        return CoupledProbabilities(decision, prob_a, prob_b, K, post, n.describe())
    if K > MAX_UNROLLED_CLASSES:
        n.fail(f"probabilities (prob_a / prob_b) of {K} classes: libsvm's coupling is a loop "
               f"of {PROBABILITY_ROUNDS} x {K} dependent steps, unrolled in a graph only up to "
               f"{MAX_UNROLLED_CLASSES} classes; webnn.onnx.InferenceSession runs this model "
               "(it couples the probabilities on the host)")  # fmt: skip
    return post_transform(n, _coupled_probabilities(n, decision, pairs, K, prob_a, prob_b), post)


@op("SVMClassifier", domain=ML)
def svm_classifier(n):
    b = n.b
    labels, is_string = class_labels(n)
    K = len(labels)
    if K < 2:
        n.fail(f"{K} class label(s); an SVM classifier needs two or more")
    x, _, features = _rows(n)
    kernel, gamma, coef0, degree = _kernel_params(n)
    coefficients = _floats(n, "coefficients")
    rho = _floats(n, "rho")
    prob_a = _floats(n, "prob_a", required=False)
    prob_b = _floats(n, "prob_b", required=False)
    if prob_a.size != prob_b.size:
        n.fail(f"prob_a has {prob_a.size} values, prob_b {prob_b.size}")
    have_proba = prob_a.size > 0
    post = n.attr("post_transform", "NONE")
    per_class = [int(v) for v in n.attr("vectors_per_class", [])]
    if any(v < 0 for v in per_class):
        n.fail(f"vectors_per_class {per_class} has a negative count")
    vectors = sum(per_class)
    if vectors > 0:  # SVC mode
        if len(per_class) != K:
            n.fail(f"vectors_per_class has {len(per_class)} entries for {K} classes")
        sv = _floats(n, "support_vectors")
        if sv.size != vectors * features:
            n.fail(f"{sv.size} support vector values for {vectors} vectors of {features} features")
        pairs = _pairs(K)
        if rho.size < len(pairs) or (have_proba and prob_a.size < len(pairs)):
            n.fail(f"rho / prob_a / prob_b need {len(pairs)} values (one per class pair)")
        k = _kernel(n, x, sv.reshape(vectors, features), kernel, gamma, coef0, degree)
        w, pairs = _decision_weights(n, coefficients, per_class, vectors)
        decision = b.add(b.matmul(k, n.const(w, "float32")), n.const(rho[: len(pairs)], "float32"))
        index = _votes(n, decision, pairs, K)
        if have_proba:
            scores = _probabilities(n, decision, pairs, K, prob_a, prob_b, post)
        elif K == 2:
            if post == "PROBIT":
                n.fail("post_transform 'PROBIT' of a two-class SVM without probabilities (ORT "
                       "fills only the first score column)")  # fmt: skip
            if post not in ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"):
                post_transform(n, decision, post)  # the error naming the choices
            # ORT (1.32, measured): [-s, s] without a transform; [1 - p, p] with p = s's
            # logistic for LOGISTIC and p = s (untransformed) for the softmaxes.
            if post == "NONE":
                scores = b.concat([b.neg(decision), decision], 1)
            else:
                p = b.sigmoid(decision) if post == "LOGISTIC" else decision
                scores = b.concat([b.sub(_c(n, 1.0), p), p], 1)
        else:
            scores = post_transform(n, decision, post)
        return [label_output(n, index, labels, is_string), scores]
    # Linear mode: one coefficient row per class.
    if coefficients.size != K * features:
        n.fail(f"{coefficients.size} coefficients for {K} classes x {features} features")
    w = np.ascontiguousarray(coefficients.reshape(K, features).T)
    raw = b.add(b.matmul(x, n.const(w, "float32")), _c(n, rho[0]))
    index = b.arg_max(raw, 1, keep_dimensions=False, output_data_type="int32")
    if K == 2 and not have_proba:
        # ORT's ChooseClass: the second class where max >= 0.5 (all coefficients >= 0) or
        # max > 0 (some negative), else the arg-max.
        top = b.reduce_max(raw, axes=[1], keep_dimensions=False)
        if float(coefficients.min()) >= 0:
            second = b.greater_or_equal(top, _c(n, 0.5))
        else:
            second = b.greater(top, _c(n, 0.0))
        index = b.where(second, n.const(np.int32(1), "int32"), index)
    return [label_output(n, index, labels, is_string), post_transform(n, raw, post)]
