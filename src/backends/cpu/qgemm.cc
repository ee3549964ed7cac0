// The integer GEMM driver, packing, requantization and micro-kernel selection (qgemm.h).
#include "backends/cpu/qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/isa.h"

namespace webnn {

namespace {

bool machine_has_vnni() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

}  // namespace

QGemmUkernel qgemm_ukernel_for(QGemmIsa isa) {
  switch (isa) {
    case QGemmIsa::kAvx512Vnni:
      // cpu_isa_usable checks AVX-512 F/DQ/BW/VL and the OS state; VNNI is one more bit.
      return cpu_isa_usable(CpuIsa::kAvx512) && machine_has_vnni() ? qgemm_ukernel_avx512_vnni()
                                                                   : nullptr;
    case QGemmIsa::kAvx2:
      return cpu_isa_usable(CpuIsa::kAvx2) ? qgemm_ukernel_avx2() : nullptr;
    case QGemmIsa::kGeneric:
      return qgemm_ukernel_generic();
  }
  return nullptr;
}

namespace {

QGemmIsa best_isa() {
  const CpuIsa cap = cpu_isa();
  if (cap == CpuIsa::kAvx512 && qgemm_ukernel_for(QGemmIsa::kAvx512Vnni)) {
    return QGemmIsa::kAvx512Vnni;
  }
  if (cap != CpuIsa::kGeneric && qgemm_ukernel_for(QGemmIsa::kAvx2)) return QGemmIsa::kAvx2;
  return QGemmIsa::kGeneric;
}

}  // namespace

QGemmUkernel qgemm_ukernel() {
  static const QGemmUkernel uk = qgemm_ukernel_for(best_isa());
  return uk;
}

QGemmU8Ukernel qgemm_u8s8_ukernel() {
  static const QGemmU8Ukernel uk =
      best_isa() == QGemmIsa::kAvx512Vnni ? qgemm_u8s8_ukernel_avx512_vnni() : nullptr;
  return uk;
}

std::vector<int8_t> qgemm_pack_b_s8(const int8_t* b, int64_t k, int64_t n) {
  const int64_t quads = qgemm_kq(k) / 4;
  std::vector<int8_t> out(static_cast<size_t>(qgemm_panels(n) * quads * kQGemmNr * 4), 0);
  for (int64_t p = 0; p < qgemm_panels(n); ++p) {
    for (int64_t q = 0; q < quads; ++q) {
      for (int64_t j = 0; j < kQGemmNr && p * kQGemmNr + j < n; ++j) {
        for (int64_t i = 0; i < 4 && 4 * q + i < k; ++i) {
          out[((p * quads + q) * kQGemmNr + j) * 4 + i] = b[(4 * q + i) * n + p * kQGemmNr + j];
        }
      }
    }
  }
  return out;
}

QRequantFn qrequant() {
  static const QRequantFn fn =
      best_isa() != QGemmIsa::kGeneric && qrequant_avx2() ? qrequant_avx2() : qrequant_generic();
  return fn;
}

QFakeQuantizeFn qfake_quantize() {
  static const QFakeQuantizeFn fn = best_isa() != QGemmIsa::kGeneric && qfake_quantize_avx2()
                                        ? qfake_quantize_avx2()
                                        : qfake_quantize_generic();
  return fn;
}

QQuantizeFn qquantize() {
  static const QQuantizeFn fn =
      best_isa() != QGemmIsa::kGeneric && qquantize_avx2() ? qquantize_avx2() : qquantize_generic();
  return fn;
}

QDwRowFn qdw_row() {
  static const QDwRowFn fn =
      best_isa() != QGemmIsa::kGeneric && qdw_row_avx2() ? qdw_row_avx2() : qdw_row_generic();
  return fn;
}

const char* qgemm_isa_name() {
  switch (best_isa()) {
    case QGemmIsa::kAvx512Vnni:
      return "avx512vnni";
    case QGemmIsa::kAvx2:
      return "avx2";
    case QGemmIsa::kGeneric:
      return "generic";
  }
  return "generic";
}

std::vector<int16_t> qgemm_pack_b(const int16_t* b, int64_t row_stride, int64_t col_stride,
                                  int64_t k, int64_t n) {
  const int64_t pairs = qgemm_kp(k) / 2;
  std::vector<int16_t> out(static_cast<size_t>(qgemm_panels(n) * pairs * kQGemmNr * 2), 0);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t panel = j / kQGemmNr, col = j % kQGemmNr;
      const int64_t at = ((panel * pairs + i / 2) * kQGemmNr + col) * 2 + i % 2;
      out[static_cast<size_t>(at)] = b[i * row_stride + j * col_stride];
    }
  }
  return out;
}

uint8_t requantize(int32_t acc, float multiplier, int32_t zero_point, bool is_signed) {
  // quantizeLinear with scale 1 (reference/quantization.cc): nearbyint (half to even) of the
  // float32 product, plus the zero point, clamped; float(acc) is exact below 2^24. Clamping
  // to the integer bounds before rounding gives the same result (rounding is monotone) and
  // keeps |v| <= 511, where round_half_even_small is exact.
  const float lo = (is_signed ? -128.0f : 0.0f) - static_cast<float>(zero_point);
  const float hi = (is_signed ? 127.0f : 255.0f) - static_cast<float>(zero_point);
  const float v = std::clamp(static_cast<float>(acc) * multiplier, lo, hi);
  return static_cast<uint8_t>(static_cast<int32_t>(round_half_even_small(v)) + zero_point);
}

namespace {

// Stores `cols` requantized values q at out[j * out_step], through the lookup table when there
// is one (`table` at the run's first table, `table_step` bytes between the tables of
// consecutive columns; 0 when the run shares one).
void store_requantized(const uint8_t* q, int64_t cols, const uint8_t* table, int64_t table_step,
                       uint8_t* out, int64_t out_step) {
  if (table) {
    for (int64_t j = 0; j < cols; ++j) out[j * out_step] = table[j * table_step + q[j]];
  } else {
    for (int64_t j = 0; j < cols; ++j) out[j * out_step] = q[j];
  }
}

}  // namespace

void qgemm_rows(QGemmUkernel uk, const int16_t* a, int64_t lda, int64_t m, const int16_t* b_packed,
                int64_t k, int64_t n, const Requant& rq, uint8_t* y, int64_t y_row, int64_t y_col) {
  const int64_t pairs = qgemm_kp(k) / 2;
  alignas(64) int32_t tile[kQGemmMr * kQGemmNr];
  alignas(64) int32_t bias[kQGemmNr];
  alignas(64) float mult[kQGemmNr];
  alignas(64) uint8_t q[kQGemmNr];
  const QRequantFn requant = qrequant();
  for (int64_t panel = 0; panel < qgemm_panels(n); ++panel) {
    const int16_t* b = b_packed + panel * pairs * kQGemmNr * 2;
    const int64_t j0 = panel * kQGemmNr;
    const int64_t cols = std::min<int64_t>(kQGemmNr, n - j0);
    for (int64_t j = 0; j < kQGemmNr; ++j) {
      bias[j] = rq.bias && j < cols ? rq.bias[j0 + j] : 0;
      mult[j] = j < cols ? (rq.per_column ? rq.multiplier[j0 + j] : rq.multiplier[0]) : 0.0f;
    }
    for (int64_t r0 = 0; r0 < m; r0 += kQGemmMr) {
      const int mr = static_cast<int>(std::min<int64_t>(kQGemmMr, m - r0));
      uk(QGemmTile{a + r0 * lda, lda, mr, b, pairs, tile});
      for (int r = 0; r < mr; ++r) {
        uint8_t* out = y + (r0 + r) * y_row + j0 * y_col;
        const bool direct = y_col == 1 && cols == kQGemmNr && !rq.table;
        requant(QRequantRun{tile + r * kQGemmNr, kQGemmNr, bias, mult, true, rq.zero_point,
                            rq.is_signed, direct ? out : q});
        if (direct) continue;
        // Per-column tables follow the columns here.
        const uint8_t* table = rq.table ? rq.table + (rq.table_per_column ? j0 * 256 : 0) : nullptr;
        store_requantized(q, cols, table, rq.table_per_column ? 256 : 0, out, y_col);
      }
    }
  }
}

void qgemm_rows_f32(QGemmUkernel uk, const int16_t* a, int64_t lda, int64_t m,
                    const int16_t* b_packed, int64_t k, int64_t n, float* y, int64_t y_row) {
  const int64_t pairs = qgemm_kp(k) / 2;
  alignas(64) int32_t tile[kQGemmMr * kQGemmNr];
  for (int64_t panel = 0; panel < qgemm_panels(n); ++panel) {
    const int16_t* b = b_packed + panel * pairs * kQGemmNr * 2;
    const int64_t j0 = panel * kQGemmNr;
    const int64_t cols = std::min<int64_t>(kQGemmNr, n - j0);
    for (int64_t r0 = 0; r0 < m; r0 += kQGemmMr) {
      const int mr = static_cast<int>(std::min<int64_t>(kQGemmMr, m - r0));
      uk(QGemmTile{a + r0 * lda, lda, mr, b, pairs, tile});
      for (int r = 0; r < mr; ++r) {
        float* out = y + (r0 + r) * y_row + j0;
        const int32_t* t = tile + r * kQGemmNr;
        for (int64_t j = 0; j < cols; ++j) out[j] = static_cast<float>(t[j]);
      }
    }
  }
}

namespace {

// The u8s8 tiles of rows [0, m) and all n columns, each finished tile handed to
// emit(tile, r0, mr, p0, np): np panels from panel p0 of kQGemmMr rows from r0 (rows past mr
// unused), at tile + (p * kQGemmMr + r) * kQGemmNr. Over a long k the 4-panel B block (k x 64
// bytes) leaves L1 and every 4-row tile streamed it again from L2 (K = 1536 ran at 40% of the
// K = 384 speed); there k runs in chunks of kChunkQuads quads, each chunk's B block serving
// every row tile of the call while int32 tiles accumulate (exact integer sums: any order, the
// same bits).
template <class Emit>
void u8_tiles(QGemmU8Ukernel uk, const uint8_t* a, int64_t lda, int64_t m, const int8_t* b_packed,
              int64_t k, int64_t n, Emit&& emit) {
  constexpr int64_t kChunkQuads = 64;  // 256 k: a 4-panel chunk of B is 16 KB
  constexpr int64_t kTile = kQGemmU8MaxPanels * kQGemmMr * kQGemmNr;
  const int64_t quads = qgemm_kq(k) / 4, panel_size = quads * kQGemmNr * 4;
  const int64_t panels = qgemm_panels(n);
  alignas(64) int32_t tile[kTile];
  if (quads <= 2 * kChunkQuads) {
    for (int64_t p0 = 0; p0 < panels; p0 += kQGemmU8MaxPanels) {
      const int np = static_cast<int>(std::min<int64_t>(kQGemmU8MaxPanels, panels - p0));
      for (int64_t r0 = 0; r0 < m; r0 += kQGemmMr) {
        const int mr = static_cast<int>(std::min<int64_t>(kQGemmMr, m - r0));
        uk(QGemmU8Tile{a + r0 * lda, lda, mr, b_packed + p0 * panel_size, quads, tile, np,
                       panel_size});
        emit(static_cast<const int32_t*>(tile), r0, mr, p0, np);
      }
    }
    return;
  }
  const int64_t tiles = (m + kQGemmMr - 1) / kQGemmMr;
  thread_local std::vector<int32_t> sums;
  if (static_cast<int64_t>(sums.size()) < tiles * kTile) sums.resize(tiles * kTile);
  for (int64_t p0 = 0; p0 < panels; p0 += kQGemmU8MaxPanels) {
    const int np = static_cast<int>(std::min<int64_t>(kQGemmU8MaxPanels, panels - p0));
    for (int64_t q0 = 0; q0 < quads; q0 += kChunkQuads) {
      const int64_t qn = std::min(kChunkQuads, quads - q0);
      for (int64_t t = 0; t < tiles; ++t) {
        const int64_t r0 = t * kQGemmMr;
        const int mr = static_cast<int>(std::min<int64_t>(kQGemmMr, m - r0));
        int32_t* acc = sums.data() + t * kTile;
        uk(QGemmU8Tile{a + r0 * lda + 4 * q0, lda, mr,
                       b_packed + p0 * panel_size + q0 * kQGemmNr * 4, qn, q0 == 0 ? acc : tile, np,
                       panel_size});
        if (q0 == 0) continue;
        for (int p = 0; p < np; ++p) {
          for (int r = 0; r < mr; ++r) {
            const int64_t at = (p * kQGemmMr + r) * kQGemmNr;
            for (int j = 0; j < kQGemmNr; ++j) acc[at + j] += tile[at + j];
          }
        }
      }
    }
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t r0 = t * kQGemmMr;
      emit(static_cast<const int32_t*>(sums.data() + t * kTile), r0,
           static_cast<int>(std::min<int64_t>(kQGemmMr, m - r0)), p0, np);
    }
  }
}

}  // namespace

void qgemm_rows_u8_f32(QGemmU8Ukernel uk, const uint8_t* a, int64_t lda, int64_t m,
                       const int8_t* b_packed, int64_t k, int64_t n, const int32_t* offset,
                       const int32_t* row_add, float* y, int64_t y_row) {
  u8_tiles(uk, a, lda, m, b_packed, k, n,
           [&](const int32_t* tile, int64_t r0, int mr, int64_t p0, int np) {
             for (int p = 0; p < np; ++p) {
               const int64_t j0 = (p0 + p) * kQGemmNr;
               const int64_t cols = std::min<int64_t>(kQGemmNr, n - j0);
               for (int r = 0; r < mr; ++r) {
                 float* out = y + (r0 + r) * y_row + j0;
                 const int32_t* t = tile + (p * kQGemmMr + r) * kQGemmNr;
                 const int32_t add = row_add ? row_add[r0 + r] : 0;
                 for (int64_t j = 0; j < cols; ++j) {
                   out[j] = static_cast<float>(t[j] - offset[j0 + j] + add);
                 }
               }
             }
           });
}

void qgemm_rows_u8(QGemmU8Ukernel uk, const uint8_t* a, int64_t lda, int64_t m,
                   const int8_t* b_packed, int64_t k, int64_t n, const int32_t* offset,
                   const int32_t* row_add, const Requant& rq, uint8_t* y, int64_t y_row) {
  // Per column, once per call (zero past n): the bias that makes the raw sums the exact sums
  // (x - x_zp) * w (+ the node's bias), and the multiplier. The sums are gathered into whole
  // rows and requantized a row at a time: a call per 16 values cost as much as the products
  // (QLinearMatMul 800 x 384 x 384 vs ORT, thread CPU: 1.87x -> 1.46-1.63x).
  const int64_t padded = qgemm_panels(n) * kQGemmNr;
  thread_local std::vector<int32_t> col_bias, row_bias, sums;
  thread_local std::vector<float> col_mult;
  thread_local std::vector<uint8_t> q;
  col_bias.assign(static_cast<size_t>(padded), 0);
  col_mult.assign(static_cast<size_t>(padded), 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    col_bias[j] = (rq.bias ? rq.bias[j] : 0) - offset[j];
    col_mult[j] = rq.per_column ? rq.multiplier[j] : rq.multiplier[0];
  }
  if (static_cast<int64_t>(sums.size()) < m * padded) sums.resize(static_cast<size_t>(m * padded));
  u8_tiles(uk, a, lda, m, b_packed, k, n,
           [&](const int32_t* tile, int64_t r0, int mr, int64_t p0, int np) {
             for (int p = 0; p < np; ++p) {
               for (int r = 0; r < mr; ++r) {
                 std::memcpy(sums.data() + (r0 + r) * padded + (p0 + p) * kQGemmNr,
                             tile + (p * kQGemmMr + r) * kQGemmNr, kQGemmNr * sizeof(int32_t));
               }
             }
           });
  const QRequantFn requant = qrequant();
  if (row_add) row_bias.resize(static_cast<size_t>(padded));
  if (rq.table) q.resize(static_cast<size_t>(padded));
  for (int64_t r = 0; r < m; ++r) {
    const int32_t* b = col_bias.data();
    if (row_add && row_add[r] != 0) {
      for (int64_t j = 0; j < n; ++j) row_bias[j] = col_bias[j] + row_add[r];
      b = row_bias.data();
    }
    uint8_t* out = y + r * y_row;
    requant(QRequantRun{sums.data() + r * padded, n, b, col_mult.data(), true, rq.zero_point,
                        rq.is_signed, rq.table ? q.data() : out});
    if (rq.table) store_requantized(q.data(), n, rq.table, rq.table_per_column ? 256 : 0, out, 1);
  }
}

void qgemm_cols(QGemmUkernel uk, const int16_t* w, int64_t ldw, int64_t m, const int16_t* x_panels,
                int64_t k, int64_t n, const Requant& rq, uint8_t* y, int64_t y_row) {
  const int64_t pairs = qgemm_kp(k) / 2;
  alignas(64) int32_t tile[kQGemmMr * kQGemmNr];
  alignas(64) int32_t bias[kQGemmNr];
  alignas(64) uint8_t q[kQGemmNr];
  const QRequantFn requant = qrequant();
  for (int64_t panel = 0; panel < qgemm_panels(n); ++panel) {
    const int16_t* b = x_panels + panel * pairs * kQGemmNr * 2;
    const int64_t j0 = panel * kQGemmNr;
    const int64_t cols = std::min<int64_t>(kQGemmNr, n - j0);
    for (int64_t r0 = 0; r0 < m; r0 += kQGemmMr) {
      const int mr = static_cast<int>(std::min<int64_t>(kQGemmMr, m - r0));
      uk(QGemmTile{w + r0 * ldw, ldw, mr, b, pairs, tile});
      for (int r = 0; r < mr; ++r) {
        const int64_t row = r0 + r;
        std::fill(bias, bias + kQGemmNr, rq.bias ? rq.bias[row] : 0);
        const float* mult = rq.multiplier + (rq.per_column ? row : 0);
        uint8_t* out = y + row * y_row + j0;
        const bool direct = cols == kQGemmNr && !rq.table;
        requant(QRequantRun{tile + r * kQGemmNr, cols, bias, mult, false, rq.zero_point,
                            rq.is_signed, direct ? out : q});
        if (direct) continue;
        // The output row is one channel: one table for the run.
        const uint8_t* table =
            rq.table ? rq.table + (rq.table_per_column ? row * 256 : 0) : nullptr;
        store_requantized(q, cols, table, 0, out, 1);
      }
    }
  }
}

// The portable micro-kernel: the same pairs in plain int32 arithmetic.
namespace {
void qgemm_generic_tile(const QGemmTile& t) {
  for (int r = 0; r < t.mr; ++r) {
    int32_t acc[kQGemmNr] = {};
    const int16_t* a = t.a + r * t.lda;
    for (int64_t p = 0; p < t.pairs; ++p) {
      const int32_t a0 = a[2 * p], a1 = a[2 * p + 1];
      const int16_t* b = t.b + p * kQGemmNr * 2;
      for (int j = 0; j < kQGemmNr; ++j) acc[j] += a0 * b[2 * j] + a1 * b[2 * j + 1];
    }
    for (int j = 0; j < kQGemmNr; ++j) t.c[r * kQGemmNr + j] = acc[j];
  }
}
}  // namespace

QGemmUkernel qgemm_ukernel_generic() { return qgemm_generic_tile; }

// The pair-saturating u8s8 product in plain int32 arithmetic (qgemm.h).
namespace {
void qgemm_u8s8_sat_generic_tile(const QGemmU8Tile& t) {
  for (int p = 0; p < t.panels; ++p) {
    const int8_t* panel = t.b + p * t.panel_stride;
    for (int r = 0; r < t.mr; ++r) {
      int32_t acc[kQGemmNr] = {};
      const uint8_t* a = t.a + r * t.lda;
      for (int64_t q = 0; q < t.quads; ++q) {
        const int8_t* b = panel + q * kQGemmNr * 4;
        for (int j = 0; j < kQGemmNr; ++j) {
          for (int h = 0; h < 4; h += 2) {
            const int32_t pair =
                int32_t{a[4 * q + h]} * b[4 * j + h] + int32_t{a[4 * q + h + 1]} * b[4 * j + h + 1];
            acc[j] += std::clamp<int32_t>(pair, -32768, 32767);
          }
        }
      }
      int32_t* c = t.c + (p * kQGemmMr + r) * kQGemmNr;
      for (int j = 0; j < kQGemmNr; ++j) c[j] = acc[j];
    }
  }
}
}  // namespace

QGemmU8Ukernel qgemm_u8s8_sat_ukernel_generic() { return qgemm_u8s8_sat_generic_tile; }

QGemmU8Ukernel qgemm_u8s8_sat_ukernel() {
  static const QGemmU8Ukernel uk = best_isa() != QGemmIsa::kGeneric && qgemm_u8s8_sat_ukernel_avx2()
                                       ? qgemm_u8s8_sat_ukernel_avx2()
                                       : qgemm_u8s8_sat_ukernel_generic();
  return uk;
}

namespace {
void qdw_row_generic_impl(int32_t* acc, const int16_t* const* rows, const int32_t* w, int64_t taps,
                          int64_t n) {
  for (int64_t t = 0; t < taps; ++t) {
    const int16_t* in = rows[t];
    for (int64_t i = 0; i < n; ++i) acc[i] += w[t] * int32_t{in[i]};
  }
}
}  // namespace

QDwRowFn qdw_row_generic() { return qdw_row_generic_impl; }

namespace {
void qrequant_generic_impl(const QRequantRun& r) {
  for (int64_t i = 0; i < r.n; ++i) {
    const int32_t acc = r.acc[i] + (r.bias ? r.bias[i] : 0);
    r.out[i] = requantize(acc, r.mult[r.mult_per_element ? i : 0], r.zero_point, r.is_signed);
  }
}

void qquantize_generic_impl(const float* x, int64_t n, int32_t zp, bool is_signed, uint8_t* out) {
  const float lo = (is_signed ? -128.0f : 0.0f) - static_cast<float>(zp);
  const float hi = (is_signed ? 127.0f : 255.0f) - static_cast<float>(zp);
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] != x[i] ? -static_cast<float>(zp) : std::min(std::max(x[i], lo), hi);
    out[i] = static_cast<uint8_t>(static_cast<int32_t>(round_half_even_small(v)) + zp);
  }
}

void qfake_quantize_generic_impl(const float* x, int64_t n, float lo, float hi, float d,
                                 float nan_out, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] != x[i] ? nan_out : round_half_even_small(std::min(std::max(x[i], lo), hi)) * d;
  }
}
}  // namespace

QFakeQuantizeFn qfake_quantize_generic() { return qfake_quantize_generic_impl; }
QRequantFn qrequant_generic() { return qrequant_generic_impl; }
QQuantizeFn qquantize_generic() { return qquantize_generic_impl; }

}  // namespace webnn
