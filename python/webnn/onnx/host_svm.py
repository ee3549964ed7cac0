"""An SVMClassifier's Platt probabilities, coupled on the host (InferenceSession only).

libsvm's pairwise coupling (ONNX Runtime's multiclass_probability, ml_common.h) is a
Gauss-Seidel sweep over the classes repeated until each row converges: 100 rounds x K steps,
each step reading the one before. A WebNN graph has no loop, so the graph form unrolls every
step (svm.py; K x 100 x a dozen operators: K = 200 took 56 s to import). In a session the graph
computes the one-vs-one decision values and this module finishes them as ORT does: the same
float32 arithmetic, in ORT's order within a step, every row of a chunk at once, a row left
alone once it has converged (ORT's per-row stop), and the loop ended when all rows have.
"""

import numpy as np

from .host_outputs import HostOutput

# ORT's multiclass_probability: at most this many rounds, stopping when the error < 0.005 / K.
ROUNDS = 100
# Elements of the [rows, K, K] Q matrices held at once: rows are coupled in chunks of this size.
CHUNK_ELEMENTS = 1 << 22

_F = np.float32


def _logistic(v):
    """ORT's ComputeLogistic: 1 / (1 + exp(-|v|)), mirrored for v < 0."""
    s = _F(1) / (_F(1) + np.exp(-np.abs(v)))
    return np.where(v < 0, _F(1) - s, s).astype(_F)


def _erf_inv(x):
    """ORT's ErfInv (Winitzki's approximation, a = 0.147), in float32."""
    sign = np.where(x < 0, _F(-1), _F(1)).astype(_F)
    log = np.log((_F(1) - x) * (_F(1) + x))
    v = _F(2 / (3.14159 * 0.147)) + _F(0.5) * log
    v2 = _F(1 / 0.147) * log
    return sign * np.sqrt(-v + np.sqrt(v * v - v2))


def post_transform(scores, name):
    """ORT's write_scores for rows of two or more scores ([N, K] float32)."""
    if name == "NONE":
        return scores
    if name == "LOGISTIC":
        return _logistic(scores)
    if name == "PROBIT":
        return (_F(np.sqrt(2.0)) * _erf_inv(_F(2) * scores - _F(1))).astype(_F)
    top = scores.max(axis=1, keepdims=True)
    if name == "SOFTMAX":
        e = np.exp(scores - top)
        return (e / e.sum(axis=1, keepdims=True, dtype=_F)).astype(_F)
    # SOFTMAX_ZERO: a score within 1e-7 of zero counts for nothing.
    live = (scores > _F(1e-7)) | (scores < _F(-1e-7))
    e = np.where(live, np.exp(scores - top), scores * np.exp(-top))
    return (e / np.where(live, e, _F(0)).sum(axis=1, keepdims=True, dtype=_F)).astype(_F)


def pairwise_matrix(decision, prob_a, prob_b, classes):
    """[N, K, K] r: r[i, j] for i < j is 1 - logistic(A s + B) of pair (i, j)'s decision value,
    clipped to [1e-7, 1 - 1e-7] (ORT's sigmoid_probability), r[j, i] = 1 - r[i, j], 0 on the
    diagonal."""
    rows = decision.shape[0]
    upper_i, upper_j = np.triu_indices(classes, 1)  # ORT's pair order: (0,1), (0,2), ...
    r = _F(1) - _logistic(decision * prob_a + prob_b)
    r = np.minimum(np.maximum(r, _F(1e-7)), _F(1) - _F(1e-7))
    out = np.zeros([rows, classes, classes], _F)
    out[:, upper_i, upper_j] = r
    out[:, upper_j, upper_i] = _F(1) - r
    return out


def couple(r):
    """ORT's multiclass_probability of each row of r ([N, K, K] float32) -> [N, K]."""
    rows, classes, _ = r.shape
    eye = np.eye(classes, dtype=bool)
    # Q[t, t] = sum_j r[j, t]^2 (j != t, r's diagonal is 0); Q[t, j] = -r[j, t] r[t, j].
    q = -(np.swapaxes(r, 1, 2) * r)
    q[:, eye] = (r * r).sum(axis=1, dtype=_F)
    p = np.full([rows, classes], _F(1) / _F(classes), _F)
    eps = _F(0.005) / _F(classes)
    live = np.arange(rows)
    for _ in range(ROUNDS):
        qp = np.matmul(q[live], p[live][:, :, None])[:, :, 0]
        pqp = (p[live] * qp).sum(axis=1, dtype=_F)
        error = np.abs(qp - pqp[:, None]).max(axis=1)
        going = error >= eps  # ORT stops a row once max_error < eps
        live, qp, pqp = live[going], qp[going], pqp[going]
        if live.size == 0:
            break
        qs, ps = q[live], p[live]
        for t in range(classes):
            q_tt = qs[:, t, t]
            diff = (-qp[:, t] + pqp) / q_tt
            ps[:, t] += diff
            grow = _F(1) + diff
            pqp = (pqp + diff * (diff * q_tt + _F(2) * qp[:, t])) / grow / grow
            qp = (qp + diff[:, None] * qs[:, t, :]) / grow[:, None]
            ps /= grow[:, None]
        p[live] = ps
    return p


class CoupledProbabilities(HostOutput):
    """Decision values [N, pairs] -> the classifier's scores [N, K]: Platt probabilities coupled
    as ORT couples them, then the node's post_transform."""

    kind = "tensor"

    def __init__(self, operand, prob_a, prob_b, classes, post, where):
        super().__init__(operand, where)
        pairs = classes * (classes - 1) // 2
        self.prob_a = np.asarray(prob_a[:pairs], _F)
        self.prob_b = np.asarray(prob_b[:pairs], _F)
        self.classes = classes
        self.post = post

    def finish(self, array):
        decision = np.asarray(array, _F)
        chunk = max(1, CHUNK_ELEMENTS // (self.classes * self.classes))
        out = np.empty([decision.shape[0], self.classes], _F)
        with np.errstate(all="ignore"):  # a zero Q[t, t] gives inf / NaN, as in ORT
            for start in range(0, decision.shape[0], chunk):
                part = decision[start : start + chunk]
                r = pairwise_matrix(part, self.prob_a, self.prob_b, self.classes)
                out[start : start + chunk] = post_transform(couple(r), self.post)
        return out
