// The AVX2 integer GEMM micro-kernel (qgemm.h); CMakeLists.txt builds this file with -mavx2.
// vpmaddwd multiplies the int16 pairs of A and B and adds each pair into an int32 lane: with
// |a|, |b| <= 255 a pair sums to at most 130050, far from overflow, so every
// accumulator holds the exact integer.
#include "backends/cpu/qgemm.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include <cstring>

namespace webnn {

namespace {

void qgemm_avx2_tile(const QGemmTile& t) {
  __m256i acc[kQGemmMr][2];
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
  const int16_t* b = t.b;
  for (int64_t p = 0; p < t.pairs; ++p, b += kQGemmNr * 2) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
    for (int r = 0; r < kQGemmMr; ++r) {
      if (r >= t.mr) break;
      int32_t pair;
      std::memcpy(&pair, t.a + r * t.lda + 2 * p, sizeof pair);
      const __m256i a = _mm256_set1_epi32(pair);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, b1));
    }
  }
  for (int r = 0; r < t.mr; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.c + r * kQGemmNr), acc[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.c + r * kQGemmNr + 8), acc[r][1]);
  }
}

// Depthwise rows: 16 outputs at a time stay in two registers over every tap; each tap widens
// 16 int16 inputs to int32 and multiplies by its weight (vpmulld: the exact product).
void qdw_row_avx2_impl(int32_t* acc, const int16_t* const* rows, const int32_t* w, int64_t taps,
                       int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i));
    __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i + 8));
    for (int64_t t = 0; t < taps; ++t) {
      const __m256i wv = _mm256_set1_epi32(w[t]);
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[t] + i));
      const __m256i x0 = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(x));
      const __m256i x1 = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(x, 1));
      a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(x0, wv));
      a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(x1, wv));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i), a0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i + 8), a1);
  }
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t j = i; j < n; ++j) acc[j] += w[t] * int32_t{rows[t][j]};
  }
}

}  // namespace

QGemmUkernel qgemm_ukernel_avx2() { return qgemm_avx2_tile; }
QDwRowFn qdw_row_avx2() { return qdw_row_avx2_impl; }

}  // namespace webnn
#else
namespace webnn {
QGemmUkernel qgemm_ukernel_avx2() { return nullptr; }
QDwRowFn qdw_row_avx2() { return nullptr; }
}  // namespace webnn
#endif
