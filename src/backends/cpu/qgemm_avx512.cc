// The AVX-512 VNNI integer GEMM micro-kernel (qgemm.h); CMakeLists.txt builds this file with
// -mavx512f -mavx512bw -mavx512vnni, and qgemm_ukernel_for() returns it only where cpuid
// reports AVX512_VNNI. It reads the AVX2 kernel's packing: one zmm holds a panel's 16 columns
// of one pair, and vpdpwssd (the non-saturating form) adds a0 * b0 + a1 * b1 into each int32
// lane, the same exact products vpmaddwd + vpaddd form on AVX2.
#include "backends/cpu/qgemm.h"

#if defined(__AVX512F__) && defined(__AVX512VNNI__)
#include <immintrin.h>

#include <cstring>

namespace webnn {

namespace {

void qgemm_vnni_tile(const QGemmTile& t) {
  __m512i acc[kQGemmMr];
  for (auto& v : acc) v = _mm512_setzero_si512();
  const int16_t* b = t.b;
  for (int64_t p = 0; p < t.pairs; ++p, b += kQGemmNr * 2) {
    const __m512i bv = _mm512_loadu_si512(b);
    for (int r = 0; r < kQGemmMr; ++r) {
      if (r >= t.mr) break;
      int32_t pair;
      std::memcpy(&pair, t.a + r * t.lda + 2 * p, sizeof pair);
      acc[r] = _mm512_dpwssd_epi32(acc[r], _mm512_set1_epi32(pair), bv);
    }
  }
  for (int r = 0; r < t.mr; ++r) _mm512_storeu_si512(t.c + r * kQGemmNr, acc[r]);
}

}  // namespace

QGemmUkernel qgemm_ukernel_avx512_vnni() { return qgemm_vnni_tile; }

}  // namespace webnn
#else
namespace webnn {
QGemmUkernel qgemm_ukernel_avx512_vnni() { return nullptr; }
}  // namespace webnn
#endif
