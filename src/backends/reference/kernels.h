// Shared helpers of the reference kernels: type dispatch, index math, conversions.
// Reference kernels aim at obvious correctness: floating-point math runs in double and is
// rounded once to the output type; integer math is exact (wrapping where C++ would overflow).
#pragma once

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/backend.h"
#include "ops/scalar_ops.h"

namespace webnn {

void register_reference_elementwise(KernelTable& t);
void register_reference_reduction(KernelTable& t);
void register_reference_movement(KernelTable& t);
void register_reference_gather(KernelTable& t);
void register_reference_linalg(KernelTable& t);
void register_reference_conv(KernelTable& t);
void register_reference_pool(KernelTable& t);
void register_reference_normalization(KernelTable& t);
void register_reference_quantization(KernelTable& t);
void register_reference_recurrent(KernelTable& t);

// Row-major strides of a shape.
inline std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Strides of `in` as broadcast to `out` (right-aligned; broadcast axes get stride 0).
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& out) {
  std::vector<int64_t> s(out.size(), 0);
  std::vector<int64_t> own = strides_of(in);
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[i + offset] = in[i] == 1 ? 0 : own[i];
  return s;
}

// Visits every multi-index of `shape` in row-major order: f(flat, index).
template <class F>
void for_each_index(const std::vector<int64_t>& shape, F&& f) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, idx);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

inline int64_t dot_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * strides[i];
  return off;
}

// Reads element i of any view as double (for index tensors and mixed-type helpers).
inline double read_as_double(const TensorView& v, int64_t i) {
  return dispatch_type(v.data_type, [&](auto tag) {
    using T = decltype(tag);
    return to_double(v.as<T>()[i]);
  });
}

// Reads element i of an integer index tensor exactly.
inline int64_t read_index(const TensorView& v, int64_t i) {
  switch (v.data_type) {
    case DataType::kInt32:
      return v.as<int32_t>()[i];
    case DataType::kUint32:
      return v.as<uint32_t>()[i];
    case DataType::kInt64:
      return v.as<int64_t>()[i];
    case DataType::kUint64:
      return static_cast<int64_t>(v.as<uint64_t>()[i]);
    default:
      return static_cast<int64_t>(read_as_double(v, i));
  }
}

}  // namespace webnn
