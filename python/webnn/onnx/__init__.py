"""Import ONNX models into WebNN graphs (pure Python over the public builder API).

    graph = webnn.onnx.load(context, "model.onnx", free_dims={"batch": 1})
    webnn.onnx.convert("model.onnx", "model.webnn", input_shapes={"x": [1, 3, 224, 224]})

See docs/onnx.md for the arguments, the supported operators and the numerics.
"""

from .convert import convert, load
from .errors import Float64Warning, OnnxImportError
from .importer import ImportedModel, ModelMetadata, TensorInfo, import_model, supported_operators

__all__ = [
    "Float64Warning",
    "ImportedModel",
    "ModelMetadata",
    "OnnxImportError",
    "TensorInfo",
    "convert",
    "import_model",
    "load",
    "supported_operators",
]
from .session import InferenceSession as InferenceSession
