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

void PaddedPlane::fill(const float* plane, float pad, float* dst) const {
  const int64_t s = g_.stride_w;
  // Image columns [c_lo, c_hi) of the padded extent.
  const int64_t c_lo = std::clamp<int64_t>(g_.pad_left, 0, cols_);
  const int64_t c_hi = std::clamp<int64_t>(g_.pad_left + g_.in_w, c_lo, cols_);
  for (int64_t r = 0; r < rows_; ++r) {
    const int64_t ih = r - g_.pad_top;
    const bool inside = ih >= 0 && ih < g_.in_h;
    const float* src = inside ? plane + ih * g_.in_w - g_.pad_left : nullptr;
    if (s == 1) {
      float* d = dst + r * row_stride_;
      if (!inside) {
        std::fill(d, d + cols_, pad);
        continue;
      }
      std::fill(d, d + c_lo, pad);
      std::memcpy(d + c_lo, src + c_lo, static_cast<size_t>(c_hi - c_lo) * sizeof(float));
      std::fill(d + c_hi, d + cols_, pad);
      continue;
    }
    for (int64_t c = 0; c < cols_; ++c) {
      const float v = inside && c >= c_lo && c < c_hi ? src[c] : pad;
      dst[(c % s) * phase_stride_ + r * row_stride_ + c / s] = v;
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
