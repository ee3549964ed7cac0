// quantizeLinear / dequantizeLinear with one scale and zero point for the whole tensor (what QDQ
// models put around every op the int8 kernels do not take), bit-identical to the reference
// kernels (reference/quantization.cc):
//  - dequantize: the reference rounds (q - zp) * s, formed in double, to float once; that
//    product of a 9-bit integer and a float32 is exact in double, so float(q - zp) * s in
//    float32 (one correctly rounded product) is the same value;
//  - quantize: nearbyint(x / s) + zp, clamped, NaN to 0; with s == 1 the division is exact and
//    the rounding runs in float32, otherwise in double like the reference.

// Other forms (per-axis or blockwise parameters, 4-bit and 32-bit types) use the reference.
#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/qgemm.h"

namespace webnn {

namespace {

// Elements per task: these are a few cycles each, so a task must be long to pay for a wake-up.
constexpr int64_t kGrain = 65536;

bool byte_type(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

int32_t byte_value(const uint8_t* p, bool is_signed) {
  return is_signed ? int32_t{static_cast<int8_t>(*p)} : int32_t{*p};
}

class DequantizeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<QuantizeParams>();
    const TensorView& x = ctx.in(p.input);
    const bool is_signed = x.data_type == DataType::kInt8;
    const float s = ctx.in(p.scale).as<float>()[0];
    const float zp = p.zero_point.present()
                         ? static_cast<float>(byte_value(ctx.in(p.zero_point).data, is_signed))
                         : 0.0f;
    const uint8_t* in = x.data;
    float* out = ctx.out().as<float>();
    const int64_t n = static_cast<int64_t>(x.count);
    parallel_chunks(ctx.pool(), n, kGrain, [&](int64_t b, int64_t e) {
      if (is_signed) {
        const int8_t* q = reinterpret_cast<const int8_t*>(in);
        for (int64_t i = b; i < e; ++i) out[i] = (static_cast<float>(q[i]) - zp) * s;
      } else {
        for (int64_t i = b; i < e; ++i) out[i] = (static_cast<float>(in[i]) - zp) * s;
      }
    });
    return Status::ok();
  }
};

class QuantizeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<QuantizeParams>();
    TensorView& y = ctx.out();
    const bool is_signed = y.data_type == DataType::kInt8;
    const float s = ctx.in(p.scale).as<float>()[0];
    const int32_t zp =
        p.zero_point.present() ? byte_value(ctx.in(p.zero_point).data, is_signed) : 0;
    const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
    const float* in = ctx.in(p.input).as<float>();
    uint8_t* out = y.data;
    const int64_t n = static_cast<int64_t>(y.count);
    parallel_chunks(ctx.pool(), n, kGrain, [&](int64_t b, int64_t e) {
      // Clamped to the integer bounds, then rounded: the same as rounding first (rounding is
      // monotone), and the rounding then only meets |v| <= 511 (no libm call needed).
      const float flo = lo - static_cast<float>(zp), fhi = hi - static_cast<float>(zp);
      if (s == 1.0f) {
        qquantize()(in + b, e - b, zp, is_signed, out + b);
        return;
      }
      for (int64_t i = b; i < e; ++i) {
        // x / s is NaN for a NaN x, and for 0 / 0 or a NaN scale: quantized to 0.
        const double q = s == 1.0f ? double{in[i]} : static_cast<double>(in[i]) / s;
        if (std::isnan(q)) {
          out[i] = 0;
          continue;
        }
        float r;
        if (s == 1.0f) {
          r = round_half_even_small(std::clamp(in[i], flo, fhi));
        } else {
          constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
          const double v = std::clamp(q, double{flo}, double{fhi});
          r = static_cast<float>((v + kMagic) - kMagic);
        }
        out[i] = static_cast<uint8_t>(static_cast<int32_t>(r) + zp);
      }
    });
    return Status::ok();
  }
};

// quantizeLinear (scale s) then dequantizeLinear (scale d, the same zero point) in one pass
// (graph/passes/fake_quantize.cc): per element, r = round_half_even(clamp(x / s, lo - zp,
// hi - zp)) with the division in double, as QuantizeKernel and the reference compute the
// quantized value q = r + zp; then (float(q) - zp) * d, which is float(r) * d since both are
// small integers exact in float32 (and the reference's double product of them rounds to
// the same float32). NaN quantizes to 0, so its result is (0 - zp) * d. Scales and zero
// point hold one value, or one per element of a block of axes followed by `inner_` elements.
class FakeQuantizeKernel final : public Kernel {
 public:
  FakeQuantizeKernel(bool is_signed, int64_t inner, std::vector<float> dequantize_scale)
      : is_signed_(is_signed), inner_(inner), d_(std::move(dequantize_scale)) {}

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<QuantizeParams>();
    const TensorView& sv = ctx.in(p.scale);
    const float* s = sv.as<float>();
    const int64_t channels = static_cast<int64_t>(sv.count);
    const uint8_t* zp = p.zero_point.present() ? ctx.in(p.zero_point).data : nullptr;
    const float* in = ctx.in(p.input).as<float>();
    float* out = ctx.out().as<float>();
    const int64_t n = static_cast<int64_t>(ctx.out().count);
    const float lo = is_signed_ ? -128.0f : 0.0f, hi = is_signed_ ? 127.0f : 255.0f;
    parallel_chunks(ctx.pool(), n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e;) {
        // A run of elements sharing one scale and zero point.
        const int64_t c = channels == 1 ? 0 : (i / inner_) % channels;
        const int64_t run_end = channels == 1 ? e : std::min(e, (i / inner_ + 1) * inner_);
        const float sc = s[c], dc = d_[c];
        const float z = zp ? static_cast<float>(byte_value(zp + c, is_signed_)) : 0.0f;
        const double flo = lo - z, fhi = hi - z;
        const float nan_out = (0.0f - z) * dc;
        if (sc == 1.0f) {
          // x / 1 is exact: clamp and round in float32 (what QuantizeKernel's scale-1 path
          // computes) on the SIMD kernel. ONNX's QuantizeLinear imports this way.
          qfake_quantize()(in + i, run_end - i, lo - z, hi - z, dc, nan_out, out + i);
          i = run_end;
          continue;
        }
        for (; i < run_end; ++i) {
          const double q = static_cast<double>(in[i]) / sc;
          if (std::isnan(q)) {
            out[i] = nan_out;
            continue;
          }
          constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
          const double r = (std::clamp(q, flo, fhi) + kMagic) - kMagic;
          out[i] = static_cast<float>(static_cast<int32_t>(r)) * dc;
        }
      }
    });
    return Status::ok();
  }

 private:
  bool is_signed_;
  int64_t inner_;
  std::vector<float> d_;
};

}  // namespace

std::unique_ptr<Kernel> make_fake_quantize_kernel(const Node& node, const CompileContext& cc) {
  const auto& p = node.as<QuantizeParams>();
  const TensorView& x = cc.view(p.input);
  const TensorView& s = cc.view(p.scale);
  if (x.data_type != DataType::kFloat32 || s.data_type != DataType::kFloat32) return nullptr;
  // The elements after the scale's last axis of size > 1 share one value (graph pass: the
  // scale's axes of size > 1 form one block of the value's).
  int64_t inner = 1;
  if (s.count > 1) {
    if (s.shape.size() != x.shape.size()) return nullptr;
    size_t last = 0;
    for (size_t a = 0; a < s.shape.size(); ++a) {
      if (s.shape[a] != 1) last = a;
    }
    for (size_t a = last + 1; a < x.shape.size(); ++a) inner *= x.shape[a];
  }
  const Node::Quantized& form = *node.quantized;
  if (form.multiplier.size() != s.count) return nullptr;
  return std::make_unique<FakeQuantizeKernel>(form.requant_signed, inner, form.multiplier);
}

std::unique_ptr<Kernel> make_quantize_linear_kernel(const Node& node, const CompileContext& cc) {
  const auto& p = node.as<QuantizeParams>();
  const TensorView& x = cc.view(p.input);
  const TensorView& s = cc.view(p.scale);
  const TensorView& y = cc.view(OperandRef{node.outputs[0]});
  if (s.count != 1 || s.data_type != DataType::kFloat32) return nullptr;
  if (p.zero_point.present() && cc.view(p.zero_point).count != 1) return nullptr;
  if (node.kind == OpKind::kDequantizeLinear) {
    if (!byte_type(x.data_type) || y.data_type != DataType::kFloat32) return nullptr;
    return std::make_unique<DequantizeKernel>();
  }
  if (x.data_type != DataType::kFloat32 || !byte_type(y.data_type)) return nullptr;
  return std::make_unique<QuantizeKernel>();
}

}  // namespace webnn
