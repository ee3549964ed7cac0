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
    # One element per byte or two: mapped as they are (the importer holds them, held.py);
    # the packed 4-bit and 2-bit types need unpacking (onnx's loader).
    from .held import HELD

    for elem in (T.BFLOAT16, T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ, 24):
        table[elem] = HELD[elem][0]
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
        if not path.is_file() and "\\" in location:
            # Written on Windows ("data\\w.bin"): the separators of the check above.
            path = Path(base_dir) / location.replace("\\", "/")
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
        shape = _checked_dims(tensor)
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
    _checked_dims(tensor)  # numpy would take a -1 as "whatever fits the data"
    try:
        return numpy_helper.to_array(tensor)
    except Exception as exc:
        raise OnnxImportError(f"tensor '{tensor.name}' cannot be read: {exc}") from exc


def _checked_dims(tensor):
    shape = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in shape):
        raise OnnxImportError(
            f"initializer '{tensor.name}': negative dimension in its shape {list(shape)}"
        )
    return shape


# A sparse tensor is made dense at import: bounded like the other constants the importer makes.
MAX_SPARSE_DENSE_ELEMENTS = 1 << 26


def sparse_to_numpy(sparse, base_dir):
    """A SparseTensorProto (a sparse initializer or Constant's sparse_value) as a dense array.

    onnx.proto: `values` is [NNZ]; `indices` is [NNZ] linearized or [NNZ, rank] coordinates
    of the dense shape `dims`, in ascending order without duplicates. Everything is checked
    before the dense array is allocated."""
    name = sparse.values.name
    what = f"sparse tensor '{name}'"
    dims = [int(d) for d in sparse.dims]
    if any(d < 0 for d in dims):
        raise OnnxImportError(f"{what}: negative dimension in its dense shape {dims}")
    count = 1
    for d in dims:  # Python integers: no overflow
        count *= d
    if count > MAX_SPARSE_DENSE_ELEMENTS:
        raise OnnxImportError(
            f"{what}: dense shape {dims} is too large to make at import ({count} elements, "
            f"at most {MAX_SPARSE_DENSE_ELEMENTS})"
        )
    values = tensor_to_numpy(sparse.values, base_dir)
    if values.ndim != 1:
        raise OnnxImportError(f"{what}: values must be 1-D, got shape {list(values.shape)}")
    nnz = values.shape[0]
    indices = tensor_to_numpy(sparse.indices, base_dir) if sparse.HasField("indices") else None
    if indices is None or indices.size == 0:
        if nnz:
            raise OnnxImportError(f"{what}: {nnz} values but no indices")
        linear = np.zeros(0, np.int64)
    else:
        if not np.issubdtype(indices.dtype, np.integer):
            raise OnnxImportError(f"{what}: indices must be integers, got {indices.dtype}")
        indices = indices.astype(np.int64)
        if indices.shape == (nnz,):
            linear = indices
        elif indices.shape == (nnz, len(dims)):
            if np.any(indices < 0) or np.any(indices >= np.array(dims, np.int64)):
                raise OnnxImportError(f"{what}: an index is outside its dense shape {dims}")
            linear = np.ravel_multi_index(tuple(indices.T), dims) if nnz else indices[:, 0]
        else:
            raise OnnxImportError(
                f"{what}: indices of shape {list(indices.shape)} fit neither [{nnz}] nor "
                f"[{nnz}, {len(dims)}] ({nnz} values, dense rank {len(dims)})"
            )
        if np.any(linear < 0) or np.any(linear >= count):
            raise OnnxImportError(f"{what}: an index is outside its dense shape {dims}")
        if np.any(np.diff(linear) <= 0):
            raise OnnxImportError(f"{what}: indices must be in ascending order, without repeats")
    dense = np.zeros(count, values.dtype)
    dense[linear] = values
    return dense.reshape(dims)
