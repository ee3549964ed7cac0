// Reference kernels for quantizeLinear and dequantizeLinear (spec/ops.md §3.11).
#include <algorithm>
#include <limits>
#include <vector>

#include "backends/reference/kernels.h"

namespace webnn {

namespace {

// For every element of the input, the flat index of the scale/zero point element whose block
// covers it (ops.md §1.4 blockwise broadcast; a parameter dimension of 1 covers the whole axis).
std::vector<int64_t> block_indices(const std::vector<int64_t>& in,
                                   const std::vector<int64_t>& param) {
  std::vector<int64_t> block(in.size()), strides = strides_of(param);
  for (size_t i = 0; i < in.size(); ++i) block[i] = in[i] / param[i];
  std::vector<int64_t> out;
  for_each_index(in, [&](int64_t, const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) off += idx[i] / block[i] * strides[i];
    out.push_back(off);
  });
  return out;
}

// Value range of a quantized type (4-bit types are held unpacked in int8/uint8).
void quantized_range(DataType t, double& lo, double& hi) {
  switch (t) {
    case DataType::kInt4:
      lo = -8, hi = 7;
      return;
    case DataType::kUint4:
      lo = 0, hi = 15;
      return;
    default:
      dispatch_type(t, [&](auto tag) {
        using Q = decltype(tag);
        lo = static_cast<double>(std::numeric_limits<Q>::lowest());
        hi = static_cast<double>(std::numeric_limits<Q>::max());
      });
  }
}

Status run_quantize(KernelContext& ctx) {
  const auto& p = ctx.params<QuantizeParams>();
  const TensorView& x = ctx.in(p.input);
  const TensorView& scale = ctx.in(p.scale);
  TensorView& out = ctx.out();
  const std::vector<int64_t> at = block_indices(x.shape, scale.shape);
  double lo, hi;
  quantized_range(out.data_type, lo, hi);
  dispatch_float(x.data_type, [&](auto ftag) {
    using F = decltype(ftag);
    dispatch_type(out.data_type, [&](auto qtag) {
      using Q = decltype(qtag);
      if constexpr (!kIsFloat<Q>) {
        const F* in = x.as<F>();
        const F* s = scale.as<F>();
        const Q* zp = p.zero_point.present() ? ctx.in(p.zero_point).as<Q>() : nullptr;
        Q* o = out.as<Q>();
        for (uint64_t i = 0; i < x.count; ++i) {
          // nearbyint rounds half to even in the default rounding mode.
          double v = std::nearbyint(to_double(in[i]) / to_double(s[at[i]]));
          if (zp) v += to_double(zp[at[i]]);
          // NaN quantizes to 0, like saturate_cast.
          o[i] = std::isnan(v) ? Q(0) : static_cast<Q>(std::clamp(v, lo, hi));
        }
      }
    });
  });
  return Status::ok();
}

Status run_dequantize(KernelContext& ctx) {
  const auto& p = ctx.params<QuantizeParams>();
  const TensorView& x = ctx.in(p.input);
  const TensorView& scale = ctx.in(p.scale);
  TensorView& out = ctx.out();
  const std::vector<int64_t> at = block_indices(x.shape, scale.shape);
  dispatch_float(scale.data_type, [&](auto ftag) {
    using F = decltype(ftag);
    dispatch_type(x.data_type, [&](auto qtag) {
      using Q = decltype(qtag);
      if constexpr (!kIsFloat<Q>) {
        const Q* in = x.as<Q>();
        const F* s = scale.as<F>();
        const Q* zp = p.zero_point.present() ? ctx.in(p.zero_point).as<Q>() : nullptr;
        F* o = out.as<F>();
        for (uint64_t i = 0; i < x.count; ++i) {
          // Integer values up to 32 bits and their difference are exact in double.
          double q = to_double(in[i]) - (zp ? to_double(zp[at[i]]) : 0.0);
          o[i] = static_cast<F>(q * to_double(s[at[i]]));
        }
      }
    });
  });
  return Status::ok();
}

}  // namespace

void register_reference_quantization(KernelTable& t) {
  t[static_cast<int>(OpKind::kQuantizeLinear)] = run_quantize;
  t[static_cast<int>(OpKind::kDequantizeLinear)] = run_dequantize;
}

}  // namespace webnn
