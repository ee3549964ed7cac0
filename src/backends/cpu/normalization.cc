// batchNormalization, instanceNormalization, layerNormalization (float32). Statistics and the
// affine step run in double like the reference kernels (normalization.inc: vectors of doubles),
// so each output rounds once: batch normalization is bit-identical to the reference, the
// others differ only by the order of the double sums. Work is split over channels / groups.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

// Parameters read as double (the reference casts epsilon to the input type first).
double read_param(const KernelContext& ctx, OperandRef r, int64_t i, double fallback) {
  return r.present() ? static_cast<double>(ctx.in(r).as<float>()[i]) : fallback;
}

// The epsilon option rounded to float32, as the float32 reference uses it, in double.
double float32_epsilon(double epsilon) { return static_cast<double>(static_cast<float>(epsilon)); }

// A normalization's per-element scale and bias (1 and 0 when the option is absent), read into
// `scale` and `bias` (both of the same size).
void read_scale_bias(const KernelContext& ctx, OperandRef scale_ref, OperandRef bias_ref,
                     std::vector<double>& scale, std::vector<double>& bias) {
  for (size_t i = 0; i < scale.size(); ++i) {
    scale[i] = read_param(ctx, scale_ref, static_cast<int64_t>(i), 1.0);
    bias[i] = read_param(ctx, bias_ref, static_cast<int64_t>(i), 0.0);
  }
}

bool float_operands(const CompileContext& cc, std::initializer_list<OperandRef> refs) {
  for (OperandRef r : refs) {
    if (r.present() && cc.view(r).data_type != DataType::kFloat32) return false;
  }
  return true;
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(const SimdKernels& simd, int64_t outer, int64_t channels, int64_t inner)
      : simd_(simd), outer_(outer), channels_(channels), inner_(inner) {
    mean_.resize(channels);
    mul_.resize(channels);
    bias_.resize(channels);
    ones_.assign(channels, 1.0);
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<BatchNormalizationParams>();
    const double eps = float32_epsilon(p.epsilon);
    for (int64_t c = 0; c < channels_; ++c) {
      mean_[c] = read_param(ctx, p.mean, c, 0.0);
      const double var = read_param(ctx, p.variance, c, 0.0);
      mul_[c] = read_param(ctx, p.scale, c, 1.0) / std::sqrt(var + eps);
      bias_[c] = read_param(ctx, p.bias, c, 0.0);
    }
    const float* x = ctx.in(p.input).as<float>();
    float* y = ctx.out().as<float>();
    static const double kOne = 1.0;
    NormRowArgs a;
    a.scale = &kOne;
    if (inner_ == 1) {
      // Channels last: one row of all channels per outer index.
      a.n = channels_;
      a.mean = mean_.data();
      a.inv = mul_.data();
      a.scale = ones_.data();
      a.bias = bias_.data();
      a.mean_step = a.inv_step = a.scale_step = a.bias_step = 1;
      parallel_chunks(ctx.pool(), outer_, std::max<int64_t>(1, 16384 / channels_),
                      [&](int64_t begin, int64_t end) {
                        NormRowArgs r = a;
                        for (int64_t o = begin; o < end; ++o) {
                          r.x = x + o * channels_;
                          r.y = y + o * channels_;
                          simd_.norm_row(r);
                        }
                      });
      return Status::ok();
    }
    a.n = inner_;
    parallel_chunks(ctx.pool(), outer_ * channels_, std::max<int64_t>(1, 16384 / inner_),
                    [&](int64_t begin, int64_t end) {
                      NormRowArgs r = a;
                      for (int64_t i = begin; i < end; ++i) {
                        const int64_t c = i % channels_;
                        r.x = x + i * inner_;
                        r.y = y + i * inner_;
                        r.mean = &mean_[c];
                        r.inv = &mul_[c];
                        r.bias = &bias_[c];
                        simd_.norm_row(r);
                      }
                    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  int64_t outer_, channels_, inner_;
  std::vector<double> mean_, mul_, bias_, ones_;
};

class InstanceNormKernel final : public Kernel {
 public:
  InstanceNormKernel(const SimdKernels& simd, bool nhwc, int64_t batch, int64_t channels,
                     int64_t pixels)
      : simd_(simd), nhwc_(nhwc), batch_(batch), channels_(channels), pixels_(pixels) {
    mean_.resize(batch * channels);
    inv_.resize(batch * channels);
    scale_.resize(channels);
    bias_.resize(channels);
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<InstanceNormalizationParams>();
    const double eps = float32_epsilon(p.epsilon);
    read_scale_bias(ctx, p.scale, p.bias, scale_, bias_);
    const float* x = ctx.in(p.input).as<float>();
    float* y = ctx.out().as<float>();
    const double count = static_cast<double>(pixels_);
    if (!nhwc_) {
      parallel_chunks(ctx.pool(), batch_ * channels_, std::max<int64_t>(1, 8192 / pixels_),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t i = begin; i < end; ++i) {
                          const int64_t c = i % channels_;
                          const float* src = x + i * pixels_;
                          const double mean = simd_.sum_row_d(src, pixels_) / count;
                          const double var = simd_.sum_sq_dev_d(src, pixels_, mean) / count;
                          const double inv = 1.0 / std::sqrt(var + eps);
                          NormRowArgs r;
                          r.x = src;
                          r.y = y + i * pixels_;
                          r.n = pixels_;
                          r.mean = &mean;
                          r.inv = &inv;
                          r.scale = &scale_[c];
                          r.bias = &bias_[c];
                          simd_.norm_row(r);
                        }
                      });
      return Status::ok();
    }
    // Channels last: tasks own a block of channels of one image and walk all its pixels.
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (channels_ + kBlock - 1) / kBlock;
    parallel_chunks(ctx.pool(), batch_ * blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / blocks, c0 = (t % blocks) * kBlock;
        const int64_t width = std::min(kBlock, channels_ - c0);
        const float* img = x + n * pixels_ * channels_ + c0;
        double* mean = &mean_[n * channels_ + c0];
        double* inv = &inv_[n * channels_ + c0];
        std::fill(mean, mean + width, 0.0);
        std::fill(inv, inv + width, 0.0);
        for (int64_t q = 0; q < pixels_; ++q)
          simd_.acc_row_d(img + q * channels_, width, nullptr, mean);
        for (int64_t c = 0; c < width; ++c) mean[c] /= count;
        for (int64_t q = 0; q < pixels_; ++q)
          simd_.acc_row_d(img + q * channels_, width, mean, inv);
        for (int64_t c = 0; c < width; ++c) inv[c] = 1.0 / std::sqrt(inv[c] / count + eps);
        NormRowArgs r;
        r.n = width;
        r.mean = mean;
        r.inv = inv;
        r.scale = &scale_[c0];
        r.bias = &bias_[c0];
        r.mean_step = r.inv_step = r.scale_step = r.bias_step = 1;
        for (int64_t q = 0; q < pixels_; ++q) {
          r.x = img + q * channels_;
          r.y = y + n * pixels_ * channels_ + c0 + q * channels_;
          simd_.norm_row(r);
        }
      }
    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  bool nhwc_;
  int64_t batch_, channels_, pixels_;
  std::vector<double> mean_, inv_, scale_, bias_;
};

// Layer normalization over trailing axes in order: groups of `len` consecutive elements, with
// scale and bias laid out like one group.
class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(const SimdKernels& simd, int64_t groups, int64_t len)
      : simd_(simd), groups_(groups), len_(len) {
    scale_.resize(len);
    bias_.resize(len);
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<LayerNormalizationParams>();
    const double eps = float32_epsilon(p.epsilon);
    read_scale_bias(ctx, p.scale, p.bias, scale_, bias_);
    const float* x = ctx.in(p.input).as<float>();
    float* y = ctx.out().as<float>();
    const double count = static_cast<double>(len_);
    parallel_chunks(ctx.pool(), groups_, std::max<int64_t>(1, 8192 / len_),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t g = begin; g < end; ++g) {
                        const float* src = x + g * len_;
                        const double mean = simd_.sum_row_d(src, len_) / count;
                        const double var = simd_.sum_sq_dev_d(src, len_, mean) / count;
                        const double inv = 1.0 / std::sqrt(var + eps);
                        NormRowArgs r;
                        r.x = src;
                        r.y = y + g * len_;
                        r.n = len_;
                        r.mean = &mean;
                        r.inv = &inv;
                        r.scale = scale_.data();
                        r.bias = bias_.data();
                        r.scale_step = r.bias_step = 1;
                        simd_.norm_row(r);
                      }
                    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  int64_t groups_, len_;
  std::vector<double> scale_, bias_;
};

}  // namespace

std::unique_ptr<Kernel> make_normalization_kernel(const Node& node, const CompileContext& cc,
                                                  const SimdKernels& simd) {
  switch (node.kind) {
    case OpKind::kBatchNormalization: {
      const auto& p = node.as<BatchNormalizationParams>();
      const TensorView& x = cc.view(p.input);
      if (!float_operands(cc, {p.input, p.mean, p.variance, p.scale, p.bias})) return nullptr;
      if (x.count == 0 || p.axis < 0 || static_cast<size_t>(p.axis) >= x.rank()) return nullptr;
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < p.axis; ++i) outer *= x.shape[i];
      for (size_t i = p.axis + 1; i < x.rank(); ++i) inner *= x.shape[i];
      return std::make_unique<BatchNormKernel>(simd, outer, x.shape[p.axis], inner);
    }
    case OpKind::kInstanceNormalization: {
      const auto& p = node.as<InstanceNormalizationParams>();
      const TensorView& x = cc.view(p.input);
      if (!float_operands(cc, {p.input, p.scale, p.bias})) return nullptr;
      if (x.rank() != 4 || x.count == 0) return nullptr;
      const bool nhwc = p.layout == "nhwc";
      if (!nhwc && p.layout != "nchw") return nullptr;
      const int64_t c = nhwc ? x.shape[3] : x.shape[1];
      const int64_t pixels = nhwc ? x.shape[1] * x.shape[2] : x.shape[2] * x.shape[3];
      return std::make_unique<InstanceNormKernel>(simd, nhwc, x.shape[0], c, pixels);
    }
    case OpKind::kLayerNormalization: {
      const auto& p = node.as<LayerNormalizationParams>();
      const TensorView& x = cc.view(p.input);
      if (!float_operands(cc, {p.input, p.scale, p.bias}) || x.count == 0) return nullptr;
      std::vector<int64_t> axes;
      if (p.axes) {
        axes = *p.axes;
      } else {
        for (size_t i = 1; i < x.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
      }
      if (axes.empty()) return nullptr;
      // Only trailing axes in increasing order: then a group is contiguous.
      const int64_t first = static_cast<int64_t>(x.rank()) - static_cast<int64_t>(axes.size());
      int64_t len = 1;
      for (size_t k = 0; k < axes.size(); ++k) {
        if (axes[k] != first + static_cast<int64_t>(k)) return nullptr;
        len *= x.shape[axes[k]];
      }
      return std::make_unique<LayerNormKernel>(simd, static_cast<int64_t>(x.count) / len, len);
    }
    default:
      return nullptr;
  }
}

}  // namespace webnn
