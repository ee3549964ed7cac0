#include "errors.h"

namespace webnn::py {

namespace nb = nanobind;

void throw_error(PyObject* exception_type, const std::string& message) {
  PyErr_SetString(exception_type, message.c_str());
  throw nb::python_error();
}

void throw_status(const Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.kind()) {
    case ErrorKind::kType:
      type = PyExc_TypeError;
      break;
    case ErrorKind::kValue:
      type = PyExc_ValueError;
      break;
    case ErrorKind::kOverflow:
      type = PyExc_OverflowError;
      break;
    case ErrorKind::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case ErrorKind::kIo:
      type = PyExc_OSError;
      break;
    case ErrorKind::kOk:
    case ErrorKind::kState:
    case ErrorKind::kRuntime:
    case ErrorKind::kNotSupported:
    case ErrorKind::kInternal:
      type = PyExc_RuntimeError;
      break;
  }
  throw_error(type, status.message());
}

}  // namespace webnn::py
