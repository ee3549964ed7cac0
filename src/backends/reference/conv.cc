// Reference kernels: conv2d, convTranspose2d (spec/ops.md 3.9). Each output element is a
// direct sum in double, rounded once; layouts are handled by per-letter strides so that no
// data is transposed.
#include <string>

#include "backends/reference/kernels.h"
#include "core/layout.h"

namespace webnn {

namespace {

struct ConvGeometry {
  int64_t stride[2] = {1, 1};
  int64_t dilation[2] = {1, 1};
  int64_t pad_begin[2] = {0, 0};
};

ConvGeometry geometry(const OptIntList& strides, const OptIntList& dilations,
                      const OptIntList& padding) {
  ConvGeometry g;
  for (int i = 0; i < 2; ++i) {
    if (strides) g.stride[i] = (*strides)[i];
    if (dilations) g.dilation[i] = (*dilations)[i];
    if (padding) g.pad_begin[i] = (*padding)[2 * i];
  }
  return g;
}

// The output tensor's axes: batch, channels, height, width.
LayoutStrides output_layout(const TensorView& out, const std::string& input_layout) {
  return LayoutStrides(input_layout, out.shape);
}

template <class T>
double bias_at(const TensorView* bias, int64_t oc) {
  return bias ? to_double(bias->as<T>()[oc]) : 0.0;
}

Status run_conv2d(KernelContext& ctx) {
  const auto& p = ctx.params<Conv2dParams>();
  const TensorView& x = ctx.in(p.input);
  const TensorView& w = ctx.in(p.filter);
  const TensorView* bias = p.bias.present() ? &ctx.in(p.bias) : nullptr;
  TensorView& out = ctx.out();
  const LayoutStrides in(p.input_layout, x.shape), f(p.filter_layout, w.shape);
  const LayoutStrides o = output_layout(out, p.input_layout);
  const ConvGeometry g = geometry(p.strides, p.dilations, p.padding);
  const int64_t batch = o.size('n'), out_c = o.size('c'), out_h = o.size('h'), out_w = o.size('w');
  const int64_t in_h = in.size('h'), in_w = in.size('w');
  const int64_t group_in = f.size('i'), group_out = out_c / p.groups;
  const int64_t k_h = f.size('h'), k_w = f.size('w');
  dispatch_float(out.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.as<T>();
    const T* pw = w.as<T>();
    T* po = out.as<T>();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t oc = 0; oc < out_c; ++oc) {
        const int64_t first_ic = (oc / group_out) * group_in;
        for (int64_t oh = 0; oh < out_h; ++oh) {
          for (int64_t ow = 0; ow < out_w; ++ow) {
            double acc = bias_at<T>(bias, oc);
            for (int64_t ic = 0; ic < group_in; ++ic) {
              for (int64_t kh = 0; kh < k_h; ++kh) {
                const int64_t ih = oh * g.stride[0] - g.pad_begin[0] + kh * g.dilation[0];
                if (ih < 0 || ih >= in_h) continue;
                for (int64_t kw = 0; kw < k_w; ++kw) {
                  const int64_t iw = ow * g.stride[1] - g.pad_begin[1] + kw * g.dilation[1];
                  if (iw < 0 || iw >= in_w) continue;
                  const int64_t xi = n * in.stride('n') + (first_ic + ic) * in.stride('c') +
                                     ih * in.stride('h') + iw * in.stride('w');
                  const int64_t wi = oc * f.stride('o') + ic * f.stride('i') + kh * f.stride('h') +
                                     kw * f.stride('w');
                  acc += to_double(px[xi]) * to_double(pw[wi]);
                }
              }
            }
            po[n * o.stride('n') + oc * o.stride('c') + oh * o.stride('h') + ow * o.stride('w')] =
                static_cast<T>(acc);
          }
        }
      }
    }
  });
  return Status::ok();
}

// Gathers, for each output element, the input elements whose scattered filter taps land on
// it: out[oh] += x[ih] * w[kh] where oh + pad = ih * stride + kh * dilation.
Status run_conv_transpose2d(KernelContext& ctx) {
  const auto& p = ctx.params<ConvTranspose2dParams>();
  const TensorView& x = ctx.in(p.input);
  const TensorView& w = ctx.in(p.filter);
  const TensorView* bias = p.bias.present() ? &ctx.in(p.bias) : nullptr;
  TensorView& out = ctx.out();
  const LayoutStrides in(p.input_layout, x.shape), f(p.filter_layout, w.shape);
  const LayoutStrides o = output_layout(out, p.input_layout);
  const ConvGeometry g = geometry(p.strides, p.dilations, p.padding);
  const int64_t batch = o.size('n'), out_c = o.size('c'), out_h = o.size('h'), out_w = o.size('w');
  const int64_t in_h = in.size('h'), in_w = in.size('w');
  const int64_t group_in = in.size('c') / p.groups, group_out = f.size('o');
  const int64_t k_h = f.size('h'), k_w = f.size('w');
  dispatch_float(out.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.as<T>();
    const T* pw = w.as<T>();
    T* po = out.as<T>();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t oc = 0; oc < out_c; ++oc) {
        const int64_t group = oc / group_out, filter_oc = oc % group_out;
        for (int64_t oh = 0; oh < out_h; ++oh) {
          for (int64_t ow = 0; ow < out_w; ++ow) {
            double acc = bias_at<T>(bias, oc);
            for (int64_t kh = 0; kh < k_h; ++kh) {
              const int64_t th = oh + g.pad_begin[0] - kh * g.dilation[0];
              if (th < 0 || th % g.stride[0] != 0 || th / g.stride[0] >= in_h) continue;
              const int64_t ih = th / g.stride[0];
              for (int64_t kw = 0; kw < k_w; ++kw) {
                const int64_t tw = ow + g.pad_begin[1] - kw * g.dilation[1];
                if (tw < 0 || tw % g.stride[1] != 0 || tw / g.stride[1] >= in_w) continue;
                const int64_t iw = tw / g.stride[1];
                for (int64_t ic = group * group_in; ic < (group + 1) * group_in; ++ic) {
                  const int64_t xi = n * in.stride('n') + ic * in.stride('c') +
                                     ih * in.stride('h') + iw * in.stride('w');
                  const int64_t wi = ic * f.stride('i') + filter_oc * f.stride('o') +
                                     kh * f.stride('h') + kw * f.stride('w');
                  acc += to_double(px[xi]) * to_double(pw[wi]);
                }
              }
            }
            po[n * o.stride('n') + oc * o.stride('c') + oh * o.stride('h') + ow * o.stride('w')] =
                static_cast<T>(acc);
          }
        }
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_reference_conv(KernelTable& t) {
  t[static_cast<int>(OpKind::kConv2d)] = run_conv2d;
  t[static_cast<int>(OpKind::kConvTranspose2d)] = run_conv_transpose2d;
}

}  // namespace webnn
