"""The one exception class of the ONNX importer."""


class OnnxImportError(ValueError):
    """An ONNX model cannot be imported.

    The message names the node (its name, or its first output when unnamed), the operator
    type with its domain and opset, and the reason. ``unsupported`` lists the operators the
    importer has no converter for, as ``(domain, op_type, opset, count)`` tuples (empty when
    the error is about something else).
    """

    def __init__(self, message, unsupported=()):
        super().__init__(message)
        self.unsupported = tuple(unsupported)
        self.needs_constant = None  # set when a run-time value had to be known at import
