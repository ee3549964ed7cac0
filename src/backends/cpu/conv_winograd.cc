// conv2d 3x3, stride 1, dilation 1, one group, NHWC, constant filter (float32): Winograd
// F(4x4, 3x3). Each 4x4 block of outputs comes from a 6x6 input patch: the patch is
// transformed (B^T d B), multiplied element by element with the transformed filter
// (G g G^T) summed over input channels — 36 GEMMs of tiles x in_c by in_c x out_c, on the
// GEMM micro-kernel — and transformed back (A^T m A). That is 36 products per 16 outputs
// instead of 144: 4x fewer multiply-adds than the direct convolution, for transforms whose
// cost grows with the channels only linearly.
//
// Numerics: the sums are re-associated (the transforms mix the products of neighbouring
// pixels), so results are not the direct convolution's bits. With the points 0, +-1, +-2 the
// error stays within a few times the direct float32 sum's (bound and measurements in
// docs/performance.md, tests/python/test_cpu_winograd.py); WEBNN_CONV_WINOGRAD=0 in the
// environment (read when a graph is compiled) turns the kernel off. Non-finite values: the
// transforms mix the inputs of a whole patch, so an inf or NaN would reach outputs whose
// window does not hold it (inf * 0): a run whose outputs are not all finite is computed
// again by the direct kernel, which gives the definition's infs and NaNs.
#include "backends/cpu/conv_winograd.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cpu/conv_filter.h"
#include "backends/cpu/gemm.h"
#include "core/layout.h"

namespace webnn {

namespace {

constexpr int kTile = 4;                  // outputs per tile side
constexpr int kPatch = 6;                 // inputs per patch side
constexpr int kPoints = 36;               // transform values per tile
constexpr int64_t kMinTilesPerUnit = 18;  // rows of each unit's 36 GEMMs (3 micro-tiles of 6)

bool winograd_enabled() {
  const char* env = std::getenv("WEBNN_CONV_WINOGRAD");
  return !(env && std::strcmp(env, "0") == 0);
}

// G (6 x 3) of F(4x4, 3x3).
constexpr double kG[kPatch][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

class WinogradConv2dKernel final : public Kernel {
 public:
  WinogradConv2dKernel(const SimdKernels& simd, std::unique_ptr<Kernel> direct)
      : simd_(simd), direct_(std::move(direct)) {}

  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<Conv2dParams>();
    if (!float32_conv_operands<Conv2dParams>(node, cc) || p.input_layout != "nhwc") return false;
    if (!cc.is_constant(p.filter) || p.groups != 1) return false;
    const TensorView& x = cc.view(p.input);
    const TensorView& w = cc.view(p.filter);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    const FilterLayout filter(p.filter_layout, w.shape);
    if (filter.size('h') != 3 || filter.size('w') != 3) return false;
    if (p.strides && ((*p.strides)[0] != 1 || (*p.strides)[1] != 1)) return false;
    if (p.dilations && ((*p.dilations)[0] != 1 || (*p.dilations)[1] != 1)) return false;
    batch_ = x.shape[0];
    in_h_ = x.shape[1];
    in_w_ = x.shape[2];
    in_c_ = x.shape[3];
    out_h_ = y.shape[1];
    out_w_ = y.shape[2];
    out_c_ = y.shape[3];
    if (p.padding) pad_top_ = (*p.padding)[0], pad_left_ = (*p.padding)[2];
    // Worth it where the products dominate the transforms: enough channels both ways (one
    // thread, 64x64 maps: 8 -> 8 1.6x slower than direct, 16 -> 16 even, 16 -> 32 1.7x
    // faster), and enough tiles that the partial tiles at the edges are a small part.
    if (in_c_ < 16 || out_c_ < 16 || in_c_ * out_c_ < 512 || out_h_ < 8 || out_w_ < 8) {
      return false;
    }
    if (in_c_ > (int64_t{1} << 16) || out_c_ > (int64_t{1} << 16)) return false;
    tiles_h_ = ceil_div(out_h_, kTile);
    tiles_w_ = ceil_div(out_w_, kTile);
    tile_rows_per_unit_ = std::min(tiles_h_, ceil_div(kMinTilesPerUnit, tiles_w_));
    unit_tiles_ = tile_rows_per_unit_ * tiles_w_;
    gemm_tile_ = gemm_tile_for_columns(simd_, out_c_);
    if (!packed_b_floats(in_c_, out_c_, gemm_tile_.nr, &point_floats_)) return false;
    // Rows of V and M padded to whole vectors, away from 4 KiB strides.
    ldv_ = ceil_div(in_c_, 16) * 16 + 16;
    ldm_ = ceil_div(out_c_, 16) * 16 + 16;

    const auto data = cc.constant_data(p.filter);
    const std::string key = str_cat("conv2d/winograd4x4/", out_c_, "x", in_c_, "/", gemm_tile_.nr,
                                    "/", p.filter_layout, "/", simd_.name);
    if (cc.cache()) {
      weights_ = std::static_pointer_cast<const AlignedFloats>(cc.cache()->get(data, key));
    }
    if (!weights_) {
      auto packed = std::make_shared<AlignedFloats>();
      packed->reserve(point_floats_ * kPoints);
      transform_filter(w.as<float>(), filter, packed->data());
      if (cc.cache()) cc.cache()->put(data, key, packed);
      weights_ = std::move(packed);
    }
    zero_.reserve(static_cast<size_t>(in_c_ + 16));
    zero_.zero();
    return true;
  }

  std::unique_ptr<Kernel> release_direct() { return std::move(direct_); }

  bool set_output_sink(const OutputSink* sink) override {
    if (!direct_->set_output_sink(sink)) return false;
    sink_ = sink;
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<Conv2dParams>();
    const float* x = ctx.in(p.input).as<float>();
    const float* bias = p.bias.present() ? ctx.in(p.bias).as<float>() : nullptr;
    float* y = ctx.out().as<float>();
    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->num_threads() : 1;
    if (scratch_.size() < static_cast<size_t>(threads)) scratch_.resize(threads);
    const int64_t rows = rows_per_unit(threads);
    const int64_t units_per_image = ceil_div(tiles_h_, rows);
    for (Scratch& s : scratch_) s.finite = true;
    auto task = [&](int64_t unit, int thread) {
      Scratch& s = scratch_[thread];
      if (s.finite) run_unit(x, bias, y, unit / units_per_image, unit % units_per_image, rows, s);
    };
    const int64_t units = batch_ * units_per_image;
    if (pool) {
      pool->parallel_for(units, task);
    } else {
      for (int64_t u = 0; u < units; ++u) task(u, 0);
    }
    for (const Scratch& s : scratch_) {
      if (!s.finite) return direct_->run(ctx);
    }
    return Status::ok();
  }

 private:
  struct Scratch {
    AlignedFloats v, m;
    RowMajorA a;
    std::vector<GemmJob> jobs;
    GemmScratch gemm;
    bool finite = true;  // every output this thread wrote in this run is finite
  };

  // U = G g G^T per (o, i), in double, rounded once; packed per transform point for the GEMM
  // (rows i, columns o).
  void transform_filter(const float* w, const FilterLayout& filter, float* out) const {
    std::vector<float> dense(static_cast<size_t>(kPoints * in_c_ * out_c_));
    for (int64_t o = 0; o < out_c_; ++o) {
      for (int64_t i = 0; i < in_c_; ++i) {
        double g[3][3], gg[kPatch][3];
        for (int kh = 0; kh < 3; ++kh) {
          for (int kw = 0; kw < 3; ++kw) g[kh][kw] = w[filter.at(o, i, kh, kw)];
        }
        for (int a = 0; a < kPatch; ++a) {
          for (int kw = 0; kw < 3; ++kw) {
            gg[a][kw] = kG[a][0] * g[0][kw] + kG[a][1] * g[1][kw] + kG[a][2] * g[2][kw];
          }
        }
        for (int a = 0; a < kPatch; ++a) {
          for (int b = 0; b < kPatch; ++b) {
            const double u = gg[a][0] * kG[b][0] + gg[a][1] * kG[b][1] + gg[a][2] * kG[b][2];
            dense[((a * kPatch + b) * in_c_ + i) * out_c_ + o] = static_cast<float>(u);
          }
        }
      }
    }
    for (int e = 0; e < kPoints; ++e) {
      pack_b(dense.data() + e * in_c_ * out_c_, out_c_, 1, in_c_, out_c_, gemm_tile_.nr,
             out + e * point_floats_);
    }
  }

  // Tile rows per unit at this thread count: at most tile_rows_per_unit_ (the scratch's
  // size), fewer when that leaves threads idle, and spread evenly (5 rows in 2 units go as
  // 3 + 2, not 4 + 1). Each output's sums do not depend on the units (a GEMM row's sum is the
  // same whatever rows go with it), so neither do the results.
  int64_t rows_per_unit(int threads) const {
    int64_t rows = tile_rows_per_unit_;
    if (threads > 1 && batch_ * ceil_div(tiles_h_, rows) < 2 * threads) {
      rows = std::max<int64_t>(1, ceil_div(batch_ * tiles_h_, 2 * threads));
      rows = std::min(rows, tile_rows_per_unit_);
    }
    return ceil_div(tiles_h_, ceil_div(tiles_h_, rows));
  }

  // Tile rows [unit * rows, ...) of image n: transforms, the 36 products, outputs.
  void run_unit(const float* x, const float* bias, float* y, int64_t n, int64_t unit, int64_t rows,
                Scratch& s) const {
    // (Const: the scratch is the calling thread's own.)
    const int64_t th0 = unit * rows;
    const int64_t th1 = std::min(tiles_h_, th0 + rows);
    const int64_t tiles = (th1 - th0) * tiles_w_;
    const int64_t v_stride = unit_tiles_ * ldv_, m_stride = unit_tiles_ * ldm_;
    if (s.jobs.empty()) {
      s.v.reserve(static_cast<size_t>(kPoints * v_stride));
      s.m.reserve(static_cast<size_t>(kPoints * m_stride));
      s.jobs.resize(kPoints);
      s.a.a.resize(kPoints);
      s.a.lda.assign(kPoints, ldv_);
      s.a.mr = gemm_tile_.mr;
      for (int e = 0; e < kPoints; ++e) {
        GemmJob& job = s.jobs[e];
        job.n = out_c_;
        job.k_per_tap = in_c_;
        job.b_packed = weights_->data() + e * point_floats_;
        job.c = s.m.data() + e * m_stride;
        job.ldc = ldm_;
        s.a.a[e] = s.v.data() + e * v_stride;
      }
    }
    const float* image = x + n * in_h_ * in_w_ * in_c_;
    const float* px[kPoints];
    WinogradInputArgs in;
    in.px = px;
    in.channels = in_c_;
    in.v_stride = v_stride;
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t ih0 = (th0 + t / tiles_w_) * kTile - pad_top_;
      const int64_t iw0 = (t % tiles_w_) * kTile - pad_left_;
      for (int i = 0; i < kPatch; ++i) {
        const int64_t ih = ih0 + i;
        for (int j = 0; j < kPatch; ++j) {
          const int64_t iw = iw0 + j;
          const bool inside = ih >= 0 && ih < in_h_ && iw >= 0 && iw < in_w_;
          px[i * kPatch + j] = inside ? image + (ih * in_w_ + iw) * in_c_ : zero_.data();
        }
      }
      in.v = s.v.data() + t * ldv_;
      simd_.winograd_input_tile(in);
    }
    for (GemmJob& job : s.jobs) job.m = tiles;
    s.a.rows = tiles;
    run_gemm(simd_, s.jobs, GemmEpilogue{}, s.a.fn(), GemmBFn{}, s.gemm, nullptr, &gemm_tile_);
    WinogradOutputArgs out;
    out.m_stride = m_stride;
    out.channels = out_c_;
    out.bias = bias;
    out.y_col_stride = out_c_;
    out.y_row_stride = out_w_ * out_c_;
    float* image_y = y + n * out_h_ * out_w_ * out_c_;
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t oh0 = (th0 + t / tiles_w_) * kTile, ow0 = (t % tiles_w_) * kTile;
      out.m = s.m.data() + t * ldm_;
      out.y = image_y + (oh0 * out_w_ + ow0) * out_c_;
      out.rows = static_cast<int>(std::min<int64_t>(kTile, out_h_ - oh0));
      out.cols = static_cast<int>(std::min<int64_t>(kTile, out_w_ - ow0));
      if (!simd_.winograd_output_tile(out)) s.finite = false;
    }
    if (!s.finite) return;  // the direct kernel computes the whole run again
    if (sink_) {
      // The unit's output rows, whole image rows: one contiguous run.
      const int64_t oh0 = th0 * kTile, oh1 = std::min(out_h_, th1 * kTile);
      sink_->apply(y, (n * out_h_ + oh0) * out_w_ * out_c_, (oh1 - oh0) * out_w_ * out_c_);
    }
  }

  const SimdKernels& simd_;
  std::unique_ptr<Kernel> direct_;
  const OutputSink* sink_ = nullptr;
  std::shared_ptr<const AlignedFloats> weights_;  // 36 packed B matrices, shared by plans
  int64_t batch_ = 0, in_h_ = 0, in_w_ = 0, in_c_ = 0, out_h_ = 0, out_w_ = 0, out_c_ = 0;
  int64_t pad_top_ = 0, pad_left_ = 0;
  int64_t tiles_h_ = 0, tiles_w_ = 0, tile_rows_per_unit_ = 1, unit_tiles_ = 0;
  int64_t ldv_ = 0, ldm_ = 0;
  size_t point_floats_ = 0;
  GemmTile gemm_tile_{0, 0, nullptr};
  AlignedFloats zero_;
  std::vector<Scratch> scratch_;
};

}  // namespace

std::unique_ptr<Kernel> make_winograd_conv2d_kernel(const Node& node, const CompileContext& cc,
                                                    const SimdKernels& simd,
                                                    std::unique_ptr<Kernel> direct) {
  if (!direct || !winograd_enabled()) return direct;
  auto k = std::make_unique<WinogradConv2dKernel>(simd, std::move(direct));
  if (!k->init(node, cc)) return k->release_direct();
  return k;
}

}  // namespace webnn
