// Padded, column-phase-split copies of one channel plane for the planar (NCHW) window kernels
// (PlaneArgs in simd_kernels.h).
#pragma once

#include <cstdint>

#include "backends/cpu/simd_kernels.h"

namespace webnn {

struct WindowGeometry {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t k_h = 1, k_w = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};

class PaddedPlane {
 public:
  explicit PaddedPlane(const WindowGeometry& g);
  // False when the padded copy would be absurd (a stride of 2^62 between two windows makes it
  // span 2^62 columns in 2^62 phases; found by fuzzing): the caller then declines the node
  // and the reference kernel computes it.
  bool fits() const { return fits_; }
  // Floats of the buffer fill() writes.
  int64_t floats() const { return phase_stride_ * phases_; }
  // Copies `plane` (in_h x in_w) into dst, `pad` outside the image.
  void fill(const SimdKernels& simd, const float* plane, float pad, float* dst) const;
  // PlaneArgs with the source and geometry set.
  PlaneArgs args(const float* dst) const;

 private:
  WindowGeometry g_;
  int64_t rows_ = 0, cols_ = 0;  // padded extent the outputs' windows reach
  int64_t row_stride_ = 0, phase_stride_ = 0;
  int64_t phases_ = 0;  // column phases that hold a column (at most cols_)
  bool fits_ = false;
};

}  // namespace webnn
