// The one translator from core Status values to Python exceptions (spec/api.md §5).
#pragma once

#include <nanobind/nanobind.h>

#include "webnn/status.h"

namespace webnn::py {

[[noreturn]] void throw_status(const Status& status);
[[noreturn]] void throw_error(PyObject* exception_type, const std::string& message);

inline void check(const Status& status) {
  if (!status.is_ok()) throw_status(status);
}

template <class T>
T unwrap(Expected<T> e) {
  if (!e.has_value()) throw_status(e.status());
  return std::move(e).value();
}

}  // namespace webnn::py
