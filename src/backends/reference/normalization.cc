// Reference kernels for the normalization family (spec/ops.md §3.10). Statistics and the
// affine transform run in double; each output element is rounded once.
#include <algorithm>
#include <vector>

#include "backends/reference/kernels.h"

namespace webnn {

namespace {

// Optional rank-1 parameter read as double, or `fallback` when the operand is absent.
template <class T>
double param_at(const KernelContext& ctx, OperandRef r, int64_t i, double fallback) {
  return r.present() ? to_double(ctx.in(r).as<T>()[i]) : fallback;
}

// Epsilon is cast to the input type before use (ops.md §1.4 coefficient casting).
template <class T>
double epsilon_in(double epsilon) {
  return to_double(static_cast<T>(epsilon));
}

Status run_batch_normalization(KernelContext& ctx) {
  const auto& p = ctx.params<BatchNormalizationParams>();
  const TensorView& x = ctx.in(p.input);
  const int64_t channels = x.shape[p.axis];
  int64_t inner = 1;
  for (size_t i = p.axis + 1; i < x.rank(); ++i) inner *= x.shape[i];
  dispatch_float(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    T* out = ctx.out().as<T>();
    const double eps = epsilon_in<T>(p.epsilon);
    std::vector<double> mean(channels), mul(channels), bias(channels);
    for (int64_t c = 0; c < channels; ++c) {
      mean[c] = to_double(ctx.in(p.mean).as<T>()[c]);
      double var = to_double(ctx.in(p.variance).as<T>()[c]);
      mul[c] = param_at<T>(ctx, p.scale, c, 1.0) / std::sqrt(var + eps);
      bias[c] = param_at<T>(ctx, p.bias, c, 0.0);
    }
    for (uint64_t i = 0; i < x.count; ++i) {
      int64_t c = (static_cast<int64_t>(i) / inner) % channels;
      out[i] = static_cast<T>((to_double(in[i]) - mean[c]) * mul[c] + bias[c]);
    }
  });
  return Status::ok();
}

// Normalizes the group of elements at base + offsets[k] into `out`:
// (x - mean) / sqrt(var + eps) * scale[k] + bias[k], with the population variance.
template <class T>
void normalize_group(const T* in, T* out, int64_t base, const std::vector<int64_t>& offsets,
                     double eps, const std::vector<double>& scale,
                     const std::vector<double>& bias) {
  const size_t n = offsets.size();
  double mean = 0;
  for (int64_t off : offsets) mean += to_double(in[base + off]);
  mean /= static_cast<double>(n);
  double var = 0;
  for (int64_t off : offsets) {
    double d = to_double(in[base + off]) - mean;
    var += d * d;
  }
  var /= static_cast<double>(n);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (size_t k = 0; k < n; ++k) {
    double v = (to_double(in[base + offsets[k]]) - mean) * inv;
    out[base + offsets[k]] = static_cast<T>(v * scale[k] + bias[k]);
  }
}

Status run_instance_normalization(KernelContext& ctx) {
  const auto& p = ctx.params<InstanceNormalizationParams>();
  const TensorView& x = ctx.in(p.input);
  const bool nhwc = p.layout == "nhwc";
  const int64_t n = x.shape[0];
  const int64_t c = nhwc ? x.shape[3] : x.shape[1];
  const int64_t h = nhwc ? x.shape[1] : x.shape[2];
  const int64_t w = nhwc ? x.shape[2] : x.shape[3];
  // Offsets of the spatial positions of one (n, c) plane relative to its first element.
  std::vector<int64_t> offsets(h * w);
  for (int64_t s = 0; s < h * w; ++s) offsets[s] = nhwc ? s * c : s;
  dispatch_float(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    T* out = ctx.out().as<T>();
    const double eps = epsilon_in<T>(p.epsilon);
    std::vector<double> scale(h * w), bias(h * w);
    for (int64_t ci = 0; ci < c; ++ci) {
      std::fill(scale.begin(), scale.end(), param_at<T>(ctx, p.scale, ci, 1.0));
      std::fill(bias.begin(), bias.end(), param_at<T>(ctx, p.bias, ci, 0.0));
      for (int64_t ni = 0; ni < n; ++ni) {
        int64_t base = nhwc ? ni * h * w * c + ci : (ni * c + ci) * h * w;
        normalize_group(in, out, base, offsets, eps, scale, bias);
      }
    }
  });
  return Status::ok();
}

Status run_layer_normalization(KernelContext& ctx) {
  const auto& p = ctx.params<LayerNormalizationParams>();
  const TensorView& x = ctx.in(p.input);
  std::vector<int64_t> axes;
  if (p.axes) {
    axes = *p.axes;
  } else {
    for (size_t i = 1; i < x.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  const std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<bool> normalized(x.rank(), false);
  // Inner positions follow the order of `axes`, which is also the row-major layout of
  // scale/bias (their shape is the input's dims at `axes`, in that order).
  std::vector<int64_t> inner_shape, inner_strides;
  for (int64_t a : axes) {
    normalized[a] = true;
    inner_shape.push_back(x.shape[a]);
    inner_strides.push_back(strides[a]);
  }
  std::vector<int64_t> outer_shape, outer_strides;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!normalized[i]) {
      outer_shape.push_back(x.shape[i]);
      outer_strides.push_back(strides[i]);
    }
  }
  std::vector<int64_t> offsets;
  for_each_index(inner_shape, [&](int64_t, const std::vector<int64_t>& idx) {
    offsets.push_back(dot_index(idx, inner_strides));
  });
  dispatch_float(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    T* out = ctx.out().as<T>();
    const double eps = epsilon_in<T>(p.epsilon);
    std::vector<double> scale(offsets.size()), bias(offsets.size());
    for (size_t k = 0; k < offsets.size(); ++k) {
      scale[k] = param_at<T>(ctx, p.scale, static_cast<int64_t>(k), 1.0);
      bias[k] = param_at<T>(ctx, p.bias, static_cast<int64_t>(k), 0.0);
    }
    for_each_index(outer_shape, [&](int64_t, const std::vector<int64_t>& idx) {
      normalize_group(in, out, dot_index(idx, outer_strides), offsets, eps, scale, bias);
    });
  });
  return Status::ok();
}

}  // namespace

void register_reference_normalization(KernelTable& t) {
  t[static_cast<int>(OpKind::kBatchNormalization)] = run_batch_normalization;
  t[static_cast<int>(OpKind::kInstanceNormalization)] = run_instance_normalization;
  t[static_cast<int>(OpKind::kLayerNormalization)] = run_layer_normalization;
}

}  // namespace webnn
