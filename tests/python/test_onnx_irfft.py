"""DFT with inverse=1, onesided=1 (irfft, what torch exports for torch.fft.irfft / istft in
vocoders and speech enhancement): even and odd signal lengths, dft_length truncating or
zero-padding the spectrum, several axes; compared with numpy's irfft (onnx's reference) and,
for the default length (2 * (bins - 1)), ONNX Runtime, on both backends. With another
dft_length ONNX Runtime 1.32 differs from numpy's irfft and onnx's reference (by 0.04 to 0.7
here); the importer follows the reference."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


@pytest.mark.parametrize(
    "shape,axis,length",
    [((2, 9, 5, 2), 1, None), ((2, 9, 5, 2), 1, 17), ((3, 4, 7, 2), 2, 8), ((1, 6, 2), 1, 5)],
)
def test_irfft_matches_numpy_and_onnxruntime(shape, axis, length):
    rng = np.random.default_rng(sum(shape) + (length or 0))
    x = rng.standard_normal(shape).astype(np.float32)
    inits = [numpy_helper.from_array(np.array(axis, np.int64), "axis")]
    inputs = ["x", "", "axis"]
    if length is not None:
        inits.append(numpy_helper.from_array(np.array(length, np.int64), "n"))
        inputs[1] = "n"
    node = helper.make_node("DFT", inputs, ["y"], inverse=1, onesided=1)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    spectrum = x[..., 0] + 1j * x[..., 1]
    want = np.fft.irfft(spectrum, n=length, axis=axis)[..., None].astype(np.float32)
    expectations = [want]
    if length is None:
        ort = pytest.importorskip("onnxruntime")
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        expectations.append(session.run(None, {"x": x})[0])
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})["y"]
        for expected in expectations:
            assert got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=backend)
