// Element-wise float32 kernels: binary arithmetic with broadcasting, unary math and
// activations. Vectorised ops run on the SIMD table (exp, tanh, sigmoid, erf and gelu in
// float32, within the bounds of docs/performance.md); the transcendental ones without a vector
// form here (sin, log, ...) evaluate in double per element, as the reference does, but in
// parallel.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

// Elements per task: enough to amortise a hand-off to a worker (~microseconds).
constexpr int64_t kGrain = 16384;

bool all_float32(const TensorView& a, const TensorView& b) {
  return a.data_type == DataType::kFloat32 && b.data_type == DataType::kFloat32;
}

bool all_int32(const TensorView& a, const TensorView& b, const TensorView& out) {
  return a.data_type == DataType::kInt32 && b.data_type == DataType::kInt32 &&
         out.data_type == DataType::kInt32;
}

// One row of an int32 add / sub / mul / max / min, wrapping like the reference's two's
// complement arithmetic (reference/elementwise.cc int_binary).
void int32_row(BinaryOpF op, const int32_t* a, int64_t as, const int32_t* b, int64_t bs,
               int32_t* out, int64_t n) {
  // One loop per step pattern (steps are 0 or 1), each simple enough to vectorise.
  auto each = [&](auto f) {
    if (as == 1 && bs == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
    } else if (as == 1) {
      const int32_t y = b[0];
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], y);
    } else if (bs == 1) {
      const int32_t x = a[0];
      for (int64_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
    } else {
      std::fill(out, out + n, f(a[0], b[0]));
    }
  };
  auto wrap = [](uint32_t v) { return static_cast<int32_t>(v); };
  switch (op) {
    case BinaryOpF::kAdd:
      return each([&](int32_t x, int32_t y) { return wrap(uint32_t(x) + uint32_t(y)); });
    case BinaryOpF::kSub:
      return each([&](int32_t x, int32_t y) { return wrap(uint32_t(x) - uint32_t(y)); });
    case BinaryOpF::kMul:
      return each([&](int32_t x, int32_t y) { return wrap(uint32_t(x) * uint32_t(y)); });
    case BinaryOpF::kMax:
      return each([](int32_t x, int32_t y) { return std::max(x, y); });
    case BinaryOpF::kMin:
      return each([](int32_t x, int32_t y) { return std::min(x, y); });
    case BinaryOpF::kDiv:
      return;  // not taken (init): the reference's division rules stay there
  }
}

// out = a op b over broadcast shapes, as rows: the innermost run of the output (after merging
// dimensions that are contiguous in all three tensors) is one SIMD call with each input either
// contiguous (step 1) or a repeated scalar (step 0). int32 operands (the bias add after an
// ONNX ConvInteger) take a scalar row loop instead of the reference's per-element indexing.
class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const SimdKernels& simd, BinaryOpF op) : simd_(simd), op_(op) {}

  bool init(const TensorView& a, const TensorView& b, const TensorView& out) {
    int32_ = all_int32(a, b, out) && op_ != BinaryOpF::kDiv;
    if (!int32_ && (!all_float32(a, b) || out.data_type != DataType::kFloat32)) return false;
    const size_t rank = out.rank();
    std::vector<int64_t> dims, sa, sb;
    // Broadcast strides of each input in the output's index space, size-1 axes dropped.
    auto strides = [&](const std::vector<int64_t>& shape) {
      std::vector<int64_t> s(rank, 0);
      int64_t stride = 1;
      for (size_t i = shape.size(); i-- > 0;) {
        s[i + rank - shape.size()] = shape[i] == 1 ? 0 : stride;
        stride *= shape[i];
      }
      return s;
    };
    const std::vector<int64_t> full_a = strides(a.shape), full_b = strides(b.shape);
    for (size_t i = 0; i < rank; ++i) {
      if (out.shape[i] == 1) continue;
      // Merge into the previous axis when both inputs continue it contiguously.
      if (!dims.empty() && sa.back() == full_a[i] * out.shape[i] &&
          sb.back() == full_b[i] * out.shape[i]) {
        dims.back() *= out.shape[i];
        sa.back() = full_a[i];
        sb.back() = full_b[i];
        continue;
      }
      dims.push_back(out.shape[i]);
      sa.push_back(full_a[i]);
      sb.push_back(full_b[i]);
    }
    if (dims.empty()) dims = {1}, sa = {0}, sb = {0};
    inner_ = dims.back();
    a_step_ = sa.back();
    b_step_ = sb.back();
    dims.pop_back();
    sa.pop_back();
    sb.pop_back();
    outer_dims_ = dims;
    outer_a_ = sa;
    outer_b_ = sb;
    rows_ = 1;
    for (int64_t d : dims) rows_ *= d;
    return a_step_ <= 1 && b_step_ <= 1 && outer_dims_.size() <= kMaxRank;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<BinaryParams>();
    // Both element types are 4 bytes: rows are addressed as floats, int32 rows reinterpreted.
    const float* a = reinterpret_cast<const float*>(ctx.in(p.a).data);
    const float* b = reinterpret_cast<const float*>(ctx.in(p.b).data);
    float* out = reinterpret_cast<float*>(ctx.out().data);
    const int64_t total = rows_ * inner_;
    parallel_chunks(ctx.pool(), total, kGrain, [&](int64_t begin, int64_t end) {
      // Row index -> input offsets, by an odometer over the outer dimensions.
      int64_t row = begin / inner_, col = begin % inner_;
      std::array<int64_t, kMaxRank> idx{};
      int64_t off_a = 0, off_b = 0;
      for (size_t d = outer_dims_.size(), r = row; d-- > 0;) {
        idx[d] = static_cast<int64_t>(r) % outer_dims_[d];
        r /= outer_dims_[d];
        off_a += idx[d] * outer_a_[d];
        off_b += idx[d] * outer_b_[d];
      }
      for (int64_t pos = begin; pos < end;) {
        const int64_t n = std::min(inner_ - col, end - pos);
        const float* ra = a + off_a + col * a_step_;
        const float* rb = b + off_b + col * b_step_;
        if (int32_) {
          int32_row(op_, reinterpret_cast<const int32_t*>(ra), a_step_,
                    reinterpret_cast<const int32_t*>(rb), b_step_,
                    reinterpret_cast<int32_t*>(out + pos), n);
        } else {
          simd_.binary(op_, ra, a_step_, rb, b_step_, out + pos, n);
        }
        pos += n;
        col = 0;
        for (size_t d = outer_dims_.size(); d-- > 0;) {
          off_a += outer_a_[d];
          off_b += outer_b_[d];
          if (++idx[d] < outer_dims_[d]) break;
          off_a -= outer_a_[d] * outer_dims_[d];
          off_b -= outer_b_[d] * outer_dims_[d];
          idx[d] = 0;
        }
        ++row;
      }
    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  BinaryOpF op_;
  bool int32_ = false;
  int64_t inner_ = 1, a_step_ = 1, b_step_ = 1, rows_ = 1;
  std::vector<int64_t> outer_dims_, outer_a_, outer_b_;
};

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(const SimdKernels& simd, OperandRef input, UnaryArgs args)
      : simd_(simd), input_(input), args_(args) {}

  Status run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(input_);
    const float* in = x.as<float>();
    float* out = ctx.out().as<float>();
    parallel_chunks(ctx.pool(), static_cast<int64_t>(x.count), kGrain,
                    [&](int64_t begin, int64_t end) {
                      simd_.unary(args_, in + begin, out + begin, end - begin);
                    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  OperandRef input_;
  UnaryArgs args_;
};

// The same formulas as the reference kernels (reference/elementwise.cc), in double.
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

class ScalarUnaryKernel final : public Kernel {
 public:
  ScalarUnaryKernel(OpKind kind, OperandRef input, double alpha)
      : kind_(kind), input_(input), alpha_(alpha) {}

  Status run(KernelContext& ctx) override {
    const TensorView& x = ctx.in(input_);
    const float* in = x.as<float>();
    float* out = ctx.out().as<float>();
    parallel_chunks(ctx.pool(), static_cast<int64_t>(x.count), kGrain / 8,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t i = begin; i < end; ++i) {
                        out[i] = static_cast<float>(eval(static_cast<double>(in[i])));
                      }
                    });
    return Status::ok();
  }

 private:
  double eval(double x) const {
    switch (kind_) {
      case OpKind::kCos:
        return std::cos(x);
      case OpKind::kSin:
        return std::sin(x);
      case OpKind::kTan:
        return std::tan(x);
      case OpKind::kLog:
        return std::log(x);
      case OpKind::kSign:
        return (x > 0) - (x < 0);  // NaN gives 0, as in the reference (spec emulation)
      case OpKind::kSoftplus:
        return softplus(x);
      case OpKind::kSoftsign:
        return x / (1.0 + std::fabs(x));
      case OpKind::kElu:
        return x > 0 ? x : alpha_ * std::expm1(x);
      default:
        return x;
    }
  }

  OpKind kind_;
  OperandRef input_;
  double alpha_;
};

// WebNN casts alpha/beta coefficients to the input data type (float32 here) before use.
double as_float32(double v) {
  // Without `volatile`, GCC 12 -O3 was observed to drop this rounding for linear's alpha
  // (tests/python/test_ops_audit.py catches it); keep the step explicit.
  volatile float rounded = static_cast<float>(v);
  return rounded;
}

bool binary_op(OpKind kind, BinaryOpF* op) {
  switch (kind) {
    case OpKind::kAdd:
      *op = BinaryOpF::kAdd;
      return true;
    case OpKind::kSub:
      *op = BinaryOpF::kSub;
      return true;
    case OpKind::kMul:
      *op = BinaryOpF::kMul;
      return true;
    case OpKind::kDiv:
      *op = BinaryOpF::kDiv;
      return true;
    case OpKind::kMax:
      *op = BinaryOpF::kMax;
      return true;
    case OpKind::kMin:
      *op = BinaryOpF::kMin;
      return true;
    default:
      return false;
  }
}

// The vector form of a unary node, if it has one.
bool unary_args(const Node& node, UnaryArgs* args) {
  UnaryArgs& a = *args;
  switch (node.kind) {
    case OpKind::kIdentity:
      a.op = UnaryOpF::kCopy;
      return true;
    case OpKind::kRelu:
      a.op = UnaryOpF::kRelu;
      return true;
    case OpKind::kNeg:
      a.op = UnaryOpF::kNeg;
      return true;
    case OpKind::kAbs:
      a.op = UnaryOpF::kAbs;
      return true;
    case OpKind::kFloor:
      a.op = UnaryOpF::kFloor;
      return true;
    case OpKind::kCeil:
      a.op = UnaryOpF::kCeil;
      return true;
    case OpKind::kRoundEven:
      a.op = UnaryOpF::kRoundEven;
      return true;
    case OpKind::kSqrt:
      a.op = UnaryOpF::kSqrt;
      return true;
    case OpKind::kReciprocal:
      a.op = UnaryOpF::kReciprocal;
      return true;
    case OpKind::kExp:
      a.op = UnaryOpF::kExp;
      return true;
    case OpKind::kSigmoid:
      a.op = UnaryOpF::kSigmoid;
      return true;
    case OpKind::kTanh:
      a.op = UnaryOpF::kTanh;
      return true;
    case OpKind::kErf:
      a.op = UnaryOpF::kErf;
      return true;
    case OpKind::kGelu:
      a.op = UnaryOpF::kGelu;
      return true;
    case OpKind::kClamp: {
      const auto& p = node.as<ClampParams>();
      a.op = UnaryOpF::kClamp;
      // Bounds are cast to the input type (float) like the reference does.
      a.lo = p.min_value ? static_cast<float>(p.min_value->as_double()) : -INFINITY;
      a.hi = p.max_value ? static_cast<float>(p.max_value->as_double()) : INFINITY;
      return true;
    }
    case OpKind::kLinear: {
      const auto& p = node.as<LinearParams>();
      a.op = UnaryOpF::kLinear;
      a.alpha = as_float32(p.alpha);
      a.beta = as_float32(p.beta);
      return true;
    }
    case OpKind::kLeakyRelu:
      a.op = UnaryOpF::kLeakyRelu;
      a.alpha = as_float32(node.as<LeakyReluParams>().alpha);
      return true;
    case OpKind::kHardSigmoid: {
      const auto& p = node.as<HardSigmoidParams>();
      a.op = UnaryOpF::kHardSigmoid;
      a.alpha = as_float32(p.alpha);
      a.beta = as_float32(p.beta);
      return true;
    }
    case OpKind::kHardSwish: {
      const auto& p = node.as<HardSwishParams>();
      a.op = UnaryOpF::kHardSwish;
      a.alpha = p.alpha;
      a.beta = p.beta;
      return true;
    }
    default:
      return false;
  }
}

// The node's single float32 input operand, for unary ops.
bool unary_input(const Node& node, OperandRef* input) {
  bool found = true;
  std::visit(
      [&](const auto& p) {
        if constexpr (requires { p.input; }) {
          *input = p.input;
        } else {
          found = false;
        }
      },
      node.params);
  return found;
}

}  // namespace

bool cpu_unary_args(const Node& node, UnaryArgs* args) { return unary_args(node, args); }
bool cpu_binary_op(OpKind kind, BinaryOpF* op) { return binary_op(kind, op); }

std::unique_ptr<Kernel> make_elementwise_kernel(const Node& node, const CompileContext& cc,
                                                const SimdKernels& simd) {
  if (node.outputs.size() != 1) return nullptr;
  const TensorView& out = cc.view(OperandRef{node.outputs[0]});
  BinaryOpF bop;
  if (binary_op(node.kind, &bop)) {
    const auto& p = node.as<BinaryParams>();
    auto k = std::make_unique<BinaryKernel>(simd, bop);
    if (!k->init(cc.view(p.a), cc.view(p.b), out)) return nullptr;
    return k;
  }
  if (out.data_type != DataType::kFloat32) return nullptr;
  UnaryArgs args;
  const bool vector = unary_args(node, &args);
  const bool scalar = node.kind == OpKind::kCos || node.kind == OpKind::kSin ||
                      node.kind == OpKind::kTan || node.kind == OpKind::kLog ||
                      node.kind == OpKind::kSign || node.kind == OpKind::kSoftplus ||
                      node.kind == OpKind::kSoftsign || node.kind == OpKind::kElu;
  if (!vector && !scalar) return nullptr;
  OperandRef input;
  if (!unary_input(node, &input)) return nullptr;
  const TensorView& x = cc.view(input);
  if (x.data_type != DataType::kFloat32 || x.count != out.count) return nullptr;
  if (vector) return std::make_unique<UnaryKernel>(simd, input, args);
  const double alpha = node.kind == OpKind::kElu ? as_float32(node.as<EluParams>().alpha) : 0.0;
  return std::make_unique<ScalarUnaryKernel>(node.kind, input, alpha);
}

}  // namespace webnn
