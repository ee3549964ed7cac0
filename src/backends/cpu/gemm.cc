#include "backends/cpu/gemm.h"

#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"

namespace webnn {

namespace {

// Depth of one pass over K: a kc x nr panel of B is streamed from L2 for every micro-tile, and
// kc x nb of B (one task's block) should stay in L2 while the task's rows go by.
constexpr int64_t kKc = 768;
constexpr int64_t kL2Bytes = 512 * 1024;
constexpr int64_t kTasksPerThread = 4;
// Floats of C per row chunk of a task (see run_gemm): 32 KiB, a small part of L2 (512 KiB).
constexpr int64_t kChunkFloats = 8 * 1024;
// Below this many multiply-adds a task costs less than waking and joining a thread does
// (~1-3 us per region here), so small products (a MobileNet's late layers, a GEMV) are split
// into fewer tasks, down to one. The split still depends only on shapes and thread count.
constexpr double kMinTaskMacs = 96 * 1024;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// How K (taps x k_per_tap) is cut into passes: whole taps while they are short, else each
// tap's columns in equal chunks.
struct KBlocking {
  int64_t taps_per_block, cols_per_block;
};

KBlocking k_blocking(int64_t taps, int64_t k_per_tap) {
  if (k_per_tap >= kKc) return {1, ceil_div(k_per_tap, ceil_div(k_per_tap, kKc))};
  // Equal passes: 9 taps of 64 go as 5 + 4, not 8 + 1.
  const int64_t most = std::max<int64_t>(1, kKc / std::max<int64_t>(1, k_per_tap));
  const int64_t passes = ceil_div(std::max<int64_t>(1, taps), most);
  return {std::max<int64_t>(1, ceil_div(taps, passes)), k_per_tap};
}

// k rows of W floats (row stride `row_stride`) into a panel, each a fixed-size copy.
template <int W>
void copy_panel_rows(const float* src, int64_t row_stride, int64_t k, float* panel) {
  for (int64_t i = 0; i < k; ++i) {
    std::memcpy(panel + i * W, src + i * row_stride, W * sizeof(float));
  }
}

}  // namespace

bool packed_b_floats(int64_t k, int64_t n, int nr, size_t* floats) {
  if (k < 0 || n < 0) return false;
  uint64_t cols = static_cast<uint64_t>(round_up(n, nr));
  uint64_t total = 0;
  if (__builtin_mul_overflow(cols, static_cast<uint64_t>(k), &total)) return false;
  if (__builtin_mul_overflow(total, uint64_t{sizeof(float)}, &total)) return false;
  *floats = static_cast<size_t>(total / sizeof(float));
  return true;
}

void pack_b(const float* b, int64_t row_stride, int64_t col_stride, int64_t k, int64_t n, int nr,
            float* dst) {
  for (int64_t n0 = 0; n0 < n; n0 += nr) {
    const int64_t w = std::min<int64_t>(nr, n - n0);
    float* panel = dst + (n0 / nr) * k * nr;
    if (col_stride == 1) {
      // Whole panels of the usual widths as fixed-size copies (inlined): B packed per run
      // (attention's K^T and V, 16-32 columns per head) made one libc call per 64 bytes.
      if (w == nr && (nr == 16 || nr == 64)) {
        const float* src = b + n0;
        if (nr == 16) {
          copy_panel_rows<16>(src, row_stride, k, panel);
        } else {
          copy_panel_rows<64>(src, row_stride, k, panel);
        }
        continue;
      }
      for (int64_t i = 0; i < k; ++i) {
        float* d = panel + i * nr;
        std::memcpy(d, b + i * row_stride + n0, static_cast<size_t>(w) * sizeof(float));
        std::fill(d + w, d + nr, 0.0f);
      }
      continue;
    }
    // Columns are contiguous in memory (a transposed B): gather, 64 rows at a time so the
    // written panel rows stay in L1.
    for (int64_t i0 = 0; i0 < k; i0 += 64) {
      const int64_t i1 = std::min(k, i0 + 64);
      for (int64_t j = 0; j < w; ++j) {
        const float* src = b + (n0 + j) * col_stride;
        for (int64_t i = i0; i < i1; ++i) panel[i * nr + j] = src[i * row_stride];
      }
      for (int64_t i = i0; i < i1; ++i) std::fill(panel + i * nr + w, panel + (i + 1) * nr, 0.0f);
    }
  }
}

void transpose(const float* a, int64_t rows, int64_t cols, float* out) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
    const int64_t i1 = std::min(rows, i0 + kTile);
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t j1 = std::min(cols, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) out[j * rows + i] = a[i * cols + j];
      }
    }
  }
}

GemmAFn RowMajorA::fn() const {
  auto table = [](const void* ctx, int64_t job, int64_t m0,
                  const float** scratch) -> const float* const* {
    const auto& self = *static_cast<const RowMajorA*>(ctx);
    // Rows past the matrix are never read (the micro-kernel is instantiated for the tile's
    // real height); point them at row m0 to stay inside the buffer.
    const float* base = self.a[job] + m0 * self.lda[job];
    for (int r = 0; r < self.mr; ++r) {
      scratch[r] = r < self.rows - m0 ? base + r * self.lda[job] : base;
    }
    return scratch;
  };
  return {table, this};
}

GemmTile main_gemm_tile(const SimdKernels& simd) {
  return {simd.gemm_mr, simd.gemm_nr, simd.gemm_ukernel};
}

GemmTile gemm_tile_for_columns(const SimdKernels& simd, int64_t n) {
  if (round_up(n, simd.gemm3_nr) < round_up(n, simd.gemm_nr)) {
    return {simd.gemm3_mr, simd.gemm3_nr, simd.gemm3_ukernel};
  }
  return main_gemm_tile(simd);
}

void run_gemm(const SimdKernels& simd, const std::vector<GemmJob>& jobs, const GemmEpilogue& ep,
              GemmAFn a_fn, GemmBFn b_fn, GemmScratch& scratch, ThreadPool* pool,
              const GemmTile* tile) {
  const GemmTile micro = tile ? *tile : main_gemm_tile(simd);
  if (jobs.empty()) return;
  // Every job has the same shape (batches of a matmul, groups of a convolution).
  const GemmJob& shape = jobs[0];
  const int64_t m = shape.m, n = shape.n, taps = shape.taps, k_per_tap = shape.k_per_tap;
  if (m == 0 || n == 0) return;
  const int mr = micro.mr, nr = micro.nr;
  const int threads = pool ? pool->num_threads() : 1;
  const bool pack_per_task = shape.b_packed == nullptr;
  const KBlocking kb = k_blocking(taps, k_per_tap);
  const int64_t k_total = taps * k_per_tap;
  const int64_t kc = std::max<int64_t>(1, kb.taps_per_block * kb.cols_per_block);

  // Task blocks: nb columns (B block kc x nb in L2) by mb rows, enough of them to balance the
  // threads. Packing B per task favours splitting columns, so no block is packed twice.
  const int64_t n_panels = ceil_div(n, nr), m_tiles = ceil_div(m, mr);
  const int64_t jobs_count = static_cast<int64_t>(jobs.size());
  const double macs = static_cast<double>(m) * n * std::max<int64_t>(1, k_total) * jobs.size();
  const int64_t worth = static_cast<int64_t>(std::min(macs / kMinTaskMacs, 1e9));
  const int64_t target =
      threads > 1 ? std::max<int64_t>(1, std::min<int64_t>(kTasksPerThread * threads, worth)) : 1;
  int64_t n_blocks = ceil_div(n_panels, std::max<int64_t>(1, kL2Bytes / (kc * 4 * nr)));
  int64_t m_blocks = 1;
  if (!pack_per_task && jobs_count * n_blocks < target) {
    m_blocks = std::min(m_tiles, ceil_div(target, jobs_count * n_blocks));
  }
  if (jobs_count * m_blocks * n_blocks < target) {
    n_blocks = std::min(n_panels, ceil_div(target, jobs_count * m_blocks));
  }
  m_blocks = std::min(m_blocks, m_tiles);
  n_blocks = std::min(n_blocks, n_panels);
  // Few tasks that do not divide among the threads leave one thread idle at the end (9 equal
  // tasks on 2 threads: 5 + 4): one more row (else column) block per job when that makes the
  // count a multiple of the thread count.
  if (threads > 1 && jobs_count * m_blocks * n_blocks >= threads &&
      jobs_count * m_blocks * n_blocks < 16 * threads) {
    auto divides = [&](int64_t mbs, int64_t nbs) { return jobs_count * mbs * nbs % threads == 0; };
    int64_t mbs = m_blocks, nbs = n_blocks;
    for (int64_t extra = 0; extra < threads && !divides(mbs, nbs); ++extra) {
      if (!pack_per_task && m_blocks + extra <= m_tiles) mbs = m_blocks + extra;
      if (divides(mbs, nbs)) break;
      mbs = m_blocks;
      if (n_blocks + extra <= n_panels) nbs = n_blocks + extra;
      if (divides(mbs, nbs)) break;
      nbs = n_blocks;
    }
    if (divides(mbs, nbs)) m_blocks = mbs, n_blocks = nbs;
  }
  // Blocks get whole tiles (panels) spread evenly: 22 tiles in 3 blocks go as 7 + 7 + 8, not
  // 8 + 8 + 6. The split depends only on shapes and the thread count, and no split changes
  // the order in which an element's products are summed.
  auto block_start = [](int64_t b, int64_t blocks, int64_t units, int64_t unit, int64_t size) {
    return std::min(size, (b * units / blocks) * unit);
  };
  const int64_t nb = ceil_div(n_panels, n_blocks) * nr;  // the widest column block
  const int64_t tasks = jobs_count * m_blocks * n_blocks;

  if (scratch.tables.size() < static_cast<size_t>(threads)) scratch.tables.resize(threads);
  if (pack_per_task && scratch.b_blocks.size() < static_cast<size_t>(threads)) {
    scratch.b_blocks.resize(threads);
  }
  for (int t = 0; t < threads; ++t) {
    scratch.tables[t].resize(static_cast<size_t>(std::max<int64_t>(1, taps) * mr));
    if (pack_per_task) scratch.b_blocks[t].reserve(static_cast<size_t>(kc * nb));
  }

  // Rows of one task go in chunks whose C block stays in L2 while every K pass and the fused
  // epilogue (ep.post) run over it: with one thread a task is the whole product, and det's
  // 3x3 96->24 convolutions (K = 864, two passes) wrote and re-read their 2.4 MB C from memory.
  // Only when the whole K of the task's B block fits in L2 alongside (else the passes' blocks
  // would evict each other per chunk), or there is a single pass (then only the epilogue
  // moves), and never when B is packed per task and pass (it would be packed once per chunk).
  const int64_t passes =
      k_total == 0 ? 1 : ceil_div(taps, kb.taps_per_block) * ceil_div(k_per_tap, kb.cols_per_block);
  const bool b_fits = k_total * nb * 4 <= kL2Bytes / 2;
  const bool chunked = passes == 1 ? ep.post != nullptr : (!pack_per_task && b_fits);
  const int64_t chunk_rows =
      chunked ? std::max<int64_t>(1, kChunkFloats / nb / mr) * mr : std::max<int64_t>(1, m);

  // A few row tiles against a wide B (a classifier over a sequence: 32 rows x 8210 columns,
  // K = 1024): each B panel is used by every row tile while it is in L1/L2, so B streams from
  // memory once alongside the arithmetic instead of being re-read from L2 per row tile. Only
  // for plain matrices (taps == 1: A's row table is rebuilt per tile); the tiles and their
  // sums are the same either way.
  const int64_t chunk_tiles = ceil_div(std::min(m, chunk_rows), mr);
  const bool panel_outer = taps == 1 && chunk_tiles > 1 && chunk_tiles <= 8;
  auto run_task = [&](int64_t task, int thread) {
    const int64_t j = task / (m_blocks * n_blocks);
    const int64_t rest = task % (m_blocks * n_blocks);
    const int64_t mi = rest / n_blocks, ni = rest % n_blocks;
    const int64_t m_begin = block_start(mi, m_blocks, m_tiles, mr, m);
    const int64_t m_end = block_start(mi + 1, m_blocks, m_tiles, mr, m);
    const int64_t n0 = block_start(ni, n_blocks, n_panels, nr, n);
    const int64_t n1 = block_start(ni + 1, n_blocks, n_panels, nr, n);
    const GemmJob& job = jobs[j];
    const float** table_scratch = scratch.tables[thread].data();
    GemmUkernelArgs args;
    args.zero = job.zero;
    args.ldc = job.ldc;
    args.alpha = ep.alpha;
    // An empty K still writes C (alpha * 0 + C + bias): one pass of zero depth.
    const int64_t t_step = k_total == 0 ? 1 : kb.taps_per_block;
    const int64_t c_step = k_total == 0 ? 1 : kb.cols_per_block;
    const int64_t t_end = k_total == 0 ? 1 : taps, c_end = k_total == 0 ? 1 : k_per_tap;
    // Chunks start at multiples of mr from m_begin: the same tiles as one sweep, same bits.
    for (int64_t m0 = m_begin; m0 < m_end; m0 += chunk_rows) {
      const int64_t m1 = std::min(m_end, m0 + chunk_rows);
      for (int64_t t0 = 0; t0 < t_end; t0 += t_step) {
        const int64_t nt = k_total == 0 ? 0 : std::min(t_step, taps - t0);
        for (int64_t c0 = 0; c0 < c_end; c0 += c_step) {
          const int64_t nc = k_total == 0 ? 0 : std::min(c_step, k_per_tap - c0);
          const bool first = t0 == 0 && c0 == 0;
          const bool last = t0 + t_step >= t_end && c0 + c_step >= c_end;
          const float* b_block;
          int64_t panel_stride;
          if (pack_per_task) {
            float* buf = scratch.b_blocks[thread].data();
            // With chunks there is one pass: pack it for the first chunk only.
            if (nc > 0 && m0 == m_begin) b_fn.fn(b_fn.ctx, j, n0, n1 - n0, c0, nc, buf);
            b_block = buf;
            panel_stride = nc * nr;
            args.b_tap_stride = nc;
          } else {
            panel_stride = k_total * nr;
            b_block = job.b_packed + (n0 / nr) * panel_stride + (t0 * k_per_tap + c0) * nr;
            args.b_tap_stride = k_per_tap;
          }
          args.taps = nt;
          args.kc = nc;
          args.a_offset = job.a_offset + c0;
          args.accumulate = first ? ep.accumulate : true;
          args.clamp = last && ep.clamp;
          args.act = last ? ep.act : GemmActivation::kNone;
          args.lo = ep.lo;
          args.hi = ep.hi;
          auto run_tile = [&](int64_t i, const float* const* table, int64_t jj) {
            args.a = table + t0 * mr;
            args.mr = static_cast<int>(std::min<int64_t>(mr, m1 - i));
            args.row_bias = first && job.row_bias ? job.row_bias + i : nullptr;
            args.b = b_block + ((jj - n0) / nr) * panel_stride;
            args.c = job.c + i * job.ldc + jj;
            args.nr = static_cast<int>(std::min<int64_t>(nr, n1 - jj));
            // The column bias joins the finished sum (last pass): C = A * B + bias, as a
            // following add node would compute it, whatever the K blocking.
            args.col_bias = last && job.col_bias ? job.col_bias + jj : nullptr;
            micro.ukernel(args);
          };
          if (panel_outer) {
            for (int64_t jj = n0; jj < n1; jj += nr) {
              for (int64_t i = m0; i < m1; i += mr) {
                run_tile(i, a_fn.fn(a_fn.ctx, j, i, table_scratch), jj);
              }
            }
          } else {
            for (int64_t i = m0; i < m1; i += mr) {
              const float* const* table = a_fn.fn(a_fn.ctx, j, i, table_scratch);
              for (int64_t jj = n0; jj < n1; jj += nr) run_tile(i, table, jj);
            }
          }
        }
      }
      if (ep.post) ep.post(ep.post_ctx, job.c + m0 * job.ldc + n0, job.ldc, m1 - m0, n1 - n0);
    }
  };
  if (pool) {
    pool->parallel_for(tasks, run_task);
  } else {
    for (int64_t t = 0; t < tasks; ++t) run_task(t, 0);
  }
}

}  // namespace webnn
