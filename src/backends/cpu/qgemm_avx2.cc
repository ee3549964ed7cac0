// The AVX2 integer GEMM micro-kernel (qgemm.h); CMakeLists.txt builds this file with -mavx2.
// vpmaddwd multiplies the int16 pairs of A and B and adds each pair into an int32 lane: with
// |a|, |b| <= 255 a pair sums to at most 130050, far from overflow, so every
// accumulator holds the exact integer.
#include "backends/cpu/qgemm.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace webnn {

namespace {

// MR rows fixed at compile time: with the row count a run-time bound the compiler kept a
// compare and branch per row and pair and spilled accumulators (12 vs 19 GMAC/s for 48 x 512 x
// 1024 measured here, the vpmaddwd port's limit being ~19).
template <int MR>
void qgemm_avx2_rows(const QGemmTile& t) {
  __m256i acc[MR][2];
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
  const int16_t* b = t.b;
  for (int64_t p = 0; p < t.pairs; ++p, b += kQGemmNr * 2) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
    for (int r = 0; r < MR; ++r) {
      int32_t pair;
      std::memcpy(&pair, t.a + r * t.lda + 2 * p, sizeof pair);
      const __m256i a = _mm256_set1_epi32(pair);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, b1));
    }
  }
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.c + r * kQGemmNr), acc[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.c + r * kQGemmNr + 8), acc[r][1]);
  }
}

void qgemm_avx2_tile(const QGemmTile& t) {
  static_assert(kQGemmMr == 4, "one instantiation per row count");
  switch (t.mr) {
    case 1:
      return qgemm_avx2_rows<1>(t);
    case 2:
      return qgemm_avx2_rows<2>(t);
    case 3:
      return qgemm_avx2_rows<3>(t);
    default:
      return qgemm_avx2_rows<4>(t);
  }
}

// The pair-saturating u8s8 tile (qgemm.h): vpmaddubsw multiplies the broadcast quad of a row's
// uint8 values by a quad of each column's int8 weights and adds adjacent products into int16
// with saturation (ORT's rule), vpmaddwd by ones adds the two int16 into an int32 lane (exact).
// Half the weight bytes of the int16 tile, which matters where B streams from L2 or further
// (an LSTM's recurrent matrix per step).
template <int MR>
void qgemm_avx2_u8s8_sat_rows(const QGemmU8Tile& t) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int p = 0; p < t.panels; ++p) {
    __m256i acc[MR][2];
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
    const int8_t* b = t.b + p * t.panel_stride;
    for (int64_t q = 0; q < t.quads; ++q, b += kQGemmNr * 4) {
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32));
      for (int r = 0; r < MR; ++r) {
        int32_t quad;
        std::memcpy(&quad, t.a + r * t.lda + 4 * q, sizeof quad);
        const __m256i a = _mm256_set1_epi32(quad);
        acc[r][0] =
            _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b0), ones));
        acc[r][1] =
            _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b1), ones));
      }
    }
    int32_t* c = t.c + p * kQGemmMr * kQGemmNr;
    for (int r = 0; r < MR; ++r) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kQGemmNr), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * kQGemmNr + 8), acc[r][1]);
    }
  }
}

void qgemm_avx2_u8s8_sat_tile(const QGemmU8Tile& t) {
  switch (t.mr) {
    case 1:
      return qgemm_avx2_u8s8_sat_rows<1>(t);
    case 2:
      return qgemm_avx2_u8s8_sat_rows<2>(t);
    case 3:
      return qgemm_avx2_u8s8_sat_rows<3>(t);
    default:
      return qgemm_avx2_u8s8_sat_rows<4>(t);
  }
}

// Depthwise rows: 16 outputs at a time stay in two registers over every tap. Taps go in pairs:
// vpunpck{l,h}wd interleave the two taps' int16 inputs and vpmaddwd multiplies them by the
// pair of weights and adds the two products into int32 (|x|, |w| <= 255: exact). The unpacks
// work per 128-bit lane, so the registers hold outputs {0-3, 8-11} and {4-7, 12-15}; the
// permutes at load and store undo that.
void qdw_row_avx2_impl(int32_t* acc, const int16_t* const* rows, const int32_t* w, int64_t taps,
                       int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i s0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i));
    const __m256i s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i + 8));
    __m256i lo = _mm256_permute2x128_si256(s0, s1, 0x20);
    __m256i hi = _mm256_permute2x128_si256(s0, s1, 0x31);
    int64_t t = 0;
    for (; t + 2 <= taps; t += 2) {
      const __m256i wv = _mm256_set1_epi32(static_cast<int32_t>(
          (static_cast<uint32_t>(w[t + 1]) << 16) | (static_cast<uint32_t>(w[t]) & 0xffffu)));
      const __m256i xa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[t] + i));
      const __m256i xb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[t + 1] + i));
      lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, xb), wv));
      hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, xb), wv));
    }
    if (t < taps) {
      const __m256i wv =
          _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(w[t]) & 0xffffu));
      const __m256i xa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[t] + i));
      const __m256i z = _mm256_setzero_si256();
      lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, z), wv));
      hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, z), wv));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i),
                        _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i + 8),
                        _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  // Eight more (a 40-wide row's tail was a fifth of its products, in scalar code).
  auto pairs8 = [](const int16_t* a, const int16_t* b) {
    const __m128i xa = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    const __m128i xb =
        b ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)) : _mm_setzero_si128();
    return _mm256_set_m128i(_mm_unpackhi_epi16(xa, xb), _mm_unpacklo_epi16(xa, xb));
  };
  for (; i + 8 <= n; i += 8) {
    __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i));
    int64_t t = 0;
    for (; t + 2 <= taps; t += 2) {
      const __m256i wv = _mm256_set1_epi32(static_cast<int32_t>(
          (static_cast<uint32_t>(w[t + 1]) << 16) | (static_cast<uint32_t>(w[t]) & 0xffffu)));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(pairs8(rows[t] + i, rows[t + 1] + i), wv));
    }
    if (t < taps) {
      const __m256i wv =
          _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(w[t]) & 0xffffu));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(pairs8(rows[t] + i, nullptr), wv));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i), s);
  }
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t j = i; j < n; ++j) acc[j] += w[t] * int32_t{rows[t][j]};
  }
}

// 8 int32 byte values (already in the output type's range) stored as 8 bytes.
inline void store8(__m256i v, bool is_signed, uint8_t* out) {
  const __m256i w = _mm256_packs_epi32(v, v);  // lanes: v0..3 v0..3 | v4..7 v4..7 (int16)
  const __m256i b = is_signed ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
  const int32_t lo = _mm256_cvtsi256_si32(b);
  const int32_t hi = _mm_cvtsi128_si32(_mm256_extracti128_si256(b, 1));
  std::memcpy(out, &lo, 4);
  std::memcpy(out + 4, &hi, 4);
}

// requantize() on 8 lanes: vcvtdq2ps, vmulps, vmaxps(v, lo) == `v > lo ? v : lo`,
// vminps(v, hi) == `v < hi ? v : hi`, the 1.5 * 2^23 rounding, vcvttps2dq (exact: integral).
void qrequant_avx2_impl(const QRequantRun& r) {
  const float flo = (r.is_signed ? -128.0f : 0.0f) - static_cast<float>(r.zero_point);
  const float fhi = (r.is_signed ? 127.0f : 255.0f) - static_cast<float>(r.zero_point);
  const __m256 lo = _mm256_set1_ps(flo), hi = _mm256_set1_ps(fhi);
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256i zp = _mm256_set1_epi32(r.zero_point);
  const __m256 m0 = _mm256_set1_ps(r.mult[0]);
  int64_t i = 0;
  for (; i + 8 <= r.n; i += 8) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.acc + i));
    if (r.bias)
      a = _mm256_add_epi32(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.bias + i)));
    const __m256 m = r.mult_per_element ? _mm256_loadu_ps(r.mult + i) : m0;
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), m);
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    v = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
    store8(_mm256_add_epi32(_mm256_cvttps_epi32(v), zp), r.is_signed, r.out + i);
  }
  for (; i < r.n; ++i) {
    const int32_t acc = r.acc[i] + (r.bias ? r.bias[i] : 0);
    r.out[i] = requantize(acc, r.mult[r.mult_per_element ? i : 0], r.zero_point, r.is_signed);
  }
}

// The scale-1 quantizeLinear on 8 lanes: vmaxps(x, lo) gives lo for NaN, which the ordered
// compare then replaces by -zp (stored as byte 0), as the scalar kernel does.
void qquantize_avx2_impl(const float* x, int64_t n, int32_t zp, bool is_signed, uint8_t* out) {
  const float flo = (is_signed ? -128.0f : 0.0f) - static_cast<float>(zp);
  const float fhi = (is_signed ? 127.0f : 255.0f) - static_cast<float>(zp);
  const __m256 lo = _mm256_set1_ps(flo), hi = _mm256_set1_ps(fhi);
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 nan_value = _mm256_set1_ps(-static_cast<float>(zp));
  const __m256i z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    __m256 v = _mm256_min_ps(_mm256_max_ps(xv, lo), hi);
    v = _mm256_blendv_ps(nan_value, v, _mm256_cmp_ps(xv, xv, _CMP_ORD_Q));
    v = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
    store8(_mm256_add_epi32(_mm256_cvttps_epi32(v), z), is_signed, out + i);
  }
  for (; i < n; ++i) {
    const float v = x[i] != x[i] ? -static_cast<float>(zp) : std::min(std::max(x[i], flo), fhi);
    out[i] = static_cast<uint8_t>(static_cast<int32_t>(round_half_even_small(v)) + zp);
  }
}

// The scale-1 quantizeLinear then the dequantizing product on 8 lanes; NaN lanes (vmaxps gives
// lo for them) are replaced after by the ordered compare.
void qfake_quantize_avx2_impl(const float* x, int64_t n, float flo, float fhi, float d,
                              float nan_out, float* y) {
  const __m256 lo = _mm256_set1_ps(flo), hi = _mm256_set1_ps(fhi), dv = _mm256_set1_ps(d);
  const __m256 magic = _mm256_set1_ps(12582912.0f), nan_value = _mm256_set1_ps(nan_out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    __m256 v = _mm256_min_ps(_mm256_max_ps(xv, lo), hi);
    v = _mm256_mul_ps(_mm256_sub_ps(_mm256_add_ps(v, magic), magic), dv);
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(nan_value, v, _mm256_cmp_ps(xv, xv, _CMP_ORD_Q)));
  }
  for (; i < n; ++i) {
    y[i] = x[i] != x[i] ? nan_out : round_half_even_small(std::min(std::max(x[i], flo), fhi)) * d;
  }
}

}  // namespace

QGemmUkernel qgemm_ukernel_avx2() { return qgemm_avx2_tile; }
QGemmU8Ukernel qgemm_u8s8_sat_ukernel_avx2() { return qgemm_avx2_u8s8_sat_tile; }
QDwRowFn qdw_row_avx2() { return qdw_row_avx2_impl; }
QRequantFn qrequant_avx2() { return qrequant_avx2_impl; }
QQuantizeFn qquantize_avx2() { return qquantize_avx2_impl; }
QFakeQuantizeFn qfake_quantize_avx2() { return qfake_quantize_avx2_impl; }

}  // namespace webnn
#else
namespace webnn {
QGemmUkernel qgemm_ukernel_avx2() { return nullptr; }
QGemmU8Ukernel qgemm_u8s8_sat_ukernel_avx2() { return nullptr; }
QDwRowFn qdw_row_avx2() { return nullptr; }
QRequantFn qrequant_avx2() { return nullptr; }
QQuantizeFn qquantize_avx2() { return nullptr; }
QFakeQuantizeFn qfake_quantize_avx2() { return nullptr; }
}  // namespace webnn
#endif
