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

// Depthwise rows: 8 int16 inputs widened to int32, times the tap's weight (vpmulld: the exact
// product, |w * in| <= 65025), added to the int32 sums.
void qdw_row_avx2_impl(int32_t* acc, const int16_t* in, int64_t n, int32_t w) {
  const __m256i wv = _mm256_set1_epi32(w);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x =
        _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    __m256i* a = reinterpret_cast<__m256i*>(acc + i);
    _mm256_storeu_si256(a, _mm256_add_epi32(_mm256_loadu_si256(a), _mm256_mullo_epi32(x, wv)));
  }
  for (; i < n; ++i) acc[i] += w * int32_t{in[i]};
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
