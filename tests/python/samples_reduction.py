"""Sample graphs for the reduction family (see test_support_limits.py)."""

from samples_common import const


def _reduce(op):
    def make(b, dtypes):
        t = dtypes.get("input", dtypes.get("output", "float32"))
        return getattr(b, op)(const(b, [2, 3], t), axes=[1])

    return make


def _arg(op):
    def make(b, dtypes):
        # The output type is chosen by output_data_type, independently of the input's.
        return getattr(b, op)(
            const(b, [2, 3], dtypes.get("input", "float32")),
            1,
            output_data_type=dtypes.get("output", "int32"),
        )

    return make


def _cumulative_sum(b, dtypes):
    t = dtypes.get("input", dtypes.get("output", "float32"))
    return b.cumulative_sum(const(b, [2, 3], t), 1)


SAMPLES = {}
for spec, py in [
    ("reduceL1", "reduce_l1"),
    ("reduceL2", "reduce_l2"),
    ("reduceLogSum", "reduce_log_sum"),
    ("reduceLogSumExp", "reduce_log_sum_exp"),
    ("reduceMax", "reduce_max"),
    ("reduceMean", "reduce_mean"),
    ("reduceMin", "reduce_min"),
    ("reduceProduct", "reduce_product"),
    ("reduceSum", "reduce_sum"),
    ("reduceSumSquare", "reduce_sum_square"),
]:
    SAMPLES[spec] = _reduce(py)
SAMPLES["argMin"] = _arg("arg_min")
SAMPLES["argMax"] = _arg("arg_max")
SAMPLES["cumulativeSum"] = _cumulative_sum
