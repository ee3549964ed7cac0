"""Sample graphs for the normalization and quantization families (see test_support_limits.py)."""

from samples_common import const

FLOATS = ("float32", "float16")
QUANTIZED = ("uint8", "int8", "uint32", "int32", "uint4", "int4")


def _types(dtypes, names, default):
    """The requested type for the named argument; the others get a consistent type.

    A float request applies to every float operand (they must all match); any other request
    applies only to its own argument so that the op rejects it.
    """
    ((field, requested),) = dtypes.items()
    base = requested if requested in FLOATS else default
    return {name: (requested if name == field else base) for name in names}


def _batch_normalization(b, dtypes):
    t = _types(dtypes, ["input", "mean", "variance", "scale", "bias", "output"], "float32")
    return b.batch_normalization(
        const(b, [2, 3, 2], t["input"]),
        const(b, [3], t["mean"]),
        const(b, [3], t["variance"], [1, 2, 3]),
        scale=const(b, [3], t["scale"]),
        bias=const(b, [3], t["bias"]),
        epsilon=1e-3,
    )


def _instance_normalization(b, dtypes):
    t = _types(dtypes, ["input", "scale", "bias", "output"], "float32")
    return b.instance_normalization(
        const(b, [1, 2, 2, 2], t["input"]),
        scale=const(b, [2], t["scale"]),
        bias=const(b, [2], t["bias"]),
    )


def _layer_normalization(b, dtypes):
    t = _types(dtypes, ["input", "scale", "bias", "output"], "float32")
    return b.layer_normalization(
        const(b, [2, 3, 2], t["input"]),
        scale=const(b, [3, 2], t["scale"]),
        bias=const(b, [3, 2], t["bias"]),
    )


def _quantize_linear(b, dtypes):
    ((field, requested),) = dtypes.items()
    floats = requested if field in ("input", "scale") and requested in FLOATS else "float32"
    return b.quantize_linear(
        const(b, [2, 4], requested if field == "input" else floats),
        const(b, [1, 2], requested if field == "scale" else floats, [0.5, 2.0]),
        zero_point=const(
            b, [1, 2], requested if field in ("zeroPoint", "output") else "int8", [1, 2]
        ),
    )


def _dequantize_linear(b, dtypes):
    ((field, requested),) = dtypes.items()
    quantized = requested if field in ("input", "zeroPoint") and requested in QUANTIZED else "uint8"
    return b.dequantize_linear(
        const(b, [2, 4], requested if field == "input" else quantized),
        const(b, [1, 2], requested if field in ("scale", "output") else "float32", [0.5, 2.0]),
        zero_point=const(b, [1, 2], requested if field == "zeroPoint" else quantized, [1, 2]),
    )


SAMPLES = {
    "batchNormalization": _batch_normalization,
    "instanceNormalization": _instance_normalization,
    "layerNormalization": _layer_normalization,
    "quantizeLinear": _quantize_linear,
    "dequantizeLinear": _dequantize_linear,
}
