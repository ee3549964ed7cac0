// maxPool2d, averagePool2d and the global pools (float32). NHWC rows are vectorised over
// channels; NCHW planes are copied into a padded buffer (-inf or 0 outside the image) and
// vectorised along rows (simd_kernels.h). Averages divide by the taps inside the image.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/aligned_buffer.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/plane.h"

namespace webnn {

namespace {

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const SimdKernels& simd, bool max, bool nhwc, OperandRef input, int64_t batch,
             int64_t channels, const WindowGeometry& g)
      : simd_(simd),
        max_(max),
        nhwc_(nhwc),
        input_(input),
        batch_(batch),
        channels_(channels),
        g_(g),
        plane_(g) {
    if (!nhwc_) {
      count_h_.resize(g.out_h);
      count_w_.resize(g.out_w);
      auto count = [](int64_t o, int64_t stride, int64_t pad, int64_t dil, int64_t k, int64_t in) {
        int64_t c = 0;
        for (int64_t t = 0; t < k; ++t) {
          const int64_t i = o * stride - pad + t * dil;
          c += i >= 0 && i < in;
        }
        return static_cast<float>(c);
      };
      for (int64_t o = 0; o < g.out_h; ++o) {
        count_h_[o] = count(o, g.stride_h, g.pad_top, g.dil_h, g.k_h, g.in_h);
      }
      for (int64_t o = 0; o < g.out_w; ++o) {
        count_w_[o] = count(o, g.stride_w, g.pad_left, g.dil_w, g.k_w, g.in_w);
      }
    }
  }

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(input_).as<float>();
    float* y = ctx.out().as<float>();
    if (nhwc_) {
      run_nhwc(x, y, ctx.pool());
    } else {
      run_nchw(x, y, ctx.pool());
    }
    return Status::ok();
  }

 private:
  void run_nhwc(const float* x, float* y, ThreadPool* pool) {
    PoolRowArgs a;
    a.in_h = g_.in_h;
    a.in_w = g_.in_w;
    a.channels = channels_;
    a.win_h = g_.k_h;
    a.win_w = g_.k_w;
    a.stride_h = g_.stride_h;
    a.stride_w = g_.stride_w;
    a.dil_h = g_.dil_h;
    a.dil_w = g_.dil_w;
    a.pad_top = g_.pad_top;
    a.pad_left = g_.pad_left;
    a.out_w = g_.out_w;
    a.max = max_;
    const int64_t row_work = std::max<int64_t>(1, g_.out_w * channels_ * g_.k_h * g_.k_w);
    parallel_chunks(pool, batch_ * g_.out_h, std::max<int64_t>(1, 32768 / row_work),
                    [&](int64_t begin, int64_t end) {
                      PoolRowArgs r = a;
                      for (int64_t i = begin; i < end; ++i) {
                        r.x = x + (i / g_.out_h) * g_.in_h * g_.in_w * channels_;
                        r.oh = i % g_.out_h;
                        r.y = y + i * g_.out_w * channels_;
                        simd_.pool_nhwc_row(r);
                      }
                    });
  }

  void run_nchw(const float* x, float* y, ThreadPool* pool) {
    const int threads = pool ? pool->num_threads() : 1;
    if (scratch_.size() < static_cast<size_t>(threads)) scratch_.resize(threads);
    for (auto& buf : scratch_) buf.reserve(static_cast<size_t>(plane_.floats() + 16));
    const int64_t in_plane = g_.in_h * g_.in_w, out_plane = g_.out_h * g_.out_w;
    auto task = [&](int64_t i, int thread) {
      float* buf = scratch_[thread].data();
      plane_.fill(simd_, x + i * in_plane, max_ ? -INFINITY : 0.0f, buf);
      PlaneArgs a = plane_.args(buf);
      a.count_h = count_h_.data();
      a.count_w = count_w_.data();
      a.y = y + i * out_plane;
      simd_.plane(max_ ? PlaneOp::kMaxPool : PlaneOp::kAveragePool, a);
    };
    if (pool) {
      pool->parallel_for(batch_ * channels_, task);
    } else {
      for (int64_t i = 0; i < batch_ * channels_; ++i) task(i, 0);
    }
  }

  const SimdKernels& simd_;
  bool max_, nhwc_;
  OperandRef input_;
  int64_t batch_, channels_;
  WindowGeometry g_;
  PaddedPlane plane_;
  std::vector<float> count_h_, count_w_;
  std::vector<AlignedFloats> scratch_;
};

// Global pools: one reduction per (image, channel). Averages sum in double and divide once, as
// the reference does: a float32 sum's rounding would depend on the vector width (the ISA) and
// drift from the reference by a few ULP, enough to move a quantized model's next
// quantizeLinear by a step.
class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(const SimdKernels& simd, bool max, bool nhwc, OperandRef input, int64_t batch,
                   int64_t channels, int64_t pixels)
      : simd_(simd),
        max_(max),
        nhwc_(nhwc),
        input_(input),
        batch_(batch),
        channels_(channels),
        pixels_(pixels) {
    if (nhwc_ && !max_) sums_.resize(static_cast<size_t>(batch_ * channels_));
  }

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(input_).as<float>();
    float* y = ctx.out().as<float>();
    // An empty window has no mean (0 / 0) and no maximum (-inf), as in the reference.
    const double divisor = static_cast<double>(pixels_);
    if (!nhwc_) {
      parallel_chunks(ctx.pool(), batch_ * channels_,
                      std::max<int64_t>(1, 16384 / std::max<int64_t>(1, pixels_)),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t i = begin; i < end; ++i) {
                          const float* p = x + i * pixels_;
                          y[i] = max_ ? simd_.reduce_max(p, pixels_)
                                      : static_cast<float>(simd_.sum_row_d(p, pixels_) / divisor);
                        }
                      });
      return Status::ok();
    }
    // Tasks are (image, block of channels): with one image the channels are split so that
    // every thread reads its share of each pixel. Each channel still sums its pixels in order,
    // so the split (shapes and thread count only) never changes a result.
    const int threads = ctx.pool() ? ctx.pool()->num_threads() : 1;
    // One block per thread (a memory-bound pass: equal shares), of whole cache lines (16
    // floats) where the channels allow.
    const int64_t lines = (channels_ + 15) / 16;
    int64_t blocks = 1;
    if (threads > 1 && batch_ < 2 * threads && pixels_ * channels_ >= 16384) {
      blocks = std::max<int64_t>(1, std::min<int64_t>(threads, lines));
    }
    const int64_t block_c = std::max<int64_t>(1, (lines + blocks - 1) / blocks * 16);
    blocks = (channels_ + block_c - 1) / block_c;
    parallel_chunks(ctx.pool(), batch_ * blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t n = u / blocks, c0 = (u % blocks) * block_c;
        const int64_t count = std::min(block_c, channels_ - c0);
        float* out = y + n * channels_ + c0;
        const float* img = x + n * pixels_ * channels_ + c0;
        if (max_) {
          std::fill(out, out + count, -INFINITY);
          for (int64_t p = 0; p < pixels_; ++p) simd_.row_max(img + p * channels_, out, count);
          continue;
        }
        double* sum = sums_.data() + n * channels_ + c0;
        std::fill(sum, sum + count, 0.0);
        for (int64_t p = 0; p < pixels_; ++p) {
          simd_.acc_row_d(img + p * channels_, count, nullptr, sum);
        }
        for (int64_t c = 0; c < count; ++c) out[c] = static_cast<float>(sum[c] / divisor);
      }
    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  bool max_, nhwc_;
  OperandRef input_;
  int64_t batch_, channels_, pixels_;
  std::vector<double> sums_;  // NHWC averages: one per (image, channel), blocks disjoint
};

}  // namespace

std::unique_ptr<Kernel> make_pool_kernel(const Node& node, const CompileContext& cc,
                                         const SimdKernels& simd) {
  const bool max = node.kind == OpKind::kMaxPool2d || node.kind == OpKind::kGlobalMaxPool;
  const bool global =
      node.kind == OpKind::kGlobalMaxPool || node.kind == OpKind::kGlobalAveragePool;
  OperandRef input;
  std::string layout;
  if (global) {
    input = node.as<GlobalPoolParams>().input;
    layout = node.as<GlobalPoolParams>().layout;
  } else {
    input = node.as<Pool2dParams>().input;
    layout = node.as<Pool2dParams>().layout;
  }
  const TensorView& x = cc.view(input);
  const TensorView& y = cc.view(OperandRef{node.outputs[0]});
  if (x.data_type != DataType::kFloat32 || x.rank() != 4 || y.rank() != 4) return nullptr;
  if (layout != "nchw" && layout != "nhwc") return nullptr;
  const bool nhwc = layout == "nhwc";
  const int64_t batch = x.shape[0], channels = x.shape[nhwc ? 3 : 1];
  WindowGeometry g;
  g.in_h = x.shape[nhwc ? 1 : 2];
  g.in_w = x.shape[nhwc ? 2 : 3];
  g.out_h = y.shape[nhwc ? 1 : 2];
  g.out_w = y.shape[nhwc ? 2 : 3];
  if (global) {
    return std::make_unique<GlobalPoolKernel>(simd, max, nhwc, input, batch, channels,
                                              g.in_h * g.in_w);
  }
  const auto& p = node.as<Pool2dParams>();
  g.k_h = p.window_dimensions ? (*p.window_dimensions)[0] : g.in_h;
  g.k_w = p.window_dimensions ? (*p.window_dimensions)[1] : g.in_w;
  if (p.strides) g.stride_h = (*p.strides)[0], g.stride_w = (*p.strides)[1];
  if (p.dilations) g.dil_h = (*p.dilations)[0], g.dil_w = (*p.dilations)[1];
  if (p.padding) g.pad_top = (*p.padding)[0], g.pad_left = (*p.padding)[2];
  if (g.k_h <= 0 || g.k_w <= 0 || g.stride_h <= 0 || g.stride_w <= 0) return nullptr;
  // A window over the whole image is a global pool: same code, so the same bits.
  const bool whole = g.k_h == g.in_h && g.k_w == g.in_w && g.out_h == 1 && g.out_w == 1 &&
                     g.dil_h == 1 && g.dil_w == 1 && g.pad_top == 0 && g.pad_left == 0 &&
                     (!p.padding || ((*p.padding)[1] == 0 && (*p.padding)[3] == 0));
  if (whole) {
    return std::make_unique<GlobalPoolKernel>(simd, max, nhwc, input, batch, channels,
                                              g.in_h * g.in_w);
  }
  if (!nhwc && !PaddedPlane(g).fits()) return nullptr;  // the reference kernel computes it
  return std::make_unique<PoolKernel>(simd, max, nhwc, input, batch, channels, g);
}

}  // namespace webnn
