"""Sample graphs for pooling and resampling (see test_support_limits.py)."""

from samples_common import const


def _data_type(dtypes):
    # Every operand argument of these ops shares the input's type, output included.
    return dtypes.get("input", dtypes.get("output", "float32"))


def _pool(method, **options):
    def make(b, dtypes):
        x = const(b, [1, 2, 4, 4], _data_type(dtypes))
        return getattr(b, method)(x, **options)

    return make


SAMPLES = {
    "averagePool2d": _pool("average_pool2d", window_dimensions=[2, 2], strides=[2, 2]),
    "l2Pool2d": _pool("l2_pool2d", window_dimensions=[3, 3], padding=[1, 1, 1, 1]),
    "maxPool2d": _pool("max_pool2d", window_dimensions=[2, 2], layout="nhwc"),
    "globalAveragePool": _pool("global_average_pool"),
    "globalMaxPool": _pool("global_max_pool", layout="nhwc"),
    "resample2d": _pool("resample2d", scales=[2.0, 1.5], mode="linear"),
}
