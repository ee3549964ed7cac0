#include "convert.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "errors.h"

namespace webnn::py {

namespace {

nb::module_ numpy() { return nb::module_::import_("numpy"); }

// Little-endian NumPy dtype strings of each data type's carrier (4-bit: one byte each).
const char* carrier_dtype(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "<f4";
    case DataType::kFloat16:
      return "<f2";
    case DataType::kInt32:
      return "<i4";
    case DataType::kUint32:
      return "<u4";
    case DataType::kInt64:
      return "<i8";
    case DataType::kUint64:
      return "<u8";
    case DataType::kInt8:
    case DataType::kInt4:
      return "i1";
    case DataType::kUint8:
    case DataType::kUint4:
      return "u1";
  }
  return "<f4";
}

// Native-order dtype names for arrays handed back to users.
const char* result_dtype(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat16:
      return "float16";
    case DataType::kInt32:
      return "int32";
    case DataType::kUint32:
      return "uint32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUint64:
      return "uint64";
    case DataType::kInt8:
    case DataType::kInt4:
      return "int8";
    case DataType::kUint8:
    case DataType::kUint4:
      return "uint8";
  }
  return "float32";
}

std::string py_type_name(nb::handle h) { return nb::cast<std::string>(nb::type_name(h.type())); }

}  // namespace

DataType parse_data_type(nb::handle value, const std::string& what) {
  if (!PyUnicode_Check(value.ptr())) {
    throw_error(PyExc_TypeError,
                what + ": data type must be a str (got " + py_type_name(value) + ")");
  }
  std::string name = nb::cast<std::string>(value);
  auto t = webnn::parse_data_type(name);
  if (!t) {
    throw_error(PyExc_ValueError, what + ": Unsupported data type '" + name +
                                      "' (expected one of " + mask_to_string(kAllTypes) + ")");
  }
  return *t;
}

bool is_python_int(nb::handle value) {
  if (PyBool_Check(value.ptr())) return false;
  if (PyLong_Check(value.ptr())) return true;
  // NumPy integer scalars implement __index__ but are not float-like.
  return nb::hasattr(value, "__index__") && !PyFloat_Check(value.ptr()) &&
         nb::hasattr(value, "dtype") && py_type_name(value) != "numpy.bool_" &&
         py_type_name(value) != "numpy.bool";
}

int64_t to_int64(nb::handle value, const std::string& what, bool non_negative) {
  if (!is_python_int(value)) {
    throw_error(PyExc_TypeError, what + " must be an int (got " + py_type_name(value) + ")");
  }
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow < 0 && non_negative) {
    throw_error(PyExc_OverflowError,
                what + " must be non-negative (got " + nb::cast<std::string>(nb::str(value)) + ")");
  }
  if (overflow != 0) {
    throw_error(PyExc_OverflowError, what + " is out of the 64-bit range (got " +
                                         nb::cast<std::string>(nb::str(value)) + ")");
  }
  if (non_negative && v < 0) {
    throw_error(PyExc_OverflowError,
                what + " must be non-negative (got " + std::to_string(v) + ")");
  }
  return v;
}

double to_double(nb::handle value, const std::string& what) {
  if (PyBool_Check(value.ptr()) ||
      !(PyFloat_Check(value.ptr()) || is_python_int(value) || nb::hasattr(value, "__float__"))) {
    throw_error(PyExc_TypeError, what + " must be a number (got " + py_type_name(value) + ")");
  }
  double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

bool to_bool(nb::handle value, const std::string& what) {
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True;
  std::string t = py_type_name(value);
  if (t == "numpy.bool_" || t == "numpy.bool") return PyObject_IsTrue(value.ptr()) == 1;
  throw_error(PyExc_TypeError, what + " must be a bool (got " + t + ")");
}

std::string to_string(nb::handle value, const std::string& what) {
  if (!PyUnicode_Check(value.ptr())) {
    throw_error(PyExc_TypeError, what + " must be a str (got " + py_type_name(value) + ")");
  }
  return nb::cast<std::string>(value);
}

std::vector<nb::handle> to_sequence(nb::handle value, const std::string& what) {
  if (!(PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()))) {
    throw_error(PyExc_TypeError,
                what + " must be a list or tuple (got " + py_type_name(value) + ")");
  }
  std::vector<nb::handle> out;
  for (nb::handle item : value) out.push_back(item);
  return out;
}

namespace {

Dim parse_dynamic_dim(nb::handle value, const std::string& what) {
  nb::dict d = nb::borrow<nb::dict>(value);
  nb::object name, max_size;
  for (auto [k, v] : d) {
    std::string key = PyUnicode_Check(k.ptr()) ? nb::cast<std::string>(k) : "";
    if (key == "name") {
      name = nb::borrow(v);
    } else if (key == "maxSize" || key == "max_size") {
      if (max_size.is_valid()) throw_error(PyExc_ValueError, what + ": duplicate maxSize key");
      max_size = nb::borrow(v);
    } else {
      throw_error(PyExc_ValueError, what + ": dynamic dimension dict has unexpected key " +
                                        nb::cast<std::string>(nb::repr(k)) +
                                        " (expected 'name' and 'maxSize')");
    }
  }
  if (!name.is_valid() || !max_size.is_valid()) {
    throw_error(PyExc_ValueError,
                what + ": dynamic dimension dict needs the keys 'name' and 'maxSize'");
  }
  std::string n = to_string(name, what + " dynamic dimension name");
  int64_t m = to_int64(max_size, what + " dynamic dimension maxSize", true);
  if (m < 1 || m > kMaxDimension) {
    throw_error(PyExc_ValueError, what + ": dynamic dimension maxSize must be in [1, " +
                                      std::to_string(kMaxDimension) + "] (got " +
                                      std::to_string(m) + ")");
  }
  if (n.empty()) throw_error(PyExc_ValueError, what + ": dynamic dimension name is empty");
  return Dim(n, m);
}

}  // namespace

Shape parse_shape(nb::handle value, const std::string& what, bool allow_dynamic) {
  Shape shape;
  for (nb::handle item : to_sequence(value, what)) {
    if (PyDict_Check(item.ptr())) {
      if (!allow_dynamic) {
        throw_error(PyExc_ValueError, what + ": dynamic dimensions are not allowed here");
      }
      shape.push_back(parse_dynamic_dim(item, what));
      continue;
    }
    if (!is_python_int(item)) {
      throw_error(PyExc_TypeError,
                  what + ": dimension must be an int or a dynamic-dimension dict (got " +
                      py_type_name(item) + ")");
    }
    // Ranges and rank are the builder's checks (GraphBuilder::check_shape, Infer).
    shape.push_back(Dim(to_int64(item, what + " dimension", true)));
  }
  return shape;
}

std::vector<int64_t> parse_tensor_shape(nb::handle value, const std::string& what) {
  std::vector<int64_t> shape;
  for (nb::handle item : to_sequence(value, what)) {
    if (PyDict_Check(item.ptr())) {
      throw_error(PyExc_ValueError, what + ": tensor shapes must be static (got a dict)");
    }
    int64_t d = to_int64(item, what + " dimension", true);
    if (d > kMaxDimension) {
      throw_error(PyExc_ValueError, what + ": dimension " + std::to_string(d) + " is out of range");
    }
    shape.push_back(d);
  }
  if (shape.size() > kMaxRank) {
    throw_error(PyExc_ValueError, what + ": rank " + std::to_string(shape.size()) +
                                      " exceeds the maximum of " + std::to_string(kMaxRank));
  }
  return shape;
}

nb::object dim_to_python(const Dim& d) {
  if (d.is_static()) return nb::int_(d.value);
  nb::dict out;
  out["name"] = nb::str(d.name.c_str());
  out["maxSize"] = nb::int_(d.value);
  return out;
}

nb::list shape_to_python(const Shape& shape) {
  nb::list out;
  for (const Dim& d : shape) out.append(dim_to_python(d));
  return out;
}

HostArray adapt_array(nb::handle value, std::optional<DataType> target, const std::string& what) {
  nb::module_ np = numpy();
  nb::object arr = np.attr("asarray")(value);
  if (!target) {
    std::string kind = nb::cast<std::string>(arr.attr("dtype").attr("name"));
    if (kind == "float64") {
      target = DataType::kFloat32;
    } else if (kind == "bool") {
      target = DataType::kUint8;
    } else {
      // ml_dtypes.int4 / uint4 arrays are named "int4" / "uint4" (one value per byte).
      auto t = webnn::parse_data_type(kind);
      if (!t) {
        throw_error(PyExc_ValueError, what + ": Unsupported data type '" + kind +
                                          "' (NumPy dtype has no WebNN equivalent)");
      }
      target = t;
    }
  }
  HostArray out;
  out.data_type = *target;
  for (nb::handle d : arr.attr("shape")) out.shape.push_back(nb::cast<int64_t>(d));
  out.count = nb::cast<uint64_t>(arr.attr("size"));
  if (is_4bit(*target)) {
    // Range-check exact integer values before narrowing to the 4-bit carrier.
    nb::object wide = np.attr("ascontiguousarray")(arr.attr("astype")("<i8")).attr("reshape")(-1);
    bool is_signed = *target == DataType::kInt4;
    int64_t lo = is_signed ? -8 : 0, hi = is_signed ? 7 : 15;
    std::vector<uint8_t> unpacked(out.count);
    nb::bytes raw = nb::cast<nb::bytes>(wide.attr("tobytes")());
    const int64_t* values = reinterpret_cast<const int64_t*>(raw.c_str());
    for (uint64_t i = 0; i < out.count; ++i) {
      if (values[i] < lo || values[i] > hi) {
        throw_error(PyExc_ValueError, what + ": value " + std::to_string(values[i]) +
                                          " at flat index " + std::to_string(i) +
                                          " is out of range for " + data_type_name(*target) + " [" +
                                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
      }
      unpacked[i] = static_cast<uint8_t>(values[i]);
    }
    out.bytes.resize((out.count + 1) / 2);
    pack_4bit(unpacked.data(), out.count, out.bytes.data());
    return out;
  }
  if (std::optional<CarrierView> view = carrier_view(arr, *target)) {
    out.bytes.assign(view->data, view->data + view->nbytes);
    return out;
  }
  nb::object converted = np.attr("ascontiguousarray")(arr.attr("astype")(carrier_dtype(*target)));
  nb::bytes raw = nb::cast<nb::bytes>(converted.attr("tobytes")());
  out.bytes.assign(reinterpret_cast<const uint8_t*>(raw.c_str()),
                   reinterpret_cast<const uint8_t*>(raw.c_str()) + raw.size());
  return out;
}

namespace {

bool same_element_type(nb::dlpack::dtype have, DataType want) {
  using Code = nb::dlpack::dtype_code;
  auto is = [&](Code code, int bits) {
    return have.code == static_cast<uint8_t>(code) && have.bits == bits && have.lanes == 1;
  };
  switch (want) {
    case DataType::kFloat32:
      return is(Code::Float, 32);
    case DataType::kFloat16:
      return is(Code::Float, 16);
    case DataType::kInt32:
      return is(Code::Int, 32);
    case DataType::kUint32:
      return is(Code::UInt, 32);
    case DataType::kInt64:
      return is(Code::Int, 64);
    case DataType::kUint64:
      return is(Code::UInt, 64);
    case DataType::kInt8:
      return is(Code::Int, 8);
    case DataType::kUint8:
      return is(Code::UInt, 8);
    case DataType::kInt4:
    case DataType::kUint4:
      return false;
  }
  return false;
}

}  // namespace

std::optional<CarrierView> carrier_view(nb::handle value, DataType target) {
  if (is_4bit(target)) return std::nullopt;
  // convert=false: never an implicit copy; anything else takes the converting path.
  nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> arr;
  if (!nb::try_cast(value, arr, false)) return std::nullopt;
  if (!same_element_type(arr.dtype(), target)) return std::nullopt;
  CarrierView view;
  view.data = static_cast<const uint8_t*>(arr.data());
  view.count = arr.size();
  view.nbytes = arr.nbytes();
  // The view borrows `value`'s buffer, which the caller keeps alive for the copy.
  return view;
}

nb::object empty_numpy(DataType data_type, const std::vector<int64_t>& shape, uint8_t** data) {
  // numpy.empty and the dtype objects are looked up once: read_tensor runs per inference,
  // where the module import, the dtype string's parsing and an ndarray cast took ~5 us.
  // (Held for the interpreter's lifetime, as the numpy module itself is.)
  static PyObject* const empty = nb::object(numpy().attr("empty")).release().ptr();
  static PyObject* dtypes[kDataTypeCount] = {};
  const size_t slot = static_cast<size_t>(data_type);
  if (dtypes[slot] == nullptr) {
    dtypes[slot] = nb::object(numpy().attr("dtype")(result_dtype(data_type))).release().ptr();
  }
  nb::object py_shape = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  if (!py_shape.is_valid()) throw nb::python_error();
  for (size_t i = 0; i < shape.size(); ++i) {
    PyObject* d = PyLong_FromLongLong(shape[i]);
    if (d == nullptr) throw nb::python_error();
    PyTuple_SET_ITEM(py_shape.ptr(), static_cast<Py_ssize_t>(i), d);
  }
  // A fresh owning array; the host is little-endian, so packed bytes copy straight in.
  nb::object arr =
      nb::steal(PyObject_CallFunctionObjArgs(empty, py_shape.ptr(), dtypes[slot], nullptr));
  if (!arr.is_valid()) throw nb::python_error();
  Py_buffer view;
  if (PyObject_GetBuffer(arr.ptr(), &view, PyBUF_WRITABLE) != 0) throw nb::python_error();
  *data = static_cast<uint8_t*>(view.buf);
  PyBuffer_Release(&view);
  return arr;
}

nb::object to_numpy(DataType data_type, const std::vector<int64_t>& shape,
                    const std::vector<uint8_t>& packed, nb::handle dtype, const std::string& what) {
  return as_requested_dtype(to_numpy(data_type, shape, packed), data_type, dtype, what);
}

nb::object as_requested_dtype(nb::object arr, DataType data_type, nb::handle dtype,
                              const std::string& what) {
  if (dtype.is_none()) return arr;
  // Importing ml_dtypes registers "int4"/"uint4" with NumPy, so names resolve too.
  nb::object ml_dtypes = nb::module_::import_("ml_dtypes");
  std::string want = nb::cast<std::string>(numpy().attr("dtype")(dtype).attr("name"));
  if (want == result_dtype(data_type)) return arr;
  if (is_4bit(data_type) && want == data_type_name(data_type)) {
    return arr.attr("astype")(ml_dtypes.attr(data_type_name(data_type)));
  }
  std::string accepted = std::string("'") + result_dtype(data_type) + "'";
  if (is_4bit(data_type)) {
    accepted += std::string(" or 'ml_dtypes.") + data_type_name(data_type) + "'";
  }
  throw_error(PyExc_ValueError, what + ": dtype '" + want + "' cannot hold a " +
                                    data_type_name(data_type) + " tensor (accepted: " + accepted +
                                    ")");
}

nb::object to_numpy(DataType data_type, const std::vector<int64_t>& shape,
                    const std::vector<uint8_t>& packed) {
  uint64_t count = 1;
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);
  uint8_t* dst = nullptr;
  nb::object arr = empty_numpy(data_type, shape, &dst);
  if (count == 0) return arr;
  if (is_4bit(data_type)) {
    unpack_4bit(packed.data(), count, data_type == DataType::kInt4, dst);
  } else {
    std::memcpy(dst, packed.data(), packed.size());
  }
  return arr;
}

}  // namespace webnn::py
