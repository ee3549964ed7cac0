// The int8 GEMM (cpu/qgemm.h) on every micro-kernel this machine runs, against exact integer
// sums computed here: random odd sizes (tails of rows, columns and the k pair), extreme values.
#include "backends/cpu/qgemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace webnn {
namespace {

std::vector<QGemmIsa> usable_isas() {
  std::vector<QGemmIsa> out;
  for (QGemmIsa isa : {QGemmIsa::kGeneric, QGemmIsa::kAvx2, QGemmIsa::kAvx512Vnni}) {
    if (qgemm_ukernel_for(isa)) out.push_back(isa);
  }
  return out;
}

TEST(QGemm, GenericKernelAlwaysAvailable) {
  ASSERT_NE(qgemm_ukernel_for(QGemmIsa::kGeneric), nullptr);
  ASSERT_NE(qgemm_ukernel(), nullptr);
}

TEST(QGemm, TilesMatchExactIntegerSums) {
  std::mt19937 rng(7);
  for (QGemmIsa isa : usable_isas()) {
    const QGemmUkernel uk = qgemm_ukernel_for(isa);
    for (int trial = 0; trial < 40; ++trial) {
      const int64_t k = 1 + rng() % 300, n = 1 + rng() % 40, kp = qgemm_kp(k);
      const int mr = 1 + static_cast<int>(rng() % kQGemmMr);
      // Extremes first: -255 * -255 in every product of trial 0.
      std::uniform_int_distribution<int> av(-255, 255), bv(-255, 255);
      std::vector<int16_t> a(static_cast<size_t>(mr * kp), 0);
      std::vector<int16_t> b(static_cast<size_t>(k * n));
      for (int r = 0; r < mr; ++r) {
        for (int64_t i = 0; i < k; ++i) a[r * kp + i] = trial == 0 ? -255 : av(rng);
      }
      for (auto& v : b) v = static_cast<int16_t>(trial == 0 ? -255 : bv(rng));
      const std::vector<int16_t> packed = qgemm_pack_b(b.data(), n, 1, k, n);
      for (int64_t panel = 0; panel < qgemm_panels(n); ++panel) {
        std::vector<int32_t> c(kQGemmMr * kQGemmNr, -1);
        uk(QGemmTile{a.data(), kp, mr, packed.data() + panel * (kp / 2) * kQGemmNr * 2, kp / 2,
                     c.data()});
        for (int r = 0; r < mr; ++r) {
          for (int64_t j = panel * kQGemmNr; j < std::min<int64_t>(n, (panel + 1) * kQGemmNr);
               ++j) {
            int64_t want = 0;
            for (int64_t i = 0; i < k; ++i) want += int64_t{a[r * kp + i]} * b[i * n + j];
            ASSERT_EQ(c[r * kQGemmNr + j - panel * kQGemmNr], want)
                << "isa " << static_cast<int>(isa) << " k " << k << " n " << n << " row " << r;
          }
        }
      }
    }
  }
}

// The pair-saturating u8s8 tiles against sum_j clamp(a[2j] b[2j] + a[2j+1] b[2j+1]) over
// int16, computed here: every row count, 1-4 panels, odd k, and trial 0 at the extremes
// (255 * 127 twice: saturates high; 255 * -128 twice: low).
TEST(QGemm, SaturatingU8s8TilesMatchPairwiseClampedSums) {
  std::mt19937 rng(11);
  std::vector<QGemmU8Ukernel> kernels = {qgemm_u8s8_sat_ukernel_generic()};
  if (qgemm_ukernel_for(QGemmIsa::kAvx2)) kernels.push_back(qgemm_u8s8_sat_ukernel_avx2());
  ASSERT_NE(qgemm_u8s8_sat_ukernel(), nullptr);
  for (size_t which = 0; which < kernels.size(); ++which) {
    const QGemmU8Ukernel uk = kernels[which];
    ASSERT_NE(uk, nullptr);
    for (int trial = 0; trial < 40; ++trial) {
      const int64_t k = 1 + rng() % 300, kq = qgemm_kq(k);
      const int panels = 1 + static_cast<int>(rng() % kQGemmU8MaxPanels);
      const int64_t n = panels * kQGemmNr;
      const int mr = 1 + static_cast<int>(rng() % kQGemmMr);
      std::uniform_int_distribution<int> av(0, 255), bv(-128, 127);
      std::vector<uint8_t> a(static_cast<size_t>(mr * kq), 0);
      std::vector<int8_t> b(static_cast<size_t>(k * n));
      for (int r = 0; r < mr; ++r) {
        for (int64_t i = 0; i < k; ++i) a[r * kq + i] = trial == 0 ? 255 : av(rng);
      }
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          b[i * n + j] = static_cast<int8_t>(trial == 0 ? (j % 2 ? 127 : -128) : bv(rng));
        }
      }
      const std::vector<int8_t> packed = qgemm_pack_b_s8(b.data(), k, n);
      const int64_t panel_size = kq / 4 * kQGemmNr * 4;
      std::vector<int32_t> c(static_cast<size_t>(kQGemmU8MaxPanels * kQGemmMr * kQGemmNr), -1);
      uk(QGemmU8Tile{a.data(), kq, mr, packed.data(), kq / 4, c.data(), panels, panel_size});
      for (int p = 0; p < panels; ++p) {
        for (int r = 0; r < mr; ++r) {
          for (int64_t jj = 0; jj < kQGemmNr; ++jj) {
            const int64_t j = p * kQGemmNr + jj;
            int64_t want = 0;
            for (int64_t i = 0; i < k; i += 2) {
              int64_t pair = int64_t{a[r * kq + i]} * b[i * n + j];
              if (i + 1 < k) pair += int64_t{a[r * kq + i + 1]} * b[(i + 1) * n + j];
              want += std::clamp<int64_t>(pair, -32768, 32767);
            }
            ASSERT_EQ(c[(p * kQGemmMr + r) * kQGemmNr + jj], want)
                << "kernel " << which << " k " << k << " panel " << p << " row " << r;
          }
        }
      }
    }
  }
}

TEST(QGemm, RowsRequantizeLikeQuantizeLinear) {
  std::mt19937 rng(11);
  for (QGemmIsa isa : usable_isas()) {
    for (bool is_signed : {false, true}) {
      const int64_t m = 1 + rng() % 37, k = 1 + rng() % 77, n = 1 + rng() % 35, kp = qgemm_kp(k);
      std::vector<int16_t> a(static_cast<size_t>(m * kp), 0);
      std::vector<int16_t> b(static_cast<size_t>(k * n));
      std::vector<int32_t> bias(static_cast<size_t>(n));
      std::vector<float> mult(static_cast<size_t>(n));
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t i = 0; i < k; ++i) a[r * kp + i] = static_cast<int16_t>(rng() % 511) - 255;
      }
      for (auto& v : b) v = static_cast<int16_t>(static_cast<int>(rng() % 511) - 255);
      for (auto& v : bias) v = static_cast<int32_t>(rng() % 20001) - 10000;
      for (auto& v : mult) v = 1.0f / static_cast<float>(200 + rng() % 3000);
      Requant rq{bias.data(), mult.data(), true, is_signed ? 3 : 120, is_signed};
      // Column-major output (as an NCHW conv writes it): element (r, j) at j * m + r.
      std::vector<uint8_t> y(static_cast<size_t>(m * n));
      const std::vector<int16_t> packed = qgemm_pack_b(b.data(), n, 1, k, n);
      qgemm_rows(qgemm_ukernel_for(isa), a.data(), kp, m, packed.data(), k, n, rq, y.data(), 1, m);
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t acc = bias[j];
          for (int64_t i = 0; i < k; ++i) acc += int64_t{a[r * kp + i]} * b[i * n + j];
          double q = std::nearbyint(static_cast<double>(static_cast<float>(acc) * mult[j]));
          q += rq.zero_point;
          q = is_signed ? std::clamp(q, -128.0, 127.0) : std::clamp(q, 0.0, 255.0);
          const int got = is_signed ? static_cast<int8_t>(y[j * m + r]) : y[j * m + r];
          ASSERT_EQ(got, static_cast<int>(q)) << "row " << r << " col " << j;
        }
      }
    }
  }
}

// The u8s8 tiles over long k (qgemm.cc runs k in chunks past 512, accumulating int32 tiles):
// float(sum - offset + row_add) and the requantized bytes of the exact sums, for k on both
// sides of the chunking and not a multiple of 4.
TEST(QGemm, U8RowsOverLongKAreExactSums) {
  const QGemmU8Ukernel uk = qgemm_u8s8_ukernel();
  if (!uk) GTEST_SKIP() << "no VNNI u8s8 tiles on this machine";
  std::mt19937 rng(13);
  for (int64_t k : {384, 513, 1000, 1536, 2048}) {
    const int64_t m = 1 + rng() % 70, n = 1 + rng() % 90, kq = qgemm_kq(k);
    std::vector<uint8_t> a(static_cast<size_t>(m * kq), 0);
    std::vector<int8_t> b(static_cast<size_t>(k * n));
    std::vector<int32_t> offset(static_cast<size_t>(n)), row_add(static_cast<size_t>(m));
    std::vector<float> mult(static_cast<size_t>(n));
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t i = 0; i < k; ++i) a[r * kq + i] = static_cast<uint8_t>(rng() % 256);
      row_add[r] = static_cast<int32_t>(rng() % 2001) - 1000;
    }
    for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    for (auto& v : offset) v = static_cast<int32_t>(rng() % 200001) - 100000;
    for (auto& v : mult) v = 1.0f / static_cast<float>(20000 + rng() % 30000);
    const std::vector<int8_t> packed = qgemm_pack_b_s8(b.data(), k, n);
    std::vector<float> yf(static_cast<size_t>(m * n));
    qgemm_rows_u8_f32(uk, a.data(), kq, m, packed.data(), k, n, offset.data(), row_add.data(),
                      yf.data(), n);
    Requant rq{nullptr, mult.data(), true, 7, false};
    std::vector<uint8_t> y(static_cast<size_t>(m * n)), yt(static_cast<size_t>(m * n));
    qgemm_rows_u8(uk, a.data(), kq, m, packed.data(), k, n, offset.data(), row_add.data(), rq,
                  y.data(), n);
    // Through per-column tables (qdq_tables): table[col * 256 + byte].
    std::vector<uint8_t> table(static_cast<size_t>(256 * n));
    for (auto& v : table) v = static_cast<uint8_t>(rng() % 256);
    Requant rt = rq;
    rt.table = table.data();
    rt.table_per_column = true;
    qgemm_rows_u8(uk, a.data(), kq, m, packed.data(), k, n, offset.data(), row_add.data(), rt,
                  yt.data(), n);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = row_add[r] - int64_t{offset[j]};
        for (int64_t i = 0; i < k; ++i) acc += int64_t{a[r * kq + i]} * b[i * n + j];
        ASSERT_EQ(yf[r * n + j], static_cast<float>(acc)) << "k " << k << " row " << r;
        const double q = std::clamp(
            std::nearbyint(static_cast<double>(static_cast<float>(acc) * mult[j])) + 7, 0.0, 255.0);
        ASSERT_EQ(y[r * n + j], static_cast<int>(q)) << "k " << k << " row " << r << " col " << j;
        ASSERT_EQ(yt[r * n + j], table[j * 256 + static_cast<int>(q)]) << "k " << k;
      }
    }
  }
}

}  // namespace
}  // namespace webnn
