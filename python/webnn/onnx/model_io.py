"""Reading ONNX models: the ModelProto, tensors, and external data (memory-mapped)."""

import os
from pathlib import Path

import numpy as np

from .errors import OnnxImportError


def _onnx():
    try:
        import onnx
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("webnn.onnx needs the 'onnx' package: pip install 'webnn[onnx]'") from exc
    return onnx


def read_model(model, base_dir=None):
    """Return (ModelProto, base directory for external data) for a path, bytes or ModelProto.

    External data is never loaded by onnx itself (it refuses symlinked files, which the
    Hugging Face cache uses); `tensor_to_numpy` maps it on demand.
    """
    onnx = _onnx()
    if isinstance(model, onnx.ModelProto):
        proto, directory = model, None
    elif isinstance(model, (bytes, bytearray, memoryview)):
        try:
            proto, directory = onnx.load_from_string(bytes(model)), None
        except Exception as exc:  # protobuf's DecodeError is no ValueError
            raise OnnxImportError(
                f"the {len(model)} bytes given are not a readable ONNX model: {exc}"
            ) from exc
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.is_file():
            raise OnnxImportError(f"ONNX model file '{path}' does not exist")
        try:
            proto = onnx.load(str(path), load_external_data=False)
        except Exception as exc:  # a truncated or non-ONNX file
            raise OnnxImportError(f"'{path}' is not a readable ONNX model: {exc}") from exc
        directory = path.parent
    else:
        raise TypeError(
            f"model must be a path, bytes or onnx.ModelProto (got {type(model).__name__})"
        )
    if base_dir is not None:
        directory = Path(base_dir)
    return proto, directory


# ONNX TensorProto.DataType -> numpy dtype (as numpy holds it) for the types we read.
def _np_dtypes():
    onnx = _onnx()
    T = onnx.TensorProto
    table = {
        T.FLOAT: np.float32,
        T.DOUBLE: np.float64,
        T.FLOAT16: np.float16,
        T.INT8: np.int8,
        T.UINT8: np.uint8,
        T.INT16: np.int16,
        T.UINT16: np.uint16,
        T.INT32: np.int32,
        T.UINT32: np.uint32,
        T.INT64: np.int64,
        T.UINT64: np.uint64,
        T.BOOL: np.bool_,
    }
    return table


def _external_location(tensor):
    info = {entry.key: entry.value for entry in tensor.external_data}

    def count(key, default):
        text = info.get(key)
        if text is None or text == "":
            return default
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise OnnxImportError(
                f"initializer '{tensor.name}': external data {key} '{text}' is not a "
                "non-negative integer"
            )
        return value

    return info.get("location"), count("offset", 0), count("length", None)


def _check_relative(location, tensor_name):
    """Refuse a location string that leaves the model directory (absolute or with `..`)."""
    if not location:
        raise OnnxImportError(f"initializer '{tensor_name}': external data has no location")
    pure = Path(location)
    if not pure.parts:  # "." or "./": a directory, not a file in it
        raise OnnxImportError(
            f"initializer '{tensor_name}': external data location '{location}' names no file"
        )
    if pure.is_absolute() or location.startswith(("/", "\\")) or ":" in pure.parts[0]:
        raise OnnxImportError(
            f"initializer '{tensor_name}': external data location '{location}' is absolute; "
            "only paths relative to the model directory are read"
        )
    if ".." in Path(location.replace("\\", "/")).parts:
        raise OnnxImportError(
            f"initializer '{tensor_name}': external data location '{location}' leaves the model "
            "directory ('..')"
        )


def tensor_to_numpy(tensor, base_dir):
    """An ONNX TensorProto as a numpy array; external data is memory-mapped (one copy)."""
    onnx = _onnx()
    from onnx import numpy_helper

    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        location, offset, length = _external_location(tensor)
        _check_relative(location, tensor.name)
        if base_dir is None:
            raise OnnxImportError(
                f"initializer '{tensor.name}' stores its data in '{location}', but the model was "
                "given as bytes or a ModelProto: pass base_dir= to say where that file is"
            )
        # User symlinks (a Hugging Face snapshot pointing into ../../blobs) are followed:
        # only the written location string is checked.
        path = Path(base_dir) / location
        if not path.is_file():
            raise OnnxImportError(
                f"initializer '{tensor.name}': external data file '{path}' does not exist"
            )
        dtypes = _np_dtypes()
        if tensor.data_type not in dtypes:
            raise OnnxImportError(
                f"initializer '{tensor.name}': external data of ONNX type "
                f"{onnx.TensorProto.DataType.Name(tensor.data_type)} is not supported"
            )
        dtype = np.dtype(dtypes[tensor.data_type])
        shape = tuple(int(d) for d in tensor.dims)
        if any(d < 0 for d in shape):
            raise OnnxImportError(
                f"initializer '{tensor.name}': negative dimension in its shape {list(shape)}"
            )
        count = 1
        for d in shape:  # Python integers: no overflow; the file size bounds what is mapped
            count *= d
        nbytes = count * dtype.itemsize
        if length is not None and length < nbytes:
            raise OnnxImportError(
                f"initializer '{tensor.name}': external data length {length} is smaller than "
                f"its shape {list(shape)} needs ({nbytes} bytes)"
            )
        if os.path.getsize(path) < offset + nbytes:
            raise OnnxImportError(
                f"initializer '{tensor.name}': '{path}' is too short for offset {offset} + "
                f"{nbytes} bytes"
            )
        if count == 0:
            return np.zeros(shape, dtype)
        array = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape or (1,))
        return array.reshape(shape)
    try:
        return numpy_helper.to_array(tensor)
    except Exception as exc:
        raise OnnxImportError(f"tensor '{tensor.name}' cannot be read: {exc}") from exc
