#include "backends/cpu/plane.h"

#include <algorithm>
#include <cstring>

namespace webnn {

namespace {

// The per-thread copy of one plane is at most this many floats (1 GiB).
constexpr int64_t kMaxPlaneFloats = int64_t{1} << 28;

// (n - 1) * stride + (k - 1) * dil + 1, the padded extent n windows reach, or -1 on overflow.
int64_t extent(int64_t n, int64_t stride, int64_t k, int64_t dil) {
  if (n == 0) return 0;
  int64_t a = 0, b = 0, e = 0;
  if (__builtin_mul_overflow(n - 1, stride, &a) || __builtin_mul_overflow(k - 1, dil, &b) ||
      __builtin_add_overflow(a, b, &e) || __builtin_add_overflow(e, int64_t{1}, &e)) {
    return -1;
  }
  return e;
}

}  // namespace

PaddedPlane::PaddedPlane(const WindowGeometry& g) : g_(g) {
  rows_ = extent(g.out_h, g.stride_h, g.k_h, g.dil_h);
  cols_ = extent(g.out_w, g.stride_w, g.k_w, g.dil_w);
  if (rows_ < 0 || cols_ < 0 || g.stride_w < 1) {
    rows_ = cols_ = 0;
    return;  // fits_ stays false
  }
  row_stride_ = cols_ / g.stride_w + (cols_ % g.stride_w != 0);
  // Phases q >= cols_ hold no column (a stride wider than the extent).
  phases_ = std::min(g.stride_w, std::max<int64_t>(cols_, 1));
  int64_t floats = 0;
  fits_ = !__builtin_mul_overflow(rows_, row_stride_, &phase_stride_) &&
          !__builtin_mul_overflow(phase_stride_, phases_, &floats) && floats <= kMaxPlaneFloats;
}

void PaddedPlane::fill(const SimdKernels& simd, const float* plane, float pad, float* dst) const {
  const int64_t s = g_.stride_w;
  // Image columns [c_lo, c_hi) of the padded extent.
  const int64_t c_lo = std::clamp<int64_t>(g_.pad_left, 0, cols_);
  const int64_t c_hi = std::clamp<int64_t>(g_.pad_left + g_.in_w, c_lo, cols_);
  for (int64_t r = 0; r < rows_; ++r) {
    const int64_t ih = r - g_.pad_top;
    const bool inside = ih >= 0 && ih < g_.in_h;
    // Row ih of the image, indexed by padded column (only read inside [c_lo, c_hi)).
    const float* src = inside ? plane + ih * g_.in_w : nullptr;
    if (s == 1) {
      float* d = dst + r * row_stride_;
      if (!inside) {
        std::fill(d, d + cols_, pad);
        continue;
      }
      std::fill(d, d + c_lo, pad);
      if (c_hi > c_lo) {
        std::memcpy(d + c_lo, src + (c_lo - g_.pad_left),
                    static_cast<size_t>(c_hi - c_lo) * sizeof(float));
      }
      std::fill(d + c_hi, d + cols_, pad);
      continue;
    }
    // Phase q holds padded columns q, q + s, q + 2s, ...: i < i_lo and i >= i_hi are padding.
    for (int64_t q = 0; q < phases_; ++q) {
      float* d = dst + q * phase_stride_ + r * row_stride_;
      const int64_t n = (cols_ - q + s - 1) / s;
      const int64_t i_lo = inside ? std::min(n, (std::max<int64_t>(c_lo - q, 0) + s - 1) / s) : n;
      const int64_t i_hi = inside ? std::clamp<int64_t>((c_hi - q + s - 1) / s, i_lo, n) : n;
      std::fill(d, d + i_lo, pad);
      if (i_hi > i_lo) {
        simd.strided_copy(src + (q + i_lo * s - g_.pad_left), s, i_hi - i_lo, d + i_lo);
      }
      std::fill(d + i_hi, d + n, pad);
    }
  }
}

PlaneArgs PaddedPlane::args(const float* dst) const {
  PlaneArgs a;
  a.src = dst;
  a.phase_stride = phase_stride_;
  a.row_stride = row_stride_;
  a.k_h = g_.k_h;
  a.k_w = g_.k_w;
  a.stride_h = g_.stride_h;
  a.stride_w = g_.stride_w;
  a.dil_h = g_.dil_h;
  a.dil_w = g_.dil_w;
  a.out_h = g_.out_h;
  a.out_w = g_.out_w;
  return a;
}

}  // namespace webnn
