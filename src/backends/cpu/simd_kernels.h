// The table of SIMD kernels the cpu backend calls: one instance per instruction set, each built
// from the same sources (*.inc) in its own translation unit with its own compiler flags
// (kernels_avx512.cc, kernels_avx2.cc, kernels_generic.cc). Only plain data and function
// pointers cross this boundary, so no inline code compiled for one ISA leaks into another.
#pragma once

#include <cstdint>

#include "backends/cpu/isa.h"

namespace webnn {

// One micro-tile of C (mr x nr, at most gemm_mr x gemm_nr) += A * B, where
//   A row r of tap t is the pointer a[t * gemm_mr + r] (+ a_offset unless it equals `zero`),
//     read at k = 0 .. kc-1 (rows >= mr are not read);
//   B is packed: row k of tap t is the gemm_nr floats at b + (t * b_tap_stride + k) * gemm_nr.
// The result is alpha * (A * B), plus C when `accumulate`, plus col_bias[j] and row_bias[i]
// when given, clamped to [lo, hi] when `clamp`.
enum class GemmActivation : uint8_t { kNone, kRelu, kHardSwish };

struct GemmUkernelArgs {
  int64_t taps = 1;
  int64_t kc = 0;
  const float* const* a = nullptr;
  const float* zero = nullptr;
  int64_t a_offset = 0;
  const float* b = nullptr;
  int64_t b_tap_stride = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  int mr = 0, nr = 0;
  bool accumulate = false;
  float alpha = 1.0f;
  const float* col_bias = nullptr;
  const float* row_bias = nullptr;
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
  // Applied to each finished value as it is stored (after the biases and clamp): the same
  // float32 function as the stand-alone relu / hardSwish kernels, so fusing keeps the bits.
  GemmActivation act = GemmActivation::kNone;
};

enum class BinaryOpF : uint8_t { kAdd, kSub, kMul, kDiv, kMax, kMin };

// Unary float32 operations with a vector implementation. The parametric ones (kLinear,
// kLeakyRelu, kHardSigmoid, kHardSwish) evaluate in double like the reference kernels, since
// rounding alpha/beta to float would lose accuracy when alpha * x + beta cancels.
enum class UnaryOpF : uint8_t {
  kCopy,
  kRelu,
  kClamp,
  kNeg,
  kAbs,
  kFloor,
  kCeil,
  kRoundEven,
  kSqrt,
  kReciprocal,
  kLinear,
  kLeakyRelu,
  kHardSigmoid,
  kHardSwish,
  kExp,
  kSigmoid,
  kTanh,
  kErf,       // float32 (transcendental.inc)
  kGelu,      // erf form, float32
  kLog,       // float32 (elementary.inc)
  kSoftplus,  // float32
  kElu,       // float32; alpha (already rounded to float) in UnaryArgs::alpha
  kSign,
  kSoftsign,  // in double, as the reference
  kSin,       // in double after a reduction by pi/2 (trig.inc)
  kCos,
  kTan,
};

struct UnaryArgs {
  UnaryOpF op = UnaryOpF::kCopy;
  double alpha = 0, beta = 0;  // kLinear, kLeakyRelu, kHardSigmoid, kHardSwish (kElu: alpha)
  float lo = 0, hi = 0;        // kClamp: a NaN bound clamps nothing, as in the reference

  // hardSwish with the WebNN coefficients (x * max(0, min(6, x + 3)) / 6): the form that runs
  // in float32 where SimdKernels::hard_swish_float32 (unary, GemmActivation).
  bool webnn_hard_swish() const {
    return op == UnaryOpF::kHardSwish && alpha == 1.0 / 6.0 && beta == 0.5;
  }
};

// Output pixels [ow_begin, ow_end) of one row of a depthwise conv2d on NHWC data: y[ow][c]
// (y is the whole row). The filter is [kh][kw][channels]; taps in the padding are skipped.
struct DepthwiseRowArgs {
  const float* x = nullptr;  // the image (in_h x in_w x channels)
  int64_t in_h = 0, in_w = 0, channels = 0;
  const float* w = nullptr;
  const float* bias = nullptr;  // channels values or null
  int64_t k_h = 0, k_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t oh = 0, out_w = 0;
  int64_t ow_begin = 0, ow_end = 0;
  float* y = nullptr;                          // the output row (out_w x channels)
  GemmActivation act = GemmActivation::kNone;  // applied to each stored value
};

// One output row of a max or average pool on NHWC data (window taps in the padding are
// skipped; averages divide by the number of taps inside the image).
struct PoolRowArgs {
  const float* x = nullptr;
  int64_t in_h = 0, in_w = 0, channels = 0;
  int64_t win_h = 0, win_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t oh = 0, out_w = 0;
  bool max = true;
  float* y = nullptr;
};

// A planar (NCHW) window operation over one channel plane that has been copied into a padded,
// column-phase-split buffer: padded column c of row r is at
//   src + (c % stride_w) * phase_stride + r * row_stride + c / stride_w,
// so the taps of consecutive outputs are consecutive floats whatever the stride.
// Depthwise: y = bias + sum of w[kh * k_w + kw] * tap. Max pool: NaN-sticky maximum (the
// padding holds -inf). Average pool: sum (the padding holds 0) / (count_h[oh] * count_w[ow]).
struct PlaneArgs {
  const float* src = nullptr;
  int64_t phase_stride = 0, row_stride = 0;
  int64_t k_h = 0, k_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t out_h = 0, out_w = 0;
  const float* w = nullptr;  // depthwise filter taps
  float bias = 0.0f;
  const float* count_h = nullptr;  // average pool
  const float* count_w = nullptr;
  float* y = nullptr;  // out_h x out_w
};

// One row of a normalization: y[i] = float(((x[i] - mean) * inv) * scale + bias) in double,
// each parameter read at p[i * step] (step 0: one value for the row, 1: one per element);
// mean and inv share one step, scale and bias another.
struct NormRowArgs {
  const float* x = nullptr;
  float* y = nullptr;
  int64_t n = 0;
  const double *mean = nullptr, *inv = nullptr, *scale = nullptr, *bias = nullptr;
  int64_t mean_step = 0, inv_step = 0, scale_step = 0, bias_step = 0;
};

enum class PlaneOp : uint8_t { kDepthwise, kMaxPool, kAveragePool };

// Fused chain shapes (chain.inc): y = (x * clamp(x + add)) / div, the operands of the add and
// of the mul in the order given (add_first: add + x; clamped_first: clamp(..) * x).
struct HardSwishChainArgs {
  float add = 0, div = 1;
  UnaryArgs clamp;
  bool add_first = false, clamped_first = false;
};

// y = (x scale_op s) op b, scale_op kMul or kDiv, op kAdd or kSub; s[i * s_step], b[i * b_step]
// (steps 0 or 1); s_first: s * x (mul only), b_first: b op (x scale_op s). (The scaled attention
// scores are x / sqrt(d) + mask.)
struct AffineChainArgs {
  const float* s = nullptr;
  const float* b = nullptr;
  int64_t s_step = 0, b_step = 0;
  BinaryOpF scale_op = BinaryOpF::kMul;
  BinaryOpF op = BinaryOpF::kAdd;
  bool s_first = false, b_first = false;
};

// gelu's erf form as ONNX exports decompose it (x * 0.5 * (1 + erf(x / sqrt 2)) and its
// orderings), from x with three scalars: t = x pre_op c1 (mul or div), e = erf(t),
// f = e + c2, then y by two muls of x, f and c3 in one of three forms:
//   form 0: (x * f) * c3, form 1: (x * c3) * f, form 2: x * (f * c3).
// Every *_swap flag means that step had its two operands the other way round (a NaN keeps
// the first operand's payload, so the order is kept).
struct ErfGeluChainArgs {
  float c1 = 1, c2 = 1, c3 = 0.5f;
  BinaryOpF pre_op = BinaryOpF::kDiv;
  int form = 0;
  bool pre_swap = false, add_swap = false, m1_swap = false, m2_swap = false;
};

// Winograd F(4x4, 3x3) tiles (winograd.inc). Input: the 36 pixels of a 6x6 patch, row-major
// (px[i * 6 + j], each `channels` floats; padding pixels point at zeros), to its transform
// values: element e of channel c at v[e * v_stride + c].
struct WinogradInputArgs {
  const float* const* px = nullptr;
  int64_t channels = 0;
  float* v = nullptr;
  int64_t v_stride = 0;
};

// Output: the 36 products m[e * m_stride + c] of one tile to its 4x4 block of outputs (plus
// bias[c] when given), of which rows x cols are written: (i, j) at
// y[i * y_row_stride + j * y_col_stride + c]. Returns false if any written value is not finite.
struct WinogradOutputArgs {
  const float* m = nullptr;
  int64_t m_stride = 0;
  int64_t channels = 0;
  const float* bias = nullptr;
  float* y = nullptr;
  int64_t y_row_stride = 0, y_col_stride = 0;
  int rows = 4, cols = 4;
};

// The element types of the vectorized casts (cast.inc).
enum class CastType : uint8_t { kFloat32, kInt8, kUint8, kInt32, kUint32, kInt64, kUint64 };

// float32 comparisons (predicate.inc), 1 where true, else 0.
enum class CompareOpF : uint8_t {
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterOrEqual,
  kLesser,
  kLesserOrEqual
};

// The dynamically quantized LSTM's cell for `n` units of one batch row (lstm_cell.inc):
// gate k's input is x[k][j] + float(sum[k][j]) * scale[k][j] (+ bias[k][j]), gates i, o, f
// by sigmoid and g by tanh, c' = f * c + i * g, h = o * tanh(c'), each the float32 operation
// of the unfused graph in its order with the element-wise kernels' sigmoid / tanh.
struct LstmCellArgs {
  const int32_t* sum[4] = {};  // gates i, o, f, g
  const float* x[4] = {};
  const float* scale[4] = {};
  const float* bias[4] = {};  // all null when the node has no bias
  const float* c = nullptr;
  float* next_c = nullptr;
  float* next_h = nullptr;
  int64_t n = 0;
};

struct SimdKernels {
  const char* name;
  int lanes;  // floats per vector register
  int gemm_mr, gemm_nr;
  void (*gemm_ukernel)(const GemmUkernelArgs& args);
  // The same contract for a gemm3_mr x gemm3_nr tile (three vectors of columns; the pointer
  // table and B panels then use gemm3_mr and gemm3_nr): see GemmTile in gemm.h.
  int gemm3_mr, gemm3_nr;
  void (*gemm3_ukernel)(const GemmUkernelArgs& args);
  // hardSwish with the WebNN coefficients runs in float32 (unary and GemmActivation), not in
  // double: where vfma is a hardware FMA.
  bool hard_swish_float32;
  // out[i] = a[i * a_step] op b[i * b_step], steps 0 (broadcast scalar) or 1.
  void (*binary)(BinaryOpF op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                 float* out, int64_t n);
  void (*unary)(const UnaryArgs& args, const float* x, float* y, int64_t n);
  // Softmax along an axis of `len` elements spaced `inner` apart, for the `cols` consecutive
  // columns starting at x; inner == 1: `cols` contiguous rows of `len` elements.
  void (*softmax)(const float* x, float* y, int64_t len, int64_t inner, int64_t cols);
  void (*depthwise_nhwc_row)(const DepthwiseRowArgs& args);
  void (*pool_nhwc_row)(const PoolRowArgs& args);
  void (*plane)(PlaneOp op, const PlaneArgs& args);
  // Row primitives (global pools over NHWC pixels).
  void (*row_add)(const float* x, float* y, int64_t n);  // y += x
  void (*row_max)(const float* x, float* y, int64_t n);  // y = max(y, x), NaN sticks
  // The block rows [r0, r1) x columns [c0, c1) of a (rows x cols, row-major) written
  // transposed into out (cols x rows).
  void (*transpose)(const float* a, int64_t rows, int64_t cols, int64_t r0, int64_t r1, int64_t c0,
                    int64_t c1, float* out);
  // The same transpose for columns [c0, c1) of a matrix of few rows (fewer than 8).
  void (*interleave_rows)(const float* a, int64_t rows, int64_t cols, int64_t c0, int64_t c1,
                          float* out);
  void (*strided_copy)(const float* src, int64_t stride, int64_t n,
                       float* dst);  // dst[i] = src[i*stride]
  float (*reduce_sum)(const float* x, int64_t n);
  float (*reduce_max)(const float* x, int64_t n);  // NaN if any is NaN; -inf when n == 0
  // y[c] = max (or min) over r < rows of x[r * stride + c], c < n (rows >= 1), as the ordered
  // loop finds it: the first NaN met sticks, of equal values the first stays (-0 before +0).
  void (*extreme_cols)(const float* x, int64_t rows, int64_t stride, int64_t n, bool max, float* y);
  // resample2d rows (resample.inc).
  void (*lerp_rows)(const float* a, const float* b, float wa, float wb, float* y, int64_t n);
  void (*lerp_gather)(const float* t, const int32_t* lo, const int32_t* hi, const float* wlo,
                      const float* whi, float* y, int64_t n);
  void (*gather_row)(const float* x, const int32_t* idx, float* y, int64_t n);
  void (*repeat_row)(const float* x, int64_t n, int64_t factor, float* y);
  // Normalization rows (normalization.inc), in double.
  void (*norm_row)(const NormRowArgs& args);
  double (*sum_row_d)(const float* x, int64_t n);
  double (*sum_sq_dev_d)(const float* x, int64_t n, double mean);
  // sum[i] += x[i], or with mean: sum[i] += (x[i] - mean[i])^2.
  void (*acc_row_d)(const float* x, int64_t n, const double* mean, double* sum);
  // Recurrent ops (recurrent.inc), in double: columns [0, n) of y += x^T W, W being k rows of
  // floats spaced ld apart, each column summed over rows in order (the reference's dot).
  void (*gemv_acc_d)(const float* w, int64_t ld, int64_t k, int64_t n, const double* x, double* y);
  // Fused chain shapes in one pass (chain.inc), bit-identical to their steps one by one.
  void (*hard_swish_chain)(const HardSwishChainArgs& args, const float* x, float* y, int64_t n);
  void (*affine_chain)(const AffineChainArgs& args, const float* x, float* y, int64_t n);
  void (*hard_swish_affine_chain)(const HardSwishChainArgs& h, const AffineChainArgs& a,
                                  const float* x, float* y, int64_t n);
  void (*erf_gelu_chain)(const ErfGeluChainArgs& args, const float* x, float* y, int64_t n);
  // y[i] = x[i] cast as ops/scalar_ops.h cast_value casts it: float -> integer truncates
  // toward zero and saturates (NaN -> 0), integer -> float rounds to nearest once, integer ->
  // integer wraps (two's complement).
  void (*cast)(CastType from, CastType to, const void* x, void* y, int64_t n);
  // out[i] = a[i * a_step] op b[i * b_step] ? 1 : 0, steps 0 or 1 (IEEE: NaN unordered).
  void (*compare)(CompareOpF op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                  uint8_t* out, int64_t n);
  // where on 4-byte elements: out[i] = c[i] != 0 ? t[i * t_step] : f[i * f_step], steps 0 or 1.
  void (*select32)(const uint8_t* c, const uint32_t* t, int64_t t_step, const uint32_t* f,
                   int64_t f_step, uint32_t* out, int64_t n);
  void (*lstm_cell)(const LstmCellArgs& args);
  // The extremes of x[0, n) (n >= 1), false when x holds a NaN (dynamic_lstm.cc).
  bool (*min_max)(const float* x, int64_t n, float* mn, float* mx);
  void (*winograd_input_tile)(const WinogradInputArgs& args);
  bool (*winograd_output_tile)(const WinogradOutputArgs& args);
};

// Kernels compiled for each ISA (null when this build has none for it).
const SimdKernels* simd_kernels_avx512();
const SimdKernels* simd_kernels_avx2();
const SimdKernels* simd_kernels_generic();
// The kernels for `isa` if this build has them and this machine runs them, else null.
const SimdKernels* simd_kernels_for(CpuIsa isa);
// The kernels for cpu_isa().
const SimdKernels& simd_kernels();

}  // namespace webnn
