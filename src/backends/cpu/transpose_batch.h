// The batched matrix transpose the cpu kernels put around NHWC-only code (conv2d,
// convTranspose2d on NCHW tensors) and use for NCHW <-> NHWC transposes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

// Runs f(m, i0, i1) over ranges [i0, i1) of the `len` lines (rows or columns) of each of the
// `count` matrices m, split across threads in chunks of at least `grain` lines; a chunk that
// crosses a matrix boundary is cut there.
template <class F>
void for_each_line_range(ThreadPool* pool, int64_t count, int64_t len, int64_t grain, F&& f) {
  parallel_chunks(pool, count * len, grain, [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t m = begin / len, i0 = begin % len;
      const int64_t i1 = std::min(len, i0 + (end - begin));
      f(m, i0, i1);
      begin += i1 - i0;
    }
  });
}

// `count` matrices of rows x cols (consecutive) transposed into `out`, rows split across
// threads (each row is transposed on its own, so the split does not change the result).
inline void transpose_batch(const SimdKernels& simd, const float* a, int64_t count, int64_t rows,
                            int64_t cols, float* out, ThreadPool* pool) {
  const int64_t size = rows * cols;
  if (rows == 1 || cols == 1) {
    // A vector transposed is the same floats in the same order (one channel to or from NHWC,
    // e.g. a detector's probability map): a copy.
    if (out == a) return;
    parallel_chunks(pool, count * size, 16384, [&](int64_t begin, int64_t end) {
      std::memcpy(out + begin, a + begin, static_cast<size_t>(end - begin) * sizeof(float));
    });
    return;
  }
  if (rows < 8) {
    // Few rows (an RGB image to NHWC): split over columns, every row interleaved at once.
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, rows));
    for_each_line_range(pool, count, cols, grain, [&](int64_t m, int64_t c0, int64_t c1) {
      simd.interleave_rows(a + m * size, rows, cols, c0, c1, out + m * size);
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cols));
  for_each_line_range(pool, count, rows, grain, [&](int64_t m, int64_t r0, int64_t r1) {
    simd.transpose(a + m * size, rows, cols, r0, r1, out + m * size);
  });
}

}  // namespace webnn
