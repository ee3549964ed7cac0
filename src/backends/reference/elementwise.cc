// Reference kernels: element-wise binary/unary ops, activations, softmax (spec/ops.md 3.1–3.4).
#include <algorithm>
#include <limits>

#include "backends/reference/kernels.h"
#include "backends/reference/reference_backend.h"

namespace webnn {

namespace {

// Applies f(a_value, b_value) -> Out over the broadcast of two views into `out`.
template <class In, class Out, class F>
void broadcast_binary(const TensorView& a, const TensorView& b, TensorView& out, F&& f) {
  auto sa = broadcast_strides(a.shape, out.shape);
  auto sb = broadcast_strides(b.shape, out.shape);
  const In* pa = a.as<In>();
  const In* pb = b.as<In>();
  Out* po = out.as<Out>();
  for_each_index(out.shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    po[flat] = f(pa[dot_index(idx, sa)], pb[dot_index(idx, sb)]);
  });
}

Status run_binary(KernelContext& ctx) {
  const auto& p = ctx.params<BinaryParams>();
  OpKind k = ctx.node().kind;
  const TensorView& a = ctx.in(p.a);
  dispatch_type(a.data_type, [&](auto tag) {
    using T = decltype(tag);
    broadcast_binary<T, T>(a, ctx.in(p.b), ctx.out(), [k](T x, T y) -> T {
      if constexpr (kIsFloat<T>) {
        return static_cast<T>(float_binary(k, to_double(x), to_double(y)));
      } else {
        return int_binary<T>(k, x, y);
      }
    });
  });
  return Status::ok();
}

Status run_predicate(KernelContext& ctx) {
  const auto& p = ctx.params<BinaryParams>();
  OpKind k = ctx.node().kind;
  const TensorView& a = ctx.in(p.a);
  dispatch_type(a.data_type, [&](auto tag) {
    using T = decltype(tag);
    broadcast_binary<T, uint8_t>(a, ctx.in(p.b), ctx.out(), [k](T x, T y) -> uint8_t {
      if constexpr (kIsFloat<T>) {
        return compare<double>(k, to_double(x), to_double(y)) ? 1 : 0;
      } else {
        return compare<T>(k, x, y) ? 1 : 0;
      }
    });
  });
  return Status::ok();
}

Status run_logical_not(KernelContext& ctx) {
  const TensorView& a = ctx.in(ctx.params<LogicalNotParams>().a);
  TensorView& out = ctx.out();
  for (uint64_t i = 0; i < a.count; ++i) out.as<uint8_t>()[i] = a.as<uint8_t>()[i] == 0 ? 1 : 0;
  return Status::ok();
}

Status run_classify(KernelContext& ctx) {
  const TensorView& x = ctx.in(ctx.params<UnaryParams>().input);
  bool nan = ctx.node().kind == OpKind::kIsNaN;
  uint8_t* out = ctx.out().as<uint8_t>();
  dispatch_float(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    for (uint64_t i = 0; i < x.count; ++i) {
      double v = to_double(x.as<T>()[i]);
      out[i] = (nan ? std::isnan(v) : std::isinf(v)) ? 1 : 0;
    }
  });
  return Status::ok();
}

// 1 + erf(z) as erfc(-z): the same function, without the cancellation that made it 0 for
// x below about -8.3 (gelu(-12.75) is -1.9e-36, a normal float32; fuzz finding of the sixth
// session: sign(gelu(x)) was 0 on reference and -1 on cpu).
double erf_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

double float_unary(OpKind k, double x) {
  switch (k) {
    case OpKind::kAbs:
      return std::fabs(x);
    case OpKind::kCeil:
      return std::ceil(x);
    case OpKind::kCos:
      return std::cos(x);
    case OpKind::kErf:
      return std::erf(x);
    case OpKind::kExp:
      return std::exp(x);
    case OpKind::kFloor:
      return std::floor(x);
    case OpKind::kLog:
      return std::log(x);
    case OpKind::kNeg:
      return -x;
    case OpKind::kReciprocal:
      return 1.0 / x;
    case OpKind::kRoundEven:
      return std::nearbyint(x);  // default rounding mode: to nearest, ties to even
    case OpKind::kSin:
      return std::sin(x);
    case OpKind::kSign:
      // 1 if x > 0, -1 if x < 0 and 0 otherwise: NaN gives 0, as in the spec's emulation
      // where(greater(x, 0), 1, where(lesser(x, 0), -1, 0)).
      return (x > 0) - (x < 0);
    case OpKind::kSqrt:
      return std::sqrt(x);
    case OpKind::kTan:
      return std::tan(x);
    case OpKind::kRelu:
      return std::isnan(x) ? x : std::max(0.0, x);
    case OpKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case OpKind::kTanh:
      return std::tanh(x);
    case OpKind::kSoftplus:
      return softplus(x);
    case OpKind::kSoftsign:
      return x / (1.0 + std::fabs(x));
    case OpKind::kGelu:
      return erf_gelu(x);
    default:
      return x;
  }
}

template <class T>
T int_unary(OpKind k, T x) {
  using U = std::make_unsigned_t<T>;
  switch (k) {
    case OpKind::kAbs:
      return x < 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : x;
    case OpKind::kNeg:
      return static_cast<T>(U(0) - static_cast<U>(x));
    case OpKind::kSign:
      return static_cast<T>((x > 0) - (x < 0));
    case OpKind::kRelu:
      return x > 0 ? x : T(0);
    default:
      return x;
  }
}

Status run_unary(KernelContext& ctx) {
  const TensorView& x = ctx.in(ctx.params<UnaryParams>().input);
  TensorView& out = ctx.out();
  OpKind k = ctx.node().kind;
  if (k == OpKind::kIdentity) {
    std::memcpy(out.data, x.data, x.count * element_size(unpacked_type(x.data_type)));
    return Status::ok();
  }
  dispatch_type(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    T* o = out.as<T>();
    for (uint64_t i = 0; i < x.count; ++i) {
      if constexpr (kIsFloat<T>) {
        o[i] = static_cast<T>(float_unary(k, to_double(in[i])));
      } else {
        o[i] = int_unary<T>(k, in[i]);
      }
    }
  });
  return Status::ok();
}

// A double option (alpha, beta, ...) cast to the input data type before use, as the spec's
// method steps do ("set options.alpha to the result of casting it to input's dataType").
template <class T>
double coefficient(double v) {
  return to_double(static_cast<T>(v));
}

// Runs f(x, cast) element-wise, where cast(v) casts a coefficient to the input type.
template <class P, class F>
Status run_parametric(KernelContext& ctx, F&& f) {
  const auto& p = ctx.params<P>();
  const TensorView& x = ctx.in(p.input);
  TensorView& out = ctx.out();
  dispatch_float(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    T* o = out.as<T>();
    const auto cast = [](double v) { return coefficient<T>(v); };
    for (uint64_t i = 0; i < x.count; ++i) o[i] = static_cast<T>(f(p, to_double(in[i]), cast));
  });
  return Status::ok();
}

// min/max that propagate NaN like WebNN's element-wise min/max (float_binary above).
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }

Status run_hard_swish(KernelContext& ctx) {
  // pywebnn compat alpha/beta are not WebNN coefficients: they stay exact so that the
  // defaults (1/6, 0.5) give the spec's x * max(0, min(6, x + 3)) / 6.
  return run_parametric<HardSwishParams>(ctx, [](const HardSwishParams& p, double x, auto) {
    return x * nan_max(0.0, nan_min(1.0, p.alpha * x + p.beta));
  });
}

Status run_elu(KernelContext& ctx) {
  return run_parametric<EluParams>(ctx, [](const EluParams& p, double x, auto cast) {
    return x > 0 ? x : cast(p.alpha) * std::expm1(x);
  });
}

Status run_leaky_relu(KernelContext& ctx) {
  return run_parametric<LeakyReluParams>(ctx, [](const LeakyReluParams& p, double x, auto cast) {
    return x >= 0 ? x : cast(p.alpha) * x;
  });
}

// max(min(alpha * x + beta, 1), 0); NaN propagates as through WebNN's min/max.
Status run_hard_sigmoid(KernelContext& ctx) {
  return run_parametric<HardSigmoidParams>(
      ctx, [](const HardSigmoidParams& p, double x, auto cast) {
        return nan_max(0.0, nan_min(1.0, cast(p.alpha) * x + cast(p.beta)));
      });
}

Status run_linear(KernelContext& ctx) {
  return run_parametric<LinearParams>(ctx, [](const LinearParams& p, double x, auto cast) {
    return cast(p.alpha) * x + cast(p.beta);
  });
}

Status run_prelu(KernelContext& ctx) {
  const auto& p = ctx.params<PreluParams>();
  const TensorView& x = ctx.in(p.input);
  dispatch_type(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    broadcast_binary<T, T>(x, ctx.in(p.slope), ctx.out(), [](T v, T s) -> T {
      if constexpr (kIsFloat<T>) {
        double d = to_double(v);
        return static_cast<T>(d >= 0 ? d : to_double(s) * d);
      } else {
        return v >= 0 ? v : int_binary<T>(OpKind::kMul, s, v);
      }
    });
  });
  return Status::ok();
}

// A clamp bound cast to T with the spec's "cast" algorithm: floats round to nearest;
// integers saturate to T's range, fractions round half to even and NaN gives 0.
template <class T>
T bound_in_type(const Scalar& s) {
  if constexpr (kIsFloat<T>) {
    // Straight from the integer so that large int64 values round once.
    if (s.kind == Scalar::Kind::kInt) return static_cast<T>(s.i);
    if (s.kind == Scalar::Kind::kUint) return static_cast<T>(s.u);
    return static_cast<T>(s.f);
  } else {
    constexpr auto lo = std::numeric_limits<T>::min();
    constexpr auto hi = std::numeric_limits<T>::max();
    switch (s.kind) {
      case Scalar::Kind::kInt:
        if constexpr (std::is_signed_v<T>) {
          return s.i < static_cast<int64_t>(lo) ? lo : s.i > static_cast<int64_t>(hi) ? hi : T(s.i);
        } else {
          return s.i < 0 ? lo : static_cast<uint64_t>(s.i) > hi ? hi : T(s.i);
        }
      case Scalar::Kind::kUint:
        return s.u > static_cast<uint64_t>(hi) ? hi : T(s.u);
      case Scalar::Kind::kFloat:
        return saturate_cast<T>(std::nearbyint(s.f));  // ties to even; NaN -> 0
    }
    return T(0);
  }
}

Status run_clamp(KernelContext& ctx) {
  const auto& p = ctx.params<ClampParams>();
  const TensorView& x = ctx.in(p.input);
  dispatch_type(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    T* o = ctx.out().as<T>();
    for (uint64_t i = 0; i < x.count; ++i) {
      T v = in[i];
      if (p.min_value && v < bound_in_type<T>(*p.min_value)) v = bound_in_type<T>(*p.min_value);
      if (p.max_value && v > bound_in_type<T>(*p.max_value)) v = bound_in_type<T>(*p.max_value);
      o[i] = v;
    }
  });
  return Status::ok();
}

Status run_softmax(KernelContext& ctx) {
  const auto& p = ctx.params<SoftmaxParams>();
  const TensorView& x = ctx.in(p.input);
  int64_t outer = 1, axis_len = x.shape[p.axis], inner = 1;
  for (int64_t i = 0; i < p.axis; ++i) outer *= x.shape[i];
  for (size_t i = p.axis + 1; i < x.rank(); ++i) inner *= x.shape[i];
  dispatch_float(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    T* o = ctx.out().as<T>();
    std::vector<double> e(axis_len);
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t c = 0; c < inner; ++c) {
        int64_t base = a * axis_len * inner + c;
        double m = -INFINITY;
        for (int64_t k = 0; k < axis_len; ++k) m = std::max(m, to_double(in[base + k * inner]));
        double sum = 0;
        for (int64_t k = 0; k < axis_len; ++k) {
          e[k] = std::exp(to_double(in[base + k * inner]) - m);
          sum += e[k];
        }
        for (int64_t k = 0; k < axis_len; ++k) o[base + k * inner] = static_cast<T>(e[k] / sum);
      }
    }
  });
  return Status::ok();
}

}  // namespace

double reference_unary(OpKind kind, double x) { return float_unary(kind, x); }

void register_reference_elementwise(KernelTable& t) {
  auto set = [&](OpKind k, KernelFn fn) { t[static_cast<int>(k)] = fn; };
  for (OpKind k : ops_in_family(OpFamily::kBinary)) set(k, run_binary);
  for (OpKind k : ops_in_family(OpFamily::kComparison)) set(k, run_predicate);
  for (OpKind k : ops_in_family(OpFamily::kLogical)) {
    set(k, k == OpKind::kLogicalNot ? run_logical_not : run_predicate);
  }
  for (OpKind k : ops_in_family(OpFamily::kClassification)) set(k, run_classify);
  for (OpKind k : elementwise_unary_ops()) set(k, run_unary);
  set(OpKind::kHardSwish, run_hard_swish);
  set(OpKind::kElu, run_elu);
  set(OpKind::kLeakyRelu, run_leaky_relu);
  set(OpKind::kHardSigmoid, run_hard_sigmoid);
  set(OpKind::kLinear, run_linear);
  set(OpKind::kPrelu, run_prelu);
  set(OpKind::kClamp, run_clamp);
  set(OpKind::kSoftmax, run_softmax);
}

}  // namespace webnn
