#include "backends/cpu/plane.h"

#include <algorithm>
#include <cstring>

namespace webnn {

PaddedPlane::PaddedPlane(const WindowGeometry& g) : g_(g) {
  rows_ = g.out_h == 0 ? 0 : (g.out_h - 1) * g.stride_h + (g.k_h - 1) * g.dil_h + 1;
  cols_ = g.out_w == 0 ? 0 : (g.out_w - 1) * g.stride_w + (g.k_w - 1) * g.dil_w + 1;
  row_stride_ = (cols_ + g.stride_w - 1) / g.stride_w;
  phase_stride_ = rows_ * row_stride_;
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
    for (int64_t q = 0; q < s; ++q) {
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
