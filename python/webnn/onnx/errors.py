"""The exception class of the ONNX importer, and its warning about float64."""

# C0 controls but the newline (messages list unsupported operators one per line), DEL and
# C1 controls: names and locations come from the model file, and a terminal escape in one
# would otherwise reach the user's terminal as is (issue 8: never echo raw bytes).
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)] if c != 0x0A}


def escape_control(text):
    """`text` with control characters as \\xNN escapes."""
    return str(text).translate(_CONTROL)


class OnnxImportError(ValueError):
    """An ONNX model cannot be imported.

    The message names the node (its name, or its first output when unnamed), the operator
    type with its domain and opset, and the reason. ``unsupported`` lists the operators the
    importer has no converter for, as ``(domain, op_type, opset, count)`` tuples (empty when
    the error is about something else).
    """

    def __init__(self, message, unsupported=()):
        super().__init__(escape_control(message))
        self.unsupported = tuple(unsupported)
        self.needs_constant = None  # set when a run-time value had to be known at import


class Float64Warning(UserWarning):
    """A model's ``double`` (float64) tensors are computed in float32.

    WebNN has no float64 type: with ``float64="float32"`` (the default of ``load``,
    ``convert``, ``import_model`` and ``InferenceSession``) double values that reach run time
    (inputs, outputs, weights and casts used there) are held and computed as float32 (about 7
    significant digits instead of 16; what folds at import stays double), and
    the importer warns with this class once per import (once per ``InferenceSession``,
    whichever input shapes it imports), at the line that called ``load``, ``convert`` or the
    session. ``float64="error"`` refuses such a
    model with an ``OnnxImportError`` naming the first double tensor instead.
    """
