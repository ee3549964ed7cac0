// The batched matrix transpose the cpu kernels put around NHWC-only code (conv2d,
// convTranspose2d on NCHW tensors) and use for NCHW <-> NHWC transposes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

// `count` matrices of rows x cols (consecutive) transposed into `out`, rows split across
// threads (each row is transposed on its own, so the split does not change the result).
inline void transpose_batch(const SimdKernels& simd, const float* a, int64_t count, int64_t rows,
                            int64_t cols, float* out, ThreadPool* pool) {
  if (rows < 8 && cols >= 64) {
    // Few long rows (an RGB image to NHWC): split the columns instead, each output row of
    // `rows` values gathered from the `rows` input streams.
    parallel_chunks(pool, count * cols, 8192, [&](int64_t begin, int64_t end) {
      while (begin < end) {
        const int64_t m = begin / cols, j0 = begin % cols;
        const int64_t j1 = std::min(cols, j0 + (end - begin));
        const float* src = a + m * rows * cols;
        float* dst = out + m * rows * cols;
        for (int64_t j = j0; j < j1; ++j) {
          for (int64_t i = 0; i < rows; ++i) dst[j * rows + i] = src[i * cols + j];
        }
        begin += j1 - j0;
      }
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cols));
  parallel_chunks(pool, count * rows, grain, [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t m = begin / rows, r0 = begin % rows;
      const int64_t r1 = std::min(rows, r0 + (end - begin));
      simd.transpose(a + m * rows * cols, rows, cols, r0, r1, out + m * rows * cols);
      begin += r1 - r0;
    }
  });
}

}  // namespace webnn
