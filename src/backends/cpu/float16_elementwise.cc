// float16 element-wise nodes, comparisons, where and float16 <-> float32 casts on the cpu
// kernels. Each task walks its range in blocks that fit in L1: the block is widened to float32
// (F16C), the float32 op is applied, and the block is rounded back to float16 (round to nearest
// even), so a node reads and writes its float16 tensors once and never holds a float32 copy of
// them. Every op rounds its own output to float16, as WebNN defines it. Broadcast inputs are
// handled when they are periodic in the output's flat index (the output's trailing dimensions:
// same shape, a bias row, a scalar); where copies the 16-bit values without converting them.
//
// What equals the reference (which computes in double and rounds once to float16):
// - add, sub, mul, div, sqrt, reciprocal: a float32 result of float16 operands rounded to
//   float16 equals the once-rounded exact result (float32 has 24 >= 2 * 11 + 2 bits, so the
//   double rounding is innocuous); max, min, relu, clamp, neg, abs, floor, ceil, roundEven and
//   leakyRelu (alpha * x is exact in float32) are exact outright. Coefficients and clamp bounds
//   are cast to float16 first, as the reference casts them to the input type.
// - linear, hardSigmoid, hardSwish and the ops without a vector form (cos, sin, tan, log, sign,
//   softplus, softsign, elu) are evaluated in double by the reference's formulas and rounded
//   to float32 with round-to-odd, after which the float16 rounding equals rounding the double
//   result directly: bit-identical too (linear, hardSigmoid and hardSwish four doubles at a time
//   on AVX2).
// - exp, sigmoid, tanh, erf and gelu use the float32 vector approximations (their bounds in
//   docs/performance.md), within one float16 step of the reference.
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/float16_convert.h"
#include "backends/cpu/isa.h"

namespace webnn {

namespace {

// Floats per block (three blocks of 4 KB on the stack) and elements per task.
constexpr int64_t kBlock = 1024;
constexpr int64_t kGrain = 16384;

// d rounded to float with round-to-odd: an inexact result gets the odd one of the two floats
// around d. Rounding that float to float16 (13 fewer bits) then equals rounding d itself.
// Branch-free; double_loop_avx2 does the same lane-wise.
inline float round_to_odd(double d) {
  const float f = static_cast<float>(d);
  const double back = static_cast<double>(f);
  const uint32_t b = std::bit_cast<uint32_t>(f);
  // f is the even neighbour of an inexact (non-NaN) d: step its magnitude towards d (from 0 to
  // the least subnormal, from infinity down to the largest float).
  const bool step = back != d && d == d && (b & 1u) == 0;
  const uint32_t away = (d < 0 ? -d : d) > (back < 0 ? -back : back) ? 1u : 0xFFFFFFFFu;
  return std::bit_cast<float>(b + (step ? away : 0u));
}

double to_float16(double v) { return static_cast<double>(static_cast<float16>(v)); }

// A clamp bound cast to float16 like the reference's bound_in_type (integers round once).
float float16_bound(const Scalar& s) {
  if (s.kind == Scalar::Kind::kInt) return static_cast<float>(static_cast<float16>(s.i));
  if (s.kind == Scalar::Kind::kUint) return static_cast<float>(static_cast<float16>(s.u));
  return static_cast<float>(static_cast<float16>(s.f));
}

// The ops evaluated in double (see the file comment); alpha and beta already cast.
enum class DoubleOp : uint8_t { kNone, kLinear, kHardSigmoid, kHardSwish, kScalar };

// The reference's nan_max(0, nan_min(1, h)): NaN propagates, and max(0, -0) is +0.
inline double clamp01(double h) {
  const double lo = !(h >= 1.0) ? h : 1.0;
  return !(lo <= 0.0) ? lo : 0.0;
}

struct DoubleArgs {
  DoubleOp op = DoubleOp::kNone;
  OpKind kind = OpKind::kIdentity;
  double alpha = 0, beta = 0;
};

// buf[i] = round_to_odd(f(buf[i])) for one op.
template <DoubleOp kOp>
void double_loop(const DoubleArgs& p, float* buf, int64_t n) {
  const double alpha = p.alpha, beta = p.beta;
  for (int64_t i = 0; i < n; ++i) {
    const double x = buf[i];
    double d;
    if constexpr (kOp == DoubleOp::kLinear) {
      d = alpha * x + beta;
    } else if constexpr (kOp == DoubleOp::kHardSigmoid) {
      d = clamp01(alpha * x + beta);
    } else if constexpr (kOp == DoubleOp::kHardSwish) {
      d = x * clamp01(alpha * x + beta);
    } else {
      d = cpu_scalar_unary(p.kind, alpha, x);
    }
    buf[i] = round_to_odd(d);
  }
}

// The four 64-bit lane masks of m as 32-bit lane masks.
__attribute__((target("avx2"))) inline __m128i mask_to32(__m256d m) {
  const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m), low_halves));
}

// The same three parametric ops, four doubles at a time (AVX2, no FMA: alpha * x + beta stays
// two roundings, as in the reference); the tail goes through double_loop.
template <DoubleOp kOp>
__attribute__((target("avx2"))) void double_loop_avx2(const DoubleArgs& p, float* buf, int64_t n) {
  const __m256d alpha = _mm256_set1_pd(p.alpha), beta = _mm256_set1_pd(p.beta);
  const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(buf + i));
    __m256d d = _mm256_add_pd(_mm256_mul_pd(alpha, x), beta);
    if constexpr (kOp != DoubleOp::kLinear) {
      d = _mm256_blendv_pd(one, d, _mm256_cmp_pd(d, one, _CMP_NGE_UQ));
      d = _mm256_blendv_pd(zero, d, _mm256_cmp_pd(d, zero, _CMP_NLE_UQ));
      if constexpr (kOp == DoubleOp::kHardSwish) d = _mm256_mul_pd(x, d);
    }
    // round_to_odd, lane-wise.
    const __m128 f = _mm256_cvtpd_ps(d);
    const __m256d back = _mm256_cvtps_pd(f);
    const __m256d inexact =
        _mm256_and_pd(_mm256_cmp_pd(back, d, _CMP_NEQ_UQ), _mm256_cmp_pd(d, d, _CMP_ORD_Q));
    const __m256d away =
        _mm256_cmp_pd(_mm256_and_pd(d, abs_mask), _mm256_and_pd(back, abs_mask), _CMP_GT_OQ);
    const __m128i bits = _mm_castps_si128(f);
    const __m128i even =
        _mm_cmpeq_epi32(_mm_and_si128(bits, _mm_set1_epi32(1)), _mm_setzero_si128());
    const __m128i step = _mm_and_si128(mask_to32(inexact), even);
    // +1 away from zero, -1 towards it.
    const __m128i delta =
        _mm_sub_epi32(_mm_and_si128(mask_to32(away), _mm_set1_epi32(2)), _mm_set1_epi32(1));
    _mm_storeu_ps(buf + i, _mm_castsi128_ps(_mm_add_epi32(bits, _mm_and_si128(step, delta))));
  }
  double_loop<kOp>(p, buf + i, n - i);
}

void double_block(const DoubleArgs& p, bool avx2, float* buf, int64_t n) {
  switch (p.op) {
    case DoubleOp::kLinear:
      return avx2 ? double_loop_avx2<DoubleOp::kLinear>(p, buf, n)
                  : double_loop<DoubleOp::kLinear>(p, buf, n);
    case DoubleOp::kHardSigmoid:
      return avx2 ? double_loop_avx2<DoubleOp::kHardSigmoid>(p, buf, n)
                  : double_loop<DoubleOp::kHardSigmoid>(p, buf, n);
    case DoubleOp::kHardSwish:
      return avx2 ? double_loop_avx2<DoubleOp::kHardSwish>(p, buf, n)
                  : double_loop<DoubleOp::kHardSwish>(p, buf, n);
    default:
      return double_loop<DoubleOp::kScalar>(p, buf, n);
  }
}

class Float16UnaryKernel final : public Kernel {
 public:
  Float16UnaryKernel(const SimdKernels& simd, OperandRef input, UnaryArgs vec, DoubleArgs dbl)
      : simd_(simd), input_(input), vec_(vec), dbl_(dbl), avx2_(cpu_isa() != CpuIsa::kGeneric) {}

  Status run(KernelContext& ctx) override {
    const TensorView& xv = ctx.in(input_);
    const float16* x = xv.as<float16>();
    float16* y = ctx.out().as<float16>();
    parallel_chunks(ctx.pool(), static_cast<int64_t>(xv.count), kGrain,
                    [&](int64_t begin, int64_t end) {
                      alignas(64) float buf[kBlock];
                      for (int64_t i = begin; i < end; i += kBlock) {
                        const int64_t n = std::min(kBlock, end - i);
                        if (vec_.op == UnaryOpF::kCopy && dbl_.op == DoubleOp::kNone) {
                          // identity: the bits as they are (NaN payloads included).
                          std::memcpy(y + i, x + i, static_cast<size_t>(n) * sizeof(float16));
                          continue;
                        }
                        widen_f16(x + i, buf, n);
                        if (dbl_.op == DoubleOp::kNone) {
                          simd_.unary(vec_, buf, buf, n);
                        } else {
                          double_block(dbl_, avx2_, buf, n);
                        }
                        narrow_f16(buf, y + i, n);
                      }
                    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  OperandRef input_;
  UnaryArgs vec_;
  DoubleArgs dbl_;
  bool avx2_;
};

// Widens the n values of a periodic input (period p: value i is src[i % p]) that output
// positions [i, i + n) read.
void widen_periodic(const float16* src, int64_t p, int64_t i, int64_t n, float* dst) {
  if (p == 1) {
    std::fill_n(dst, n, static_cast<float>(src[0]));
    return;
  }
  for (int64_t pos = i % p; n > 0; pos = 0) {
    const int64_t m = std::min(n, p - pos);
    widen_f16(src + pos, dst, m);
    dst += m;
    n -= m;
  }
}

// a op b where each input is periodic in the output's flat index: its shape (leading 1s
// dropped) is the output's trailing dimensions, e.g. the output itself, a bias row or a
// scalar (period 1, read as a repeated value).
class Float16BinaryKernel final : public Kernel {
 public:
  Float16BinaryKernel(const SimdKernels& simd, BinaryOpF op, OperandRef a, OperandRef b,
                      int64_t a_period, int64_t b_period)
      : simd_(simd), op_(op), a_(a), b_(b), a_period_(a_period), b_period_(b_period) {}

  Status run(KernelContext& ctx) override {
    const float16* a = ctx.in(a_).as<float16>();
    const float16* b = ctx.in(b_).as<float16>();
    float16* y = ctx.out().as<float16>();
    const int64_t a_step = a_period_ > 1 ? 1 : 0, b_step = b_period_ > 1 ? 1 : 0;
    parallel_chunks(ctx.pool(), static_cast<int64_t>(ctx.out().count), kGrain,
                    [&](int64_t begin, int64_t end) {
                      alignas(64) float fa[kBlock], fb[kBlock], fy[kBlock];
                      if (!a_step) fa[0] = static_cast<float>(a[0]);
                      if (!b_step) fb[0] = static_cast<float>(b[0]);
                      for (int64_t i = begin; i < end; i += kBlock) {
                        const int64_t n = std::min(kBlock, end - i);
                        if (a_step) widen_periodic(a, a_period_, i, n, fa);
                        if (b_step) widen_periodic(b, b_period_, i, n, fb);
                        simd_.binary(op_, fa, a_step, fb, b_step, fy, n);
                        narrow_f16(fy, y + i, n);
                      }
                    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  BinaryOpF op_;
  OperandRef a_, b_;
  int64_t a_period_, b_period_;
};

// Which of the relations a < b, a == b, a > b and unordered (a NaN) make a comparison true:
// the reference's comparisons of the values' exact doubles, as one branch-free expression.
struct Relations {
  uint8_t lt = 0, eq = 0, gt = 0, unordered = 0;
};

Relations relations_of(OpKind kind) {
  switch (kind) {
    case OpKind::kEqual:
      return {0, 1, 0, 0};
    case OpKind::kNotEqual:
      return {1, 0, 1, 1};
    case OpKind::kGreater:
      return {0, 0, 1, 0};
    case OpKind::kGreaterOrEqual:
      return {0, 1, 1, 0};
    case OpKind::kLesser:
      return {1, 0, 0, 0};
    default:  // kLesserOrEqual
      return {1, 1, 0, 0};
  }
}

void compare_block(const Relations& r, const float* a, const float* b, uint8_t* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float x = a[j], z = b[j];
    y[j] = static_cast<uint8_t>(((x < z) & r.lt) | ((x == z) & r.eq) | ((x > z) & r.gt) |
                                ((x != x || z != z) & r.unordered));
  }
}

// equal ... lesserOrEqual of two periodic float16 inputs into uint8 (0 / 1), block-wise.
class Float16CompareKernel final : public Kernel {
 public:
  Float16CompareKernel(OpKind kind, OperandRef a, OperandRef b, int64_t a_period, int64_t b_period)
      : relations_(relations_of(kind)), a_(a), b_(b), a_period_(a_period), b_period_(b_period) {}

  Status run(KernelContext& ctx) override {
    const float16* a = ctx.in(a_).as<float16>();
    const float16* b = ctx.in(b_).as<float16>();
    uint8_t* y = ctx.out().as<uint8_t>();
    parallel_chunks(ctx.pool(), static_cast<int64_t>(ctx.out().count), kGrain,
                    [&](int64_t begin, int64_t end) {
                      alignas(64) float fa[kBlock], fb[kBlock];
                      for (int64_t i = begin; i < end; i += kBlock) {
                        const int64_t n = std::min(kBlock, end - i);
                        widen_periodic(a, a_period_, i, n, fa);
                        widen_periodic(b, b_period_, i, n, fb);
                        compare_block(relations_, fa, fb, y + i, n);
                      }
                    });
    return Status::ok();
  }

 private:
  Relations relations_;
  OperandRef a_, b_;
  int64_t a_period_, b_period_;
};

// where(condition, true_value, false_value) on float16 values: 16-bit copies, no conversion.
// Each input is periodic in the output's flat index; its position wraps instead of a modulo.
class Float16WhereKernel final : public Kernel {
 public:
  Float16WhereKernel(const WhereParams& p, int64_t c_period, int64_t t_period, int64_t f_period)
      : p_(p), pc_(c_period), pt_(t_period), pf_(f_period) {}

  Status run(KernelContext& ctx) override {
    const uint8_t* c = ctx.in(p_.condition).as<uint8_t>();
    const uint16_t* t = ctx.in(p_.true_value).as<uint16_t>();
    const uint16_t* f = ctx.in(p_.false_value).as<uint16_t>();
    uint16_t* y = ctx.out().as<uint16_t>();
    parallel_chunks(ctx.pool(), static_cast<int64_t>(ctx.out().count), kGrain,
                    [&](int64_t begin, int64_t end) {
                      int64_t ic = begin % pc_, it = begin % pt_, jf = begin % pf_;
                      for (int64_t i = begin; i < end; ++i) {
                        y[i] = c[ic] != 0 ? t[it] : f[jf];
                        if (++ic == pc_) ic = 0;
                        if (++it == pt_) it = 0;
                        if (++jf == pf_) jf = 0;
                      }
                    });
    return Status::ok();
  }

 private:
  WhereParams p_;
  int64_t pc_, pt_, pf_;
};

// The period of `in` broadcast to `out` (its element count) when its shape without leading 1s
// is the output's trailing dimensions; 0 otherwise.
int64_t broadcast_period(const TensorView& in, const TensorView& out) {
  size_t lead = 0;
  while (lead < in.rank() && in.shape[lead] == 1) ++lead;
  const size_t k = in.rank() - lead;
  if (k > out.rank()) return 0;
  for (size_t j = 0; j < k; ++j) {
    if (in.shape[lead + j] != out.shape[out.rank() - k + j]) return 0;
  }
  return static_cast<int64_t>(in.count);
}

// cast float16 -> float32 (exact) or float32 -> float16 (rounded to nearest even, as the
// reference's static_cast).
class Float16CastKernel final : public Kernel {
 public:
  Float16CastKernel(OperandRef input, bool widen) : input_(input), widen_(widen) {}

  Status run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(input_);
    TensorView& y = ctx.out();
    parallel_chunks(ctx.pool(), static_cast<int64_t>(x.count), 4 * kGrain,
                    [&](int64_t b, int64_t e) {
                      if (widen_) {
                        widen_f16(x.as<float16>() + b, y.as<float>() + b, e - b);
                      } else {
                        narrow_f16(x.as<float>() + b, y.as<float16>() + b, e - b);
                      }
                    });
    return Status::ok();
  }

 private:
  OperandRef input_;
  bool widen_;
};

std::unique_ptr<Kernel> make_cast(const Node& node, const CompileContext& cc) {
  const OperandRef input = node.as<CastParams>().input;
  const DataType from = cc.view(input).data_type;
  const DataType to = cc.view(OperandRef{node.outputs[0]}).data_type;
  if (from == DataType::kFloat16 && to == DataType::kFloat32) {
    return std::make_unique<Float16CastKernel>(input, true);
  }
  if (from == DataType::kFloat32 && to == DataType::kFloat16) {
    return std::make_unique<Float16CastKernel>(input, false);
  }
  return nullptr;
}

// The float32 vector form of a float16 unary node, or its double evaluation, with the
// coefficients cast to float16.
bool float16_unary_args(const Node& node, UnaryArgs* vec, DoubleArgs* dbl) {
  dbl->kind = node.kind;
  switch (node.kind) {
    case OpKind::kLinear: {
      const auto& p = node.as<LinearParams>();
      *dbl = {DoubleOp::kLinear, node.kind, to_float16(p.alpha), to_float16(p.beta)};
      return true;
    }
    case OpKind::kHardSigmoid: {
      const auto& p = node.as<HardSigmoidParams>();
      *dbl = {DoubleOp::kHardSigmoid, node.kind, to_float16(p.alpha), to_float16(p.beta)};
      return true;
    }
    case OpKind::kHardSwish: {
      // Not cast: the pywebnn compat coefficients stay exact, as in the reference.
      const auto& p = node.as<HardSwishParams>();
      *dbl = {DoubleOp::kHardSwish, node.kind, p.alpha, p.beta};
      return true;
    }
    case OpKind::kElu:
      *dbl = {DoubleOp::kScalar, node.kind, to_float16(node.as<EluParams>().alpha), 0};
      return true;
    default:
      break;
  }
  if (cpu_scalar_unary_kind(node.kind)) {
    dbl->op = DoubleOp::kScalar;
    return true;
  }
  if (!cpu_unary_args(node, vec)) return false;
  if (node.kind == OpKind::kClamp) {
    const auto& p = node.as<ClampParams>();
    vec->lo = p.min_value ? float16_bound(*p.min_value) : -INFINITY;
    vec->hi = p.max_value ? float16_bound(*p.max_value) : INFINITY;
  } else if (node.kind == OpKind::kLeakyRelu) {
    vec->alpha = to_float16(node.as<LeakyReluParams>().alpha);
  }
  return true;
}

}  // namespace

std::unique_ptr<Kernel> make_float16_elementwise_kernel(const Node& node, const CompileContext& cc,
                                                        const SimdKernels& simd) {
  if (node.outputs.size() != 1) return nullptr;
  const TensorView& out = cc.view(OperandRef{node.outputs[0]});
  if (node.kind == OpKind::kCast) return make_cast(node, cc);
  if (out.count == 0) return nullptr;
  if (node.kind == OpKind::kWhere) {
    const auto& p = node.as<WhereParams>();
    const TensorView& t = cc.view(p.true_value);
    const TensorView& f = cc.view(p.false_value);
    if (t.data_type != DataType::kFloat16 || f.data_type != DataType::kFloat16) return nullptr;
    const int64_t pc = broadcast_period(cc.view(p.condition), out);
    const int64_t pt = broadcast_period(t, out), pf = broadcast_period(f, out);
    if (pc == 0 || pt == 0 || pf == 0) return nullptr;
    return std::make_unique<Float16WhereKernel>(p, pc, pt, pf);
  }
  if (op_family(node.kind) == OpFamily::kComparison) {
    const auto& p = node.as<BinaryParams>();
    const TensorView& a = cc.view(p.a);
    const TensorView& b = cc.view(p.b);
    if (a.data_type != DataType::kFloat16 || out.count == 0) return nullptr;
    const int64_t pa = broadcast_period(a, out), pb = broadcast_period(b, out);
    if (pa == 0 || pb == 0) return nullptr;
    return std::make_unique<Float16CompareKernel>(node.kind, p.a, p.b, pa, pb);
  }
  if (out.data_type != DataType::kFloat16 || out.count == 0) return nullptr;
  BinaryOpF bop;
  if (cpu_binary_op(node.kind, &bop)) {
    const auto& p = node.as<BinaryParams>();
    const TensorView& a = cc.view(p.a);
    const TensorView& b = cc.view(p.b);
    if (a.data_type != DataType::kFloat16 || b.data_type != DataType::kFloat16) return nullptr;
    // Short periods would cost a call per few elements: those and the other broadcasts take
    // the whole-tensor adapter (float16.cc), which walks them on the float32 kernel.
    const int64_t pa = broadcast_period(a, out), pb = broadcast_period(b, out);
    const auto fits = [](int64_t period) { return period == 1 || period >= 64; };
    if (!fits(pa) || !fits(pb)) return nullptr;
    return std::make_unique<Float16BinaryKernel>(simd, bop, p.a, p.b, pa, pb);
  }
  UnaryArgs vec;
  DoubleArgs dbl;
  if (!float16_unary_args(node, &vec, &dbl)) return nullptr;
  OperandRef input;
  if (!cpu_unary_input(node, &input)) return nullptr;
  const TensorView& x = cc.view(input);
  if (x.data_type != DataType::kFloat16 || x.count != out.count) return nullptr;
  return std::make_unique<Float16UnaryKernel>(simd, input, vec, dbl);
}

}  // namespace webnn
