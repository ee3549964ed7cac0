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

// vpdpwssd accumulates in place: one accumulator per row would chain each pair step on the
// previous one's latency (~5 cycles), so rows keep kChains accumulators over interleaved pairs,
// summed at the end (exact integers: the same result in any order).
template <int kRows, int kChains>
void vnni_rows(const QGemmTile& t) {
  __m512i acc[kRows][kChains];
  for (auto& row : acc) {
    for (auto& v : row) v = _mm512_setzero_si512();
  }
  const int16_t* b = t.b;
  int64_t p = 0;
  for (; p + kChains <= t.pairs; p += kChains, b += kQGemmNr * 2 * kChains) {
    for (int j = 0; j < kChains; ++j) {
      const __m512i bv = _mm512_loadu_si512(b + j * kQGemmNr * 2);
      for (int r = 0; r < kRows; ++r) {
        int32_t pair;
        std::memcpy(&pair, t.a + r * t.lda + 2 * (p + j), sizeof pair);
        acc[r][j] = _mm512_dpwssd_epi32(acc[r][j], _mm512_set1_epi32(pair), bv);
      }
    }
  }
  for (; p < t.pairs; ++p, b += kQGemmNr * 2) {
    const __m512i bv = _mm512_loadu_si512(b);
    for (int r = 0; r < kRows; ++r) {
      int32_t pair;
      std::memcpy(&pair, t.a + r * t.lda + 2 * p, sizeof pair);
      acc[r][0] = _mm512_dpwssd_epi32(acc[r][0], _mm512_set1_epi32(pair), bv);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    __m512i sum = acc[r][0];
    for (int j = 1; j < kChains; ++j) sum = _mm512_add_epi32(sum, acc[r][j]);
    _mm512_storeu_si512(t.c + r * kQGemmNr, sum);
  }
}

void qgemm_vnni_tile(const QGemmTile& t) {
  static_assert(kQGemmMr == 4);
  switch (t.mr) {
    case 1:
      return vnni_rows<1, 8>(t);
    case 2:
      return vnni_rows<2, 4>(t);
    case 3:
      return vnni_rows<3, 3>(t);
    default:
      return vnni_rows<4, 2>(t);
  }
}

// The u8s8 tile (qgemm.h QGemmU8Tile): vpdpbusd of the row's four uint8 values (broadcast) by
// a quad of the panel's 16 int8 columns, kChains accumulators per row as above.
template <int kRows, int kChains>
void vnni_u8_rows(const QGemmU8Tile& t) {
  __m512i acc[kRows][kChains];
  for (auto& row : acc) {
    for (auto& v : row) v = _mm512_setzero_si512();
  }
  const int8_t* b = t.b;
  int64_t q = 0;
  for (; q + kChains <= t.quads; q += kChains, b += kQGemmNr * 4 * kChains) {
    for (int j = 0; j < kChains; ++j) {
      const __m512i bv = _mm512_loadu_si512(b + j * kQGemmNr * 4);
      for (int r = 0; r < kRows; ++r) {
        int32_t quad;
        std::memcpy(&quad, t.a + r * t.lda + 4 * (q + j), sizeof quad);
        acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], _mm512_set1_epi32(quad), bv);
      }
    }
  }
  for (; q < t.quads; ++q, b += kQGemmNr * 4) {
    const __m512i bv = _mm512_loadu_si512(b);
    for (int r = 0; r < kRows; ++r) {
      int32_t quad;
      std::memcpy(&quad, t.a + r * t.lda + 4 * q, sizeof quad);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], _mm512_set1_epi32(quad), bv);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    __m512i sum = acc[r][0];
    for (int j = 1; j < kChains; ++j) sum = _mm512_add_epi32(sum, acc[r][j]);
    _mm512_storeu_si512(t.c + r * kQGemmNr, sum);
  }
}

// Several panels at once: kRows x kPanels accumulators (enough independent chains), each
// row quad broadcast once for every panel.
template <int kRows, int kPanels>
void vnni_u8_panels(const QGemmU8Tile& t) {
  __m512i acc[kPanels][kRows];
  for (auto& p : acc) {
    for (auto& v : p) v = _mm512_setzero_si512();
  }
  for (int64_t q = 0; q < t.quads; ++q) {
    __m512i bv[kPanels];
    for (int p = 0; p < kPanels; ++p) {
      bv[p] = _mm512_loadu_si512(t.b + p * t.panel_stride + q * kQGemmNr * 4);
    }
    for (int r = 0; r < kRows; ++r) {
      int32_t quad;
      std::memcpy(&quad, t.a + r * t.lda + 4 * q, sizeof quad);
      const __m512i av = _mm512_set1_epi32(quad);
      for (int p = 0; p < kPanels; ++p) acc[p][r] = _mm512_dpbusd_epi32(acc[p][r], av, bv[p]);
    }
  }
  for (int p = 0; p < kPanels; ++p) {
    for (int r = 0; r < kRows; ++r) {
      _mm512_storeu_si512(t.c + (p * kQGemmMr + r) * kQGemmNr, acc[p][r]);
    }
  }
}

template <int kRows>
void vnni_u8_multi(const QGemmU8Tile& t) {
  switch (t.panels) {
    case 2:
      return vnni_u8_panels<kRows, 2>(t);
    case 3:
      return vnni_u8_panels<kRows, 3>(t);
    default:
      return vnni_u8_panels<kRows, 4>(t);
  }
}

void qgemm_vnni_u8_tile(const QGemmU8Tile& t) {
  static_assert(kQGemmU8MaxPanels == 4);
  if (t.panels > 1) {
    switch (t.mr) {
      case 1:
        return vnni_u8_multi<1>(t);
      case 2:
        return vnni_u8_multi<2>(t);
      case 3:
        return vnni_u8_multi<3>(t);
      default:
        return vnni_u8_multi<4>(t);
    }
  }
  switch (t.mr) {
    case 1:
      return vnni_u8_rows<1, 8>(t);
    case 2:
      return vnni_u8_rows<2, 4>(t);
    case 3:
      return vnni_u8_rows<3, 3>(t);
    default:
      return vnni_u8_rows<4, 2>(t);
  }
}

}  // namespace

QGemmUkernel qgemm_ukernel_avx512_vnni() { return qgemm_vnni_tile; }
QGemmU8Ukernel qgemm_u8s8_ukernel_avx512_vnni() { return qgemm_vnni_u8_tile; }

}  // namespace webnn
#else
namespace webnn {
QGemmUkernel qgemm_ukernel_avx512_vnni() { return nullptr; }
QGemmU8Ukernel qgemm_u8s8_ukernel_avx512_vnni() { return nullptr; }
}  // namespace webnn
#endif
