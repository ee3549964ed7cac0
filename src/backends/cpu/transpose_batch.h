// The batched matrix transpose the cpu kernels put around NHWC-only code (conv2d,
// convTranspose2d on NCHW tensors) and use for NCHW <-> NHWC transposes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

// `count` matrices of rows x cols (consecutive) transposed into `out`, rows split across
// threads (each row is transposed on its own, so the split does not change the result).
inline void transpose_batch(const SimdKernels& simd, const float* a, int64_t count, int64_t rows,
                            int64_t cols, float* out, ThreadPool* pool) {
  if (rows == 1 || cols == 1) {
    // A vector transposed is the same floats in the same order (one channel to or from NHWC,
    // e.g. a detector's probability map): a copy.
    if (out == a) return;
    parallel_chunks(pool, count * rows * cols, 16384, [&](int64_t begin, int64_t end) {
      std::memcpy(out + begin, a + begin, static_cast<size_t>(end - begin) * sizeof(float));
    });
    return;
  }
  if (rows < 8) {
    // Few rows (an RGB image to NHWC): split over columns, every row interleaved at once.
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, rows));
    parallel_chunks(pool, count * cols, grain, [&](int64_t begin, int64_t end) {
      while (begin < end) {
        const int64_t m = begin / cols, c0 = begin % cols;
        const int64_t c1 = std::min(cols, c0 + (end - begin));
        simd.interleave_rows(a + m * rows * cols, rows, cols, c0, c1, out + m * rows * cols);
        begin += c1 - c0;
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
