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

// `count` matrices of rows x cols (consecutive) transposed into `out`, split across threads by
// columns of a, that is by rows of out: each thread writes whole output rows. Split by rows of
// a, two threads wrote parts of the same output cache lines (an NCHW -> NHWC transpose of 48
// channels: 192-byte output rows) and the lines bounced between the cores: 59 us on one
// thread, 665 us on two (now 33 and 24). The split never changes the result (a copy).
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
  // Long output rows (>= 1024 floats: NHWC -> NCHW of a large image) are split by rows of a
  // instead, where a column split would leave each thread a narrow strip of every input row;
  // sharing one cache line at each end of a 4 KB output segment costs little.
  const bool by_rows = rows >= 1024;
  const int64_t len = by_rows ? rows : cols;
  // Ranges in whole blocks of 8 lines, so that every line goes through the 8x8 SIMD blocks
  // (chunks of 12 rows left a third of them to the scalar loop).
  const int64_t blocks = (len + 7) / 8;
  const int64_t grain = std::max<int64_t>(1, 4096 / (8 * (by_rows ? cols : rows)));
  for_each_line_range(pool, count, blocks, grain, [&](int64_t m, int64_t b0, int64_t b1) {
    const int64_t i0 = b0 * 8, i1 = std::min(len, b1 * 8);
    if (by_rows) {
      simd.transpose(a + m * size, rows, cols, i0, i1, 0, cols, out + m * size);
    } else {
      simd.transpose(a + m * size, rows, cols, 0, rows, i0, i1, out + m * size);
    }
  });
}

}  // namespace webnn
