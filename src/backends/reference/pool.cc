// Reference kernels for pooling and resampling (spec/ops.md 3.9, §4 global pools).
#include <algorithm>
#include <limits>

#include "backends/reference/kernels.h"

namespace webnn {

namespace {

// Element offsets of a rank-4 tensor addressed as (n, c, h, w) whatever its layout.
struct Nchw {
  int64_t n, c, h, w;      // sizes
  int64_t sn, sc, sh, sw;  // strides
  int64_t at(int64_t in, int64_t ic, int64_t ih, int64_t iw) const {
    return in * sn + ic * sc + ih * sh + iw * sw;
  }
};

Nchw nchw_view(const std::vector<int64_t>& shape, bool nhwc) {
  std::vector<int64_t> s = strides_of(shape);
  if (nhwc) return {shape[0], shape[3], shape[1], shape[2], s[0], s[3], s[1], s[2]};
  return {shape[0], shape[1], shape[2], shape[3], s[0], s[1], s[2], s[3]};
}

enum class PoolKind { kAverage, kL2, kMax };

struct PoolWindow {
  int64_t window[2], stride[2], dilation[2], pad_begin[2];
};

// The input row (column) of output position `o` and window tap `k`, or -1 outside [0, size).
// Strides, dilations and pads come from the graph and may be near INT64_MAX: computed in 128
// bits, where the products and the sum cannot overflow.
int64_t input_index(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t dilation,
                    int64_t size) {
  __int128 i = static_cast<__int128>(o) * stride - pad + static_cast<__int128>(k) * dilation;
  return i >= 0 && i < size ? static_cast<int64_t>(i) : -1;
}

// The output shape already fixes the rounding (floor, ceil or output_sizes); the kernel only
// needs where each window starts.
template <class T>
void pool(PoolKind kind, const TensorView& x, TensorView& y, bool nhwc, const PoolWindow& g) {
  Nchw in = nchw_view(x.shape, nhwc);
  Nchw out = nchw_view(y.shape, nhwc);
  const T* src = x.as<T>();
  T* dst = y.as<T>();
  for (int64_t n = 0; n < out.n; ++n) {
    for (int64_t c = 0; c < out.c; ++c) {
      for (int64_t oh = 0; oh < out.h; ++oh) {
        for (int64_t ow = 0; ow < out.w; ++ow) {
          double sum = 0;
          int64_t count = 0;
          T best = std::numeric_limits<T>::lowest();
          if constexpr (kIsFloat<T>) best = static_cast<T>(-INFINITY);
          bool nan = false;
          for (int64_t kh = 0; kh < g.window[0]; ++kh) {
            int64_t ih = input_index(oh, g.stride[0], g.pad_begin[0], kh, g.dilation[0], in.h);
            if (ih < 0) continue;
            for (int64_t kw = 0; kw < g.window[1]; ++kw) {
              int64_t iw = input_index(ow, g.stride[1], g.pad_begin[1], kw, g.dilation[1], in.w);
              if (iw < 0) continue;
              T v = src[in.at(n, c, ih, iw)];
              ++count;
              if (kind == PoolKind::kMax) {
                if constexpr (kIsFloat<T>) nan = nan || v != v;
                if (v > best) best = v;
              } else {
                double d = to_double(v);
                sum += kind == PoolKind::kL2 ? d * d : d;
              }
            }
          }
          T result = best;
          if constexpr (kIsFloat<T>) {
            if (kind == PoolKind::kMax) {
              result = nan ? static_cast<T>(NAN) : best;
            } else if (kind == PoolKind::kL2) {
              result = static_cast<T>(std::sqrt(sum));
            } else {
              // Padding is excluded from the divisor; a window entirely in the padding has no
              // mean.
              result = static_cast<T>(count ? sum / static_cast<double>(count) : NAN);
            }
          }
          dst[out.at(n, c, oh, ow)] = result;
        }
      }
    }
  }
}

PoolKind pool_kind(OpKind k) {
  switch (k) {
    case OpKind::kAveragePool2d:
    case OpKind::kGlobalAveragePool:
      return PoolKind::kAverage;
    case OpKind::kL2Pool2d:
      return PoolKind::kL2;
    default:
      return PoolKind::kMax;
  }
}

Status run_pool(PoolKind kind, const TensorView& x, TensorView& y, bool nhwc, const PoolWindow& g) {
  if (kind == PoolKind::kMax) {
    dispatch_type(x.data_type, [&](auto tag) { pool<decltype(tag)>(kind, x, y, nhwc, g); });
  } else {
    dispatch_float(x.data_type, [&](auto tag) { pool<decltype(tag)>(kind, x, y, nhwc, g); });
  }
  return Status::ok();
}

Status run_pool2d(KernelContext& ctx) {
  const auto& p = ctx.params<Pool2dParams>();
  const TensorView& x = ctx.in(p.input);
  bool nhwc = p.layout == "nhwc";
  Nchw in = nchw_view(x.shape, nhwc);
  PoolWindow g{};
  const IntList window = p.window_dimensions.value_or(IntList{in.h, in.w});
  const IntList strides = p.strides.value_or(IntList{1, 1});
  const IntList dilations = p.dilations.value_or(IntList{1, 1});
  const IntList padding = p.padding.value_or(IntList{0, 0, 0, 0});
  for (int i = 0; i < 2; ++i) {
    g.window[i] = window[i];
    g.stride[i] = strides[i];
    g.dilation[i] = dilations[i];
    g.pad_begin[i] = padding[2 * i];
  }
  return run_pool(pool_kind(ctx.node().kind), x, ctx.out(), nhwc, g);
}

Status run_global_pool(KernelContext& ctx) {
  const auto& p = ctx.params<GlobalPoolParams>();
  const TensorView& x = ctx.in(p.input);
  bool nhwc = p.layout == "nhwc";
  Nchw in = nchw_view(x.shape, nhwc);
  PoolWindow g{{in.h, in.w}, {1, 1}, {1, 1}, {0, 0}};
  return run_pool(pool_kind(ctx.node().kind), x, ctx.out(), nhwc, g);
}

// The spec's sampling coordinate of output index `o` along one axis, computed as written
// (in double): scale = outputSize / inputSize, then
// clamp((o + 0.5) / scale - 0.5, 0, inputSize - 1).
double source_coordinate(int64_t o, int64_t in_size, int64_t out_size) {
  const double scale = static_cast<double>(out_size) / static_cast<double>(in_size);
  const double c = (static_cast<double>(o) + 0.5) / scale - 0.5;
  return std::clamp(c, 0.0, static_cast<double>(in_size - 1));
}

// Nearest-neighbor index, ceil(coordinate - 0.5): a coordinate halfway between two input
// samples picks the lower one (e.g. halving [a, b, c, d] gives [a, c]).
int64_t nearest_index(int64_t o, int64_t in_size, int64_t out_size) {
  return static_cast<int64_t>(std::ceil(source_coordinate(o, in_size, out_size) - 0.5));
}

template <class T>
T round_to(double v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(v);
  } else {
    return saturate_cast<T>(std::round(v));
  }
}

template <class T>
void resample(const TensorView& x, TensorView& y, int64_t a0, int64_t a1, bool linear) {
  const std::vector<int64_t>& ishape = x.shape;
  const std::vector<int64_t>& oshape = y.shape;
  std::vector<int64_t> istrides = strides_of(ishape);
  const T* src = x.as<T>();
  T* dst = y.as<T>();
  const int64_t in0 = ishape[a0], in1 = ishape[a1], out0 = oshape[a0], out1 = oshape[a1];
  std::vector<int64_t> idx(4);
  for_each_index(oshape, [&](int64_t flat, const std::vector<int64_t>& o) {
    idx = o;
    if (!linear) {
      idx[a0] = nearest_index(o[a0], in0, out0);
      idx[a1] = nearest_index(o[a1], in1, out1);
      dst[flat] = src[dot_index(idx, istrides)];
      return;
    }
    double s0 = source_coordinate(o[a0], in0, out0);
    double s1 = source_coordinate(o[a1], in1, out1);
    // x0 = floor(c), x1 = ceil(c): an integral coordinate reads one sample only.
    int64_t lo0 = static_cast<int64_t>(std::floor(s0));
    int64_t lo1 = static_cast<int64_t>(std::floor(s1));
    int64_t hi0 = static_cast<int64_t>(std::ceil(s0)), hi1 = static_cast<int64_t>(std::ceil(s1));
    double f0 = s0 - static_cast<double>(lo0), f1 = s1 - static_cast<double>(lo1);
    auto at = [&](int64_t i0, int64_t i1) {
      idx[a0] = i0;
      idx[a1] = i1;
      return to_double(src[dot_index(idx, istrides)]);
    };
    double top = at(lo0, lo1) * (1 - f1) + at(lo0, hi1) * f1;
    double bottom = at(hi0, lo1) * (1 - f1) + at(hi0, hi1) * f1;
    dst[flat] = round_to<T>(top * (1 - f0) + bottom * f0);
  });
}

Status run_resample2d(KernelContext& ctx) {
  const auto& p = ctx.params<Resample2dParams>();
  const TensorView& x = ctx.in(p.input);
  const IntList axes = p.axes.value_or(IntList{2, 3});
  bool linear = p.mode == "linear";
  dispatch_type(x.data_type,
                [&](auto tag) { resample<decltype(tag)>(x, ctx.out(), axes[0], axes[1], linear); });
  return Status::ok();
}

}  // namespace

void register_reference_pool(KernelTable& t) {
  auto set = [&](OpKind k, KernelFn fn) { t[static_cast<int>(k)] = fn; };
  set(OpKind::kAveragePool2d, run_pool2d);
  set(OpKind::kL2Pool2d, run_pool2d);
  set(OpKind::kMaxPool2d, run_pool2d);
  set(OpKind::kGlobalAveragePool, run_global_pool);
  set(OpKind::kGlobalMaxPool, run_global_pool);
  set(OpKind::kResample2d, run_resample2d);
}

}  // namespace webnn
