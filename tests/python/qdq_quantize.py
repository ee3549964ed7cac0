"""QDQ models made with onnxruntime.quantization.quantize_static, as the int8 tests
(test_qdq_int8.py) and the QDQ benchmark (bench/qdq_models.py) make them: QDQ format, uint8
activations, int8 weights, reduce_range."""

import numpy as np
import onnx
from onnx import numpy_helper
from onnxruntime import quantization


def perturbed(feeds, copies, noise, seed):
    """`copies` calibration batches: the feeds plus noise * N(0, 1)."""
    rng = np.random.default_rng(seed)
    return [
        {k: (v + noise * rng.standard_normal(v.shape)).astype(v.dtype) for k, v in feeds.items()}
        for _ in range(copies)
    ]


def quantize_qdq(src, dst, batches, per_channel):
    """Quantizes the model file src into dst, calibrated on `batches` (last first)."""
    batches = list(batches)

    class Reader(quantization.CalibrationDataReader):
        def get_next(self):
            return batches.pop() if batches else None

    # reduce_range (7-bit weights): ONNX Runtime's u8s8 kernels saturate 16-bit pair sums on
    # CPUs without VNNI otherwise, and then its session is not the QDQ graph's value.
    quantization.quantize_static(
        src,
        dst,
        Reader(),
        quant_format=quantization.QuantFormat.QDQ,
        activation_type=quantization.QuantType.QUInt8,
        weight_type=quantization.QuantType.QInt8,
        per_channel=per_channel,
        reduce_range=True,
    )


def output_step(path):
    """One quantization step of the model's first output: its DequantizeLinear's scale, or
    1/255 for a float op after the last dequantize (a softmax, range [0, 1])."""
    model = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}[model.graph.output[0].name]
    if producer.op_type == "DequantizeLinear":
        return float(inits[producer.input[1]])
    return 1.0 / 255
