// Error values returned by every core API: the core never throws across its boundary.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace webnn {

// Each kind maps to one Python exception class (python/src/errors.cc).
enum class ErrorKind {
  kOk,
  kType,          // TypeError: wrong kind of argument
  kValue,         // ValueError: well-typed but invalid value
  kOverflow,      // OverflowError: negative value for an unsigned quantity
  kState,         // RuntimeError: object used in a state that forbids it (built, destroyed)
  kRuntime,       // RuntimeError: dispatch binding or backend execution failure
  kNotSupported,  // RuntimeError: backend cannot compile the graph
  kNotFound,      // FileNotFoundError
  kIo,            // OSError
  kInternal,      // RuntimeError: a bug in this engine
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool is_ok() const { return kind_ == ErrorKind::kOk; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_ = ErrorKind::kOk;
  std::string message_;
};

// Concatenates any streamable values; used to build error messages.
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

template <class... Args>
Status make_error(ErrorKind kind, const Args&... args) {
  return Status(kind, str_cat(args...));
}

// A value or the Status explaining why there is none.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Expected(Status status) : value_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return value_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(value_); }
  const T& value() const& { return std::get<0>(value_); }
  T&& value() && { return std::get<0>(std::move(value_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& status() const { return std::get<1>(value_); }

 private:
  std::variant<T, Status> value_;
};

#define WEBNN_CONCAT_INNER(a, b) a##b
#define WEBNN_CONCAT(a, b) WEBNN_CONCAT_INNER(a, b)

#define WEBNN_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    ::webnn::Status webnn_status_ = (expr);           \
    if (!webnn_status_.is_ok()) return webnn_status_; \
  } while (0)

#define WEBNN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.has_value()) return tmp.status();        \
  lhs = std::move(tmp).value()

#define WEBNN_ASSIGN_OR_RETURN(lhs, expr) \
  WEBNN_ASSIGN_OR_RETURN_IMPL(WEBNN_CONCAT(webnn_expected_, __LINE__), lhs, expr)

// Internal invariant: aborts. Never reached by user input.
#define WEBNN_CHECK(cond)                                          \
  do {                                                             \
    if (!(cond)) ::webnn::check_failed(#cond, __FILE__, __LINE__); \
  } while (0)

[[noreturn]] void check_failed(const char* condition, const char* file, int line);

}  // namespace webnn
