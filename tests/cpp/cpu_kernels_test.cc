// The cpu backend's building blocks: thread pool, GEMM micro-kernel and driver, for every
// instruction set this build has and this machine runs.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/simd_kernels.h"
#include "core/thread_pool.h"
#include "webnn/context.h"

namespace webnn {
namespace {

// ---- thread pool --------------------------------------------------------------------------

TEST(ThreadPoolTest, RunsEveryTaskOnceWithValidThreadIndices) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t tasks : {0, 1, 2, 7, 100, 1000}) {
      std::vector<std::atomic<int>> hits(tasks);
      std::atomic<bool> bad_thread{false};
      pool.parallel_for(tasks, [&](int64_t t, int thread) {
        hits[t].fetch_add(1);
        if (thread < 0 || thread >= threads) bad_thread = true;
      });
      for (int64_t t = 0; t < tasks; ++t) EXPECT_EQ(hits[t].load(), 1) << t;
      EXPECT_FALSE(bad_thread.load());
    }
  }
}

TEST(ThreadPoolTest, ConcurrentThreadIndicesAreDistinct) {
  ThreadPool pool(4);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> busy(4);
    std::atomic<bool> clash{false};
    pool.parallel_for(64, [&](int64_t, int thread) {
      if (busy[thread].fetch_add(1) != 0) clash = true;
      std::this_thread::yield();
      busy[thread].fetch_sub(1);
    });
    EXPECT_FALSE(clash.load());
  }
}

TEST(ThreadPoolTest, NestedAndConcurrentCallersRunInline) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(6, [&](int64_t t, int) {
    // The pool is busy: the inner region runs on this thread.
    pool.parallel_for(10, [&](int64_t u, int) { sum += t * 10 + u; });
  });
  EXPECT_EQ(sum.load(), (59 * 60) / 2);

  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int r = 0; r < 200; ++r) pool.parallel_for(17, [&](int64_t, int) { total += 1; });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 200 * 17);
}

TEST(ThreadPoolTest, CreatedAndDestroyedWithoutUseOrRightAfterUse) {
  for (int i = 0; i < 20; ++i) {
    ThreadPool idle(4);
  }
  for (int i = 0; i < 20; ++i) {
    ThreadPool pool(2);
    std::atomic<int> n{0};
    pool.parallel_for(2, [&](int64_t, int) { n += 1; });
    EXPECT_EQ(n.load(), 2);
  }
}

TEST(ThreadPoolTest, DefaultThreadCountReadsEnvironment) {
  const char* old = std::getenv("WEBNN_NUM_THREADS");
  std::string saved = old ? old : "";
  setenv("WEBNN_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_thread_count(), 3);
  setenv("WEBNN_NUM_THREADS", "zero", 1);
  EXPECT_GE(default_thread_count(), 1);
  setenv("WEBNN_NUM_THREADS", "-2", 1);
  EXPECT_GE(default_thread_count(), 1);
  if (old) {
    setenv("WEBNN_NUM_THREADS", saved.c_str(), 1);
  } else {
    unsetenv("WEBNN_NUM_THREADS");
  }
}

TEST(ThreadPoolTest, EachContextOwnsAPoolSizedFromTheEnvironment) {
  const char* old = std::getenv("WEBNN_NUM_THREADS");
  std::string saved = old ? old : "";
  setenv("WEBNN_NUM_THREADS", "3", 1);
  auto three = *Context::create("default", false, "cpu");
  setenv("WEBNN_NUM_THREADS", "1", 1);
  auto one = *Context::create("default", false, "cpu");
  EXPECT_EQ(three->num_threads(), 3);
  EXPECT_EQ(one->num_threads(), 1);
  if (old) {
    setenv("WEBNN_NUM_THREADS", saved.c_str(), 1);
  } else {
    unsetenv("WEBNN_NUM_THREADS");
  }
}

// ---- GEMM -----------------------------------------------------------------------------------

std::vector<const SimdKernels*> usable_kernels() {
  std::vector<const SimdKernels*> out;
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (const SimdKernels* k = simd_kernels_for(isa)) out.push_back(k);
  }
  return out;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST(GemmTest, GenericKernelsAlwaysPresent) {
  ASSERT_NE(simd_kernels_for(CpuIsa::kGeneric), nullptr);
  EXPECT_TRUE(cpu_isa_usable(cpu_isa()));
  EXPECT_EQ(&simd_kernels(), simd_kernels_for(cpu_isa()));
}

TEST(GemmTest, PackBRowMajorAndTransposedAgree) {
  const int64_t k = 70, n = 37;
  std::vector<float> b = random_floats(k * n, 1), bt(k * n);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) bt[j * k + i] = b[i * n + j];
  }
  for (int nr : {8, 16, 64}) {
    size_t floats = 0;
    ASSERT_TRUE(packed_b_floats(k, n, nr, &floats));
    std::vector<float> p1(floats, -1), p2(floats, -2);
    pack_b(b.data(), n, 1, k, n, nr, p1.data());
    pack_b(bt.data(), 1, k, k, n, nr, p2.data());
    EXPECT_EQ(p1, p2);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < k; ++i) {
        EXPECT_EQ(p1[(j / nr) * k * nr + i * nr + j % nr], b[i * n + j]);
      }
    }
    // Padding columns are zero.
    for (int64_t j = n; j < (n + nr - 1) / nr * nr; ++j) {
      EXPECT_EQ(p1[(j / nr) * k * nr + 5 * nr + j % nr], 0.0f);
    }
  }
  size_t floats = 0;
  EXPECT_FALSE(packed_b_floats(int64_t{1} << 40, int64_t{1} << 40, 64, &floats));
}

// One micro-tile with two taps (the second tap's row 1 is padding), an A offset, against a
// direct evaluation: with accumulate, both biases and a clamp (the general epilogue), and
// without them (the plain store of full tiles), on both tiles (main and three-vector).
TEST(GemmTest, MicroKernelAllTileSizes) {
  for (const SimdKernels* simd : usable_kernels()) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool three = variant & 1, plain = variant & 2;
      const int mr_max = three ? simd->gemm3_mr : simd->gemm_mr;
      const int nr_max = three ? simd->gemm3_nr : simd->gemm_nr;
      auto* ukernel = three ? simd->gemm3_ukernel : simd->gemm_ukernel;
      const int64_t kc = 13, offset = 3, taps = 2, row_len = kc + offset;
      std::vector<float> a = random_floats(taps * mr_max * row_len, 2);
      std::vector<float> zero(kc + offset, 0.0f);
      std::vector<const float*> table(taps * mr_max);
      for (int t = 0; t < taps; ++t) {
        for (int r = 0; r < mr_max; ++r) {
          table[t * mr_max + r] = (t == 1 && r == 1) ? zero.data() : &a[(t * mr_max + r) * row_len];
        }
      }
      std::vector<float> b = random_floats(taps * kc * nr_max, 3);
      std::vector<float> col_bias = random_floats(nr_max, 4), row_bias = random_floats(mr_max, 5);
      for (int mr = 1; mr <= mr_max; ++mr) {
        for (int nr = 1; nr <= nr_max; ++nr) {
          const int64_t ldc = nr_max + 3;
          std::vector<float> c = random_floats(mr_max * ldc, 6), before = c;
          GemmUkernelArgs args;
          args.taps = taps;
          args.kc = kc;
          args.a = table.data();
          args.zero = zero.data();
          args.a_offset = offset;
          args.b = b.data();
          args.b_tap_stride = kc;
          args.c = c.data();
          args.ldc = ldc;
          args.mr = mr;
          args.nr = nr;
          args.accumulate = !plain;
          args.alpha = plain ? 1.0f : 0.5f;
          args.col_bias = col_bias.data();
          args.row_bias = plain ? nullptr : row_bias.data();
          args.clamp = !plain;
          args.lo = -3.0f;
          args.hi = 3.0f;
          ukernel(args);
          for (int i = 0; i < mr_max; ++i) {
            for (int64_t j = 0; j < ldc; ++j) {
              const float got = c[i * ldc + j];
              if (i >= mr || j >= nr) {
                EXPECT_EQ(got, before[i * ldc + j]) << simd->name << " wrote outside the tile";
                continue;
              }
              double acc = 0;
              for (int t = 0; t < taps; ++t) {
                for (int64_t k = 0; k < kc; ++k) {
                  const double av =
                      (t == 1 && i == 1) ? 0.0 : a[(t * mr_max + i) * row_len + offset + k];
                  acc += av * b[(t * kc + k) * nr_max + j];
                }
              }
              double want = acc + col_bias[j];
              if (!plain) {
                want = 0.5 * acc + before[i * ldc + j] + col_bias[j] + row_bias[i];
                want = std::min(3.0, std::max(-3.0, want));
              }
              EXPECT_NEAR(got, want, 1e-4)
                  << simd->name << " mr=" << mr << " nr=" << nr << " variant=" << variant;
            }
          }
        }
      }
    }
  }
}

TEST(GemmTest, DriverMatchesNaiveProduct) {
  struct Shape {
    int64_t m, n, k;
  };
  for (const SimdKernels* simd : usable_kernels()) {
    for (Shape s : {Shape{1, 1, 1}, Shape{7, 5, 3}, Shape{65, 130, 33}, Shape{13, 70, 1300},
                    Shape{200, 9, 2}, Shape{3, 3, 0}}) {
      for (int threads : {1, 3}) {
        ThreadPool pool(threads);
        std::vector<float> a = random_floats(s.m * s.k, 7), b = random_floats(s.k * s.n, 8);
        size_t floats = 0;
        ASSERT_TRUE(packed_b_floats(s.k, s.n, simd->gemm_nr, &floats));
        AlignedFloats packed(std::max<size_t>(1, floats));
        pack_b(b.data(), s.n, 1, s.k, s.n, simd->gemm_nr, packed.data());
        std::vector<float> c(s.m * s.n, 99.0f);
        std::vector<GemmJob> jobs(1);
        jobs[0].m = s.m;
        jobs[0].n = s.n;
        jobs[0].k_per_tap = s.k;
        jobs[0].b_packed = packed.data();
        jobs[0].c = c.data();
        jobs[0].ldc = s.n;
        RowMajorA rows;
        rows.a = {a.data()};
        rows.lda = {s.k};
        rows.rows = s.m;
        rows.mr = simd->gemm_mr;
        GemmScratch scratch;
        run_gemm(*simd, jobs, GemmEpilogue{}, rows.fn(), GemmBFn{}, scratch, &pool);
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t j = 0; j < s.n; ++j) {
            double acc = 0, mag = 0;
            for (int64_t t = 0; t < s.k; ++t) {
              acc += double(a[i * s.k + t]) * b[t * s.n + j];
              mag += std::fabs(double(a[i * s.k + t]) * b[t * s.n + j]);
            }
            EXPECT_NEAR(c[i * s.n + j], acc, (s.k + 1) * 1.2e-7 * mag + 1e-30)
                << simd->name << " " << s.m << "x" << s.n << "x" << s.k << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

// One row-major product C = A * B (m x k times k x n) for the driver tests: B either packed
// ahead (job.b_packed) or packed per task through the b_fn callback.
struct OneProduct {
  int64_t m, n, k;
  std::vector<float> a, b, c;
  AlignedFloats packed;
  std::vector<GemmJob> jobs = std::vector<GemmJob>(1);
  RowMajorA rows;
  struct BSource {
    const float* b;
    int64_t n;
    int nr;
  } source;

  OneProduct(const SimdKernels& simd, int64_t m_, int64_t n_, int64_t k_, bool pack_ahead,
             float c_init, unsigned seed)
      : m(m_),
        n(n_),
        k(k_),
        a(random_floats(m_ * k_, seed)),
        b(random_floats(k_ * n_, seed + 1)),
        c(m_ * n_, c_init) {
    if (pack_ahead) {
      size_t floats = 0;
      EXPECT_TRUE(packed_b_floats(k, n, simd.gemm_nr, &floats));
      packed = AlignedFloats(floats);
      pack_b(b.data(), n, 1, k, n, simd.gemm_nr, packed.data());
    }
    jobs[0].m = m;
    jobs[0].n = n;
    jobs[0].k_per_tap = k;
    jobs[0].b_packed = pack_ahead ? packed.data() : nullptr;
    jobs[0].c = c.data();
    jobs[0].ldc = n;
    rows.a = {a.data()};
    rows.lda = {k};
    rows.rows = m;
    rows.mr = simd.gemm_mr;
    source = {b.data(), n, simd.gemm_nr};
  }

  GemmBFn b_fn() const {
    return GemmBFn{
        [](const void* p, int64_t, int64_t n0, int64_t nc, int64_t k0, int64_t kc, float* dst) {
          const auto& x = *static_cast<const BSource*>(p);
          pack_b(x.b + k0 * x.n + n0, x.n, 1, kc, nc, x.nr, dst);
        },
        &source};
  }
};

// A task's rows go in chunks, each through every K pass and then the post epilogue: with K
// in several passes (B packed once, small enough to stay in L2) and in one (B packed per task:
// packed once for all chunks), the post must see each element once, with its final value.
TEST(GemmTest, DriverRowChunksRunEveryPassThenThePost) {
  for (const SimdKernels* simd : usable_kernels()) {
    for (bool per_task : {false, true}) {
      for (int64_t k : {40, 1700}) {
        for (int threads : {1, 3}) {
          const int64_t m = 1301, n = 24;
          OneProduct pr(*simd, m, n, k, !per_task, 99.0f, 11);
          const std::vector<float>&a = pr.a, &b = pr.b, &c = pr.c;
          GemmEpilogue ep;
          ep.post = [](const void*, float* block, int64_t ldc, int64_t r, int64_t cols) {
            for (int64_t i = 0; i < r; ++i) {
              for (int64_t j = 0; j < cols; ++j) block[i * ldc + j] = -block[i * ldc + j] + 1.0f;
            }
          };
          GemmScratch scratch;
          ThreadPool pool(threads);
          run_gemm(*simd, pr.jobs, ep, pr.rows.fn(), pr.b_fn(), scratch, &pool);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double acc = 0, mag = 0;
              for (int64_t t = 0; t < k; ++t) {
                acc += double(a[i * k + t]) * b[t * n + j];
                mag += std::fabs(double(a[i * k + t]) * b[t * n + j]);
              }
              ASSERT_NEAR(c[i * n + j], 1.0 - acc, (k + 1) * 1.2e-7 * mag + 1e-6)
                  << simd->name << " per_task=" << per_task << " k=" << k << " threads=" << threads
                  << " at " << i << "," << j;
            }
          }
        }
      }
    }
  }
}

// B packed per task through the callback (the path for operands packed on the fly).
TEST(GemmTest, DriverPacksBPerTask) {
  for (const SimdKernels* simd : usable_kernels()) {
    const int64_t m = 11, n = 150, k = 600;
    OneProduct pr(*simd, m, n, k, /*pack_ahead=*/false, 0.0f, 9);
    const std::vector<float>&a = pr.a, &b = pr.b, &c = pr.c;
    GemmScratch scratch;
    ThreadPool pool(2);
    run_gemm(*simd, pr.jobs, GemmEpilogue{}, pr.rows.fn(), pr.b_fn(), scratch, &pool);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < k; ++t) acc += double(a[i * k + t]) * b[t * n + j];
        EXPECT_NEAR(c[i * n + j], acc, 2e-3) << simd->name;
      }
    }
  }
}

TEST(SimdTest, ElementwiseAndReductionsAllIsas) {
  for (const SimdKernels* simd : usable_kernels()) {
    for (int64_t n : {1, 3, 16, 17, 100}) {
      std::vector<float> x = random_floats(n, 11), y = random_floats(n, 12), out(n);
      simd->binary(BinaryOpF::kMul, x.data(), 1, y.data(), 0, out.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[i], x[i] * y[0]) << simd->name;
      UnaryArgs relu;
      relu.op = UnaryOpF::kRelu;
      simd->unary(relu, x.data(), out.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[i], x[i] > 0 ? x[i] : 0.0f);
      double sum = 0;
      float mx = -INFINITY;
      for (float v : x) sum += v, mx = std::max(mx, v);
      EXPECT_NEAR(simd->reduce_sum(x.data(), n), sum, 1e-4 * n);
      EXPECT_EQ(simd->reduce_max(x.data(), n), mx);
      x[n / 2] = NAN;
      EXPECT_TRUE(std::isnan(simd->reduce_max(x.data(), n)));
    }
  }
}

}  // namespace
}  // namespace webnn
