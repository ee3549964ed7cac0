// Element types and the scalar definitions of element-wise arithmetic, comparison and
// casting: what one element of these ops is, shared by the reference kernels and the cpu
// backend's typed kernels (backends/cpu/typed_elementwise.cc), so that both compute every
// element with the same function.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "webnn/graph.h"
#include "webnn/types.h"

namespace webnn {

template <class T>
inline constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, float16>;

// Calls f(T{}) with the C++ element type of `t` (4-bit types arrive unpacked as int8/uint8).
template <class F>
decltype(auto) dispatch_type(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat32:
      return f(float{});
    case DataType::kFloat16:
      return f(float16{});
    case DataType::kInt32:
      return f(int32_t{});
    case DataType::kUint32:
      return f(uint32_t{});
    case DataType::kInt64:
      return f(int64_t{});
    case DataType::kUint64:
      return f(uint64_t{});
    case DataType::kInt8:
    case DataType::kInt4:
      return f(int8_t{});
    case DataType::kUint8:
    case DataType::kUint4:
      return f(uint8_t{});
  }
  return f(float{});
}

// Float types only (most math ops); other types are rejected earlier by the op schema.
template <class F>
decltype(auto) dispatch_float(DataType t, F&& f) {
  if (t == DataType::kFloat16) return f(float16{});
  return f(float{});
}

template <class T>
double to_double(T v) {
  return static_cast<double>(v);
}

// Round a double to T once. Integers: saturate (NaN -> 0), the casting rule used by
// quantization and float->int conversions.
template <class T>
T saturate_cast(double v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::min();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// Integer arithmetic wraps like two's complement hardware instead of being undefined.
template <class T>
inline T int_binary(OpKind k, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (k) {
    case OpKind::kAdd:
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case OpKind::kSub:
      return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    case OpKind::kMul:
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case OpKind::kDiv:
      if (b == 0) return T(0);  // implementation-defined; never trap
      if constexpr (std::is_signed_v<T>) {
        if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
      }
      return static_cast<T>(a / b);
    case OpKind::kMax:
      return std::max(a, b);
    case OpKind::kMin:
      return std::min(a, b);
    case OpKind::kPow: {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) {
          // Truncated 1 / a^|b|: only |a| == 1 gives a non-zero result.
          if (a == 1) return 1;
          if (a == -1) return (b % 2 == 0) ? T(1) : T(-1);
          return 0;
        }
      }
      U result = 1, base = static_cast<U>(a);
      for (U e = static_cast<U>(b); e; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    }
    default:
      return 0;
  }
}

inline double float_binary(OpKind k, double a, double b) {
  switch (k) {
    case OpKind::kAdd:
      return a + b;
    case OpKind::kSub:
      return a - b;
    case OpKind::kMul:
      return a * b;
    case OpKind::kDiv:
      return a / b;
    case OpKind::kMax:
      return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
    case OpKind::kMin:
      return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b);
    case OpKind::kPow:
      return std::pow(a, b);
    default:
      return 0;
  }
}

template <class T>
inline bool compare(OpKind k, T a, T b) {
  switch (k) {
    case OpKind::kEqual:
      return a == b;
    case OpKind::kNotEqual:
      return a != b;
    case OpKind::kGreater:
      return a > b;
    case OpKind::kGreaterOrEqual:
      return a >= b;
    case OpKind::kLesser:
      return a < b;
    case OpKind::kLesserOrEqual:
      return a <= b;
    case OpKind::kLogicalAnd:
      return a != 0 && b != 0;
    case OpKind::kLogicalOr:
      return a != 0 || b != 0;
    case OpKind::kLogicalXor:
      return (a != 0) != (b != 0);
    default:
      return false;
  }
}

// 4-bit targets hold unpacked int8/uint8 values that must stay in the nibble's range.
struct FourBitRange {
  int64_t lo, hi;
};
inline FourBitRange four_bit_range(DataType t) {
  return t == DataType::kInt4 ? FourBitRange{-8, 7} : FourBitRange{0, 15};
}

// float -> int truncates toward zero and saturates (NaN -> 0); int -> float rounds once;
// int -> int wraps like a C++ conversion (two's complement), except 4-bit targets saturate.
template <class To, class From>
inline To cast_value(From v, DataType to) {
  if constexpr (kIsFloat<To>) {
    return static_cast<To>(v);  // one correctly rounded conversion, also from int64/uint64
  } else if (is_4bit(to)) {
    const FourBitRange r = four_bit_range(to);
    int64_t x;
    if constexpr (kIsFloat<From>) {
      x = saturate_cast<int64_t>(static_cast<double>(v));
    } else if constexpr (std::is_unsigned_v<From>) {
      x = v > static_cast<uint64_t>(r.hi) ? r.hi : static_cast<int64_t>(v);
    } else {
      x = static_cast<int64_t>(v);
    }
    return static_cast<To>(std::clamp(x, r.lo, r.hi));
  } else if constexpr (kIsFloat<From>) {
    return saturate_cast<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace webnn
