// Integer GEMM for the quantized conv2d (qconv.cc): C (int32) = A * B, exact, where
//  - A is int16 rows holding x - x_zp (|value| <= 255: any uint8/int8 minus its zero point),
//    each row padded with zeros to an even length kp;
//  - B is the weights minus their zero point (|value| <= 255 likewise), packed once at compile
//    time into int16 panels of kQGemmNr columns, each
//    panel kp / 2 pairs of rows, a pair holding the two int16 values of column j at
//    [(pair * kQGemmNr + j) * 2 + {0, 1}] (zeros past k and past n).
// Every ISA reads the same packing: AVX2 multiplies pairs with vpmaddwd (int16 x int16 summed
// in pairs into int32: 2 * 255 * 255 is far from overflow), AVX-512 VNNI with vpdpwssd (the same
// products, accumulated in one instruction), the generic path in plain int32 arithmetic.
// Results are exact integers, so every path gives the same bits.
#pragma once

#include <cstdint>
#include <vector>

namespace webnn {

constexpr int kQGemmMr = 4;
constexpr int kQGemmNr = 16;

// One tile: c[r * kQGemmNr + j] = sum over pairs of A row r (a + r * lda) times panel column j,
// for r < mr (rows past mr are neither read nor written), all kQGemmNr columns.
struct QGemmTile {
  const int16_t* a = nullptr;
  int64_t lda = 0;  // int16 values between rows
  int mr = kQGemmMr;
  const int16_t* b = nullptr;  // one panel
  int64_t pairs = 0;           // kp / 2
  int32_t* c = nullptr;        // mr x kQGemmNr
};
using QGemmUkernel = void (*)(const QGemmTile& t);

enum class QGemmIsa { kGeneric, kAvx2, kAvx512Vnni };

// The micro-kernel for `isa`, or null when this build or machine cannot run it.
QGemmUkernel qgemm_ukernel_for(QGemmIsa isa);
// The fastest usable one (capped by WEBNN_CPU_ISA like the float kernels).
QGemmUkernel qgemm_ukernel();
const char* qgemm_isa_name();

// Per-ISA kernels (qgemm_generic.cc, qgemm_avx2.cc, qgemm_avx512.cc); null when not built.
QGemmUkernel qgemm_ukernel_generic();
QGemmUkernel qgemm_ukernel_avx2();
QGemmUkernel qgemm_ukernel_avx512_vnni();

// uint8 x int8 tiles for AVX-512 VNNI: vpdpbusd adds four u8 * s8 products into each int32
// lane without saturation (exact, unlike vpmaddubsw), twice the products of vpdpwssd per
// instruction and half the weight bytes. A is uint8 rows zero-padded to qgemm_kq(k); B is
// int8, packed by qgemm_pack_b_s8 into panels of kQGemmNr columns, each kq / 4 quads of rows,
// quad q of column j at [(q * kQGemmNr + j) * 4 + {0..3}]. c[r * kQGemmNr + j] = the exact sum.
// With panels > 1 (up to kQGemmU8MaxPanels) one call computes that many panels, panel_stride
// int8 values apart, into c + p * kQGemmMr * kQGemmNr: each loaded row quad then serves every
// panel (fewer loads per product, more independent accumulators).
constexpr int kQGemmU8MaxPanels = 4;
struct QGemmU8Tile {
  const uint8_t* a = nullptr;
  int64_t lda = 0;
  int mr = kQGemmMr;
  const int8_t* b = nullptr;  // the first panel
  int64_t quads = 0;          // kq / 4
  int32_t* c = nullptr;       // panels x (kQGemmMr x kQGemmNr), rows past mr untouched
  int panels = 1;
  int64_t panel_stride = 0;
};
using QGemmU8Ukernel = void (*)(const QGemmU8Tile& t);
QGemmU8Ukernel qgemm_u8s8_ukernel_avx512_vnni();  // null when not built
// The u8s8 tile when the int16 micro-kernel in use is the VNNI one (so WEBNN_CPU_ISA caps it
// too), else null.
QGemmU8Ukernel qgemm_u8s8_ukernel();
inline int64_t qgemm_kq(int64_t k) { return (k + 3) & ~int64_t{3}; }
// The same tiles with ONNX Runtime's u8s8 arithmetic on x86 without VNNI (python/webnn/onnx/
// ops/ort_u8s8.py): c = sum over pairs j of sat16(a[2j] * b[2j] + a[2j+1] * b[2j+1]), each
// pair of adjacent k (within a quad of the packing) clamped to int16 before the exact int32
// sum. That is vpmaddubsw then vpmaddwd by ones; where no pair of B can leave int16 (same-sign
// pairs with |b0 + b1| <= 128) it is also the exact product. Generic: the same in scalar int32.
QGemmU8Ukernel qgemm_u8s8_sat_ukernel_generic();
QGemmU8Ukernel qgemm_u8s8_sat_ukernel_avx2();  // null when not built
// AVX2 when the int16 micro-kernel in use is AVX2 or better (WEBNN_CPU_ISA caps it), else
// the generic one.
QGemmU8Ukernel qgemm_u8s8_sat_ukernel();
// Whether the int8 pair (b0, b1) can saturate in int16 for some uint8 (a0, a1).
inline bool qgemm_u8s8_pair_saturates(int32_t b0, int32_t b1) {
  const int32_t pos = (b0 > 0 ? b0 : 0) + (b1 > 0 ? b1 : 0);
  const int32_t neg = (b0 < 0 ? b0 : 0) + (b1 < 0 ? b1 : 0);
  return 255 * pos > 32767 || 255 * neg < -32768;
}
// Packs int8 B (k x n row-major, element (i, j) = b[i * n + j]) for the u8s8 tiles.
std::vector<int8_t> qgemm_pack_b_s8(const int8_t* b, int64_t k, int64_t n);

// Packs B (k x n, element (i, j) = b[i * row_stride + j * col_stride], |values| <= 255) into
// ceil(n / kQGemmNr) panels; returns the int16 buffer.
std::vector<int16_t> qgemm_pack_b(const int16_t* b, int64_t row_stride, int64_t col_stride,
                                  int64_t k, int64_t n);
inline int64_t qgemm_kp(int64_t k) { return (k + 1) & ~int64_t{1}; }
inline int64_t qgemm_panels(int64_t n) { return (n + kQGemmNr - 1) / kQGemmNr; }

// How an int32 sum becomes an (u)int8 output, as quantizeLinear(float(sum + bias) *
// multiplier, scale 1, zero_point) computes it.
struct Requant {
  const int32_t* bias = nullptr;  // per column, or null
  const float* multiplier = nullptr;
  bool per_column = false;  // multiplier per column, else multiplier[0]
  int32_t zero_point = 0;
  bool is_signed = false;  // int8 output, else uint8
  // Node::Quantized::table, from this call's first column on (table_per_column: 256 entries
  // per column), or null.
  const uint8_t* table = nullptr;
  bool table_per_column = false;
};

// C = A * B for rows [0, m) of A and columns [0, n) (B packed by qgemm_pack_b for k), each
// element requantized and stored at y[row * y_row + col * y_col].
void qgemm_rows(QGemmUkernel uk, const int16_t* a, int64_t lda, int64_t m, const int16_t* b_packed,
                int64_t k, int64_t n, const Requant& rq, uint8_t* y, int64_t y_row, int64_t y_col);

// C = A * B like qgemm_rows, each int32 sum stored as float(sum) at y[row * y_row + col] (the
// float-output matmul of graph/passes/integer_matmul.cc: sums below 2^24, so exact).
void qgemm_rows_f32(QGemmUkernel uk, const int16_t* a, int64_t lda, int64_t m,
                    const int16_t* b_packed, int64_t k, int64_t n, float* y, int64_t y_row);

// qgemm_rows_f32 on the u8s8 tiles: y[row * y_row + col] = float(sum a * b - offset[col] +
// row_add[row]) for A uint8 rows (lda >= qgemm_kq(k), zero-padded) and B packed by
// qgemm_pack_b_s8 (n columns); row_add may be null (0).
void qgemm_rows_u8_f32(QGemmU8Ukernel uk, const uint8_t* a, int64_t lda, int64_t m,
                       const int8_t* b_packed, int64_t k, int64_t n, const int32_t* offset,
                       const int32_t* row_add, float* y, int64_t y_row);

// qgemm_rows on the u8s8 tiles: the int32 sum a * b - offset[col] + row_add[row] (row_add
// may be null) requantized like qgemm_rows (y_col 1), the same bytes as the int16 tiles give
// for the same exact sums.
void qgemm_rows_u8(QGemmU8Ukernel uk, const uint8_t* a, int64_t lda, int64_t m,
                   const int8_t* b_packed, int64_t k, int64_t n, const int32_t* offset,
                   const int32_t* row_add, const Requant& rq, uint8_t* y, int64_t y_row);

// The transposed form, for NCHW outputs: rows of C are output channels, columns pixels.
// C = W * X for W (m x k, int16 rows at w + row * ldw, zero past k up to qgemm_kp(k)) and X
// packed by columns into panels like qgemm_pack_b (x_panels, n columns); each element
// requantized with the parameters of its ROW (rq.per_column, rq.bias, rq.table_per_column
// then index rows) and stored at y[row * y_row + col] (contiguous runs of columns).
void qgemm_cols(QGemmUkernel uk, const int16_t* w, int64_t ldw, int64_t m, const int16_t* x_panels,
                int64_t k, int64_t n, const Requant& rq, uint8_t* y, int64_t y_row);

// nearbyint(v) in the default rounding mode (half to even) for |v| < 2^22, without a libm
// call: adding 1.5 * 2^23 leaves no fraction bits, so the sum is rounded to an integer.
inline float round_half_even_small(float v) {
  // Without -ffast-math the compiler keeps both operations (they are not an identity).
  constexpr float kMagic = 12582912.0f;
  return (v + kMagic) - kMagic;
}

// The depthwise row step: acc[i] += sum over t < taps of w[t] * rows[t][i], for i < n (exact
// int32; |rows|, |w| <= 255, taps <= 255 * 255 keeps the sums far from overflow).
using QDwRowFn = void (*)(int32_t* acc, const int16_t* const* rows, const int32_t* w, int64_t taps,
                          int64_t n);
QDwRowFn qdw_row_generic();
QDwRowFn qdw_row_avx2();  // null when not built
QDwRowFn qdw_row();       // the fastest usable one (AVX2 when qgemm_ukernel() is AVX2 or better)

// A run of requantizations: out[i] = the (u)int8 byte of requantize(acc[i] + bias[i],
// mult[mult_per_element ? i : 0], zero_point, is_signed), for i < n: the same float32
// operations as requantize() (convert, multiply, clamp, round half to even), so every ISA
// gives the same bytes.
struct QRequantRun {
  const int32_t* acc = nullptr;
  int64_t n = 0;
  const int32_t* bias = nullptr;  // per element, or null
  const float* mult = nullptr;
  bool mult_per_element = false;
  int32_t zero_point = 0;
  bool is_signed = false;
  uint8_t* out = nullptr;
};
using QRequantFn = void (*)(const QRequantRun& r);
QRequantFn qrequant_generic();
QRequantFn qrequant_avx2();  // null when not built
QRequantFn qrequant();       // the fastest usable one

// quantizeLinear with scale 1 of a float32 run (cpu/quantize_linear.cc): out[i] = the byte of
// nearbyint(clamp(x[i], lo - zp, hi - zp)) + zp, NaN to 0 (stored as zp + (-zp)).
using QQuantizeFn = void (*)(const float* x, int64_t n, int32_t zero_point, bool is_signed,
                             uint8_t* out);
QQuantizeFn qquantize_generic();
QQuantizeFn qquantize_avx2();  // null when not built
QQuantizeFn qquantize();

// quantizeLinear with scale 1 then dequantizeLinear with scale d of a float32 run
// (cpu/quantize_linear.cc, fake_quantize): y[i] = nearbyint(clamp(x[i], lo, hi)) * d with lo,
// hi the type's bounds minus the zero point, nan_out for NaN.
using QFakeQuantizeFn = void (*)(const float* x, int64_t n, float lo, float hi, float d,
                                 float nan_out, float* y);
QFakeQuantizeFn qfake_quantize_generic();
QFakeQuantizeFn qfake_quantize_avx2();  // null when not built
QFakeQuantizeFn qfake_quantize();

// One requantized value (shared by the GEMM and the depthwise path).
uint8_t requantize(int32_t acc, float multiplier, int32_t zero_point, bool is_signed);

}  // namespace webnn
