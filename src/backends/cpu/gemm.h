// float32 GEMM on the SIMD micro-kernel (simd_kernels.h): B is packed into panels of
// gemm_nr columns (once at compile time when it is a constant), A is read in place through
// tables of row pointers, so one driver serves matmul/gemm (one pointer per row) and
// convolution (one pointer per row and filter tap, padding pointing at zeros).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/aligned_buffer.h"
#include "backends/cpu/simd_kernels.h"

namespace webnn {

class ThreadPool;

// Floats needed by pack_b for a k x n matrix: ceil(n / nr) panels of k rows of nr floats.
// Returns false on overflow.
bool packed_b_floats(int64_t k, int64_t n, int nr, size_t* floats);

// Packs B (k x n, element (i, j) at b[i * row_stride + j * col_stride]) into panels.
void pack_b(const float* b, int64_t row_stride, int64_t col_stride, int64_t k, int64_t n, int nr,
            float* dst);

// One product C (m x n, row stride ldc) = alpha * A * B [+ C] [+ bias] [clamped], where
// A is m x (taps * k_per_tap), read through the job's row-pointer tables, and B is
// (taps * k_per_tap) x n.
struct GemmJob {
  int64_t m = 0, n = 0;
  int64_t taps = 1, k_per_tap = 0;
  int64_t a_offset = 0;             // added to every non-padding A row pointer
  const float* zero = nullptr;      // A pointers equal to this are padding rows of zeros
  const float* b_packed = nullptr;  // pack_b layout, or null: packed per task by pack_b_fn
  float* c = nullptr;
  int64_t ldc = 0;
  const float* col_bias = nullptr;  // n values, added to the finished sum (after alpha, C)
  const float* row_bias = nullptr;  // m values
};

struct GemmEpilogue {
  float alpha = 1.0f;
  bool accumulate = false;  // add to what C holds (e.g. beta * c of gemm)
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
  GemmActivation act = GemmActivation::kNone;  // in the micro-kernel's store (GemmUkernelArgs)
  // Called once per finished block of C (rows x cols at c, row stride ldc), on the thread that
  // computed it, e.g. to run a fused element-wise epilogue while the block is in cache.
  void (*post)(const void* ctx, float* c, int64_t ldc, int64_t rows, int64_t cols) = nullptr;
  const void* post_ctx = nullptr;
};

// Row pointers of A for rows [m0, m0 + gemm_mr) of job `job`: a table of taps * gemm_mr
// pointers (row r of tap t at [t * gemm_mr + r]; rows past the job's m may hold anything).
// `scratch` has room for such a table; the callback may fill it or return its own.
struct GemmAFn {
  const float* const* (*fn)(const void* ctx, int64_t job, int64_t m0, const float** scratch);
  const void* ctx;
};

// Packs rows [k0, k0 + kc) and columns [n0, n0 + nc) of job `job`'s B (only for jobs with
// taps == 1 and no b_packed) into
// ceil(nc / nr) panels of kc rows of nr floats.
struct GemmBFn {
  void (*fn)(const void* ctx, int64_t job, int64_t n0, int64_t nc, int64_t k0, int64_t kc,
             float* dst);
  const void* ctx;
};

// Per-thread buffers, kept by a kernel between runs so that dispatch does not allocate.
struct GemmScratch {
  std::vector<AlignedFloats> b_blocks;
  std::vector<std::vector<const float*>> tables;
};

// The micro-kernel a product runs on: rows per tile (and per tap in the A pointer tables),
// columns per packed B panel.
struct GemmTile {
  int mr, nr;
  void (*ukernel)(const GemmUkernelArgs& args);
};

// The ISA's main tile.
GemmTile main_gemm_tile(const SimdKernels& simd);

// The tile for products of n columns: the three-vector tile when it pads n to fewer columns
// (24 on AVX2: 24 rather than 32), else the main one.
GemmTile gemm_tile_for_columns(const SimdKernels& simd, int64_t n);

// Runs the jobs on the pool (null: on this thread), on `tile` (null: the main tile); B panels,
// A tables and the callbacks follow its mr and nr.
void run_gemm(const SimdKernels& simd, const std::vector<GemmJob>& jobs, const GemmEpilogue& ep,
              GemmAFn a_fn, GemmBFn b_fn, GemmScratch& scratch, ThreadPool* pool,
              const GemmTile* tile = nullptr);

// Pointer table callback for plain row-major A matrices: job j reads `rows` rows of a[j]
// (row stride lda[j]).
struct RowMajorA {
  std::vector<const float*> a;
  std::vector<int64_t> lda;
  int64_t rows = 0;
  int mr = 1;  // SimdKernels::gemm_mr
  GemmAFn fn() const;
};

// Transposes a (rows x cols, row-major) into out (cols x rows), cache-blocked.
void transpose(const float* a, int64_t rows, int64_t cols, float* out);

}  // namespace webnn
