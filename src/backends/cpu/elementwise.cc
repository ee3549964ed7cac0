// Element-wise float32 kernels: binary arithmetic with broadcasting, unary math and
// activations, all on the SIMD table (the transcendental ones within the bounds of
// docs/performance.md). cpu_scalar_unary keeps the reference's double formulas for the float16
// kernels.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/broadcast_rows.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/reference/reference_backend.h"

namespace webnn {

namespace {

// Elements per task: enough to amortise a hand-off to a worker (~microseconds).
constexpr int64_t kGrain = 16384;

bool all_float32(const TensorView& a, const TensorView& b) {
  return a.data_type == DataType::kFloat32 && b.data_type == DataType::kFloat32;
}

// out = a op b over broadcast shapes, as rows (broadcast_rows.h): each run is one SIMD call.
class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const SimdKernels& simd, BinaryOpF op) : simd_(simd), op_(op) {}

  bool init(const TensorView& a, const TensorView& b, const TensorView& out) {
    if (!all_float32(a, b) || out.data_type != DataType::kFloat32) return false;
    return rows_.init({&a.shape, &b.shape}, out.shape);
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<BinaryParams>();
    const float* a = ctx.in(p.a).as<float>();
    const float* b = ctx.in(p.b).as<float>();
    float* out = ctx.out().as<float>();
    const int64_t a_step = rows_.step(0), b_step = rows_.step(1);
    parallel_chunks(ctx.pool(), rows_.total(), kGrain, [&](int64_t begin, int64_t end) {
      rows_.for_each(begin, end, [&](const BroadcastRows<2>::Offsets& at, int64_t pos, int64_t n) {
        simd_.binary(op_, a + at[0], a_step, b + at[1], b_step, out + pos, n);
      });
    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  BinaryOpF op_;
  BroadcastRows<2> rows_;
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
    case OpKind::kLog:
      a.op = UnaryOpF::kLog;
      return true;
    case OpKind::kSoftplus:
      a.op = UnaryOpF::kSoftplus;
      return true;
    case OpKind::kElu:
      a.op = UnaryOpF::kElu;
      a.alpha = as_float32(node.as<EluParams>().alpha);
      return true;
    case OpKind::kSign:
      a.op = UnaryOpF::kSign;
      return true;
    case OpKind::kSoftsign:
      a.op = UnaryOpF::kSoftsign;
      return true;
    case OpKind::kSin:
      a.op = UnaryOpF::kSin;
      return true;
    case OpKind::kCos:
      a.op = UnaryOpF::kCos;
      return true;
    case OpKind::kTan:
      a.op = UnaryOpF::kTan;
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
bool cpu_unary_input(const Node& node, OperandRef* input) { return unary_input(node, input); }

bool cpu_scalar_unary_kind(OpKind kind) {
  return kind == OpKind::kCos || kind == OpKind::kSin || kind == OpKind::kTan ||
         kind == OpKind::kLog || kind == OpKind::kSign || kind == OpKind::kSoftplus ||
         kind == OpKind::kSoftsign || kind == OpKind::kElu;
}

double cpu_scalar_unary(OpKind kind, double alpha, double x) {
  // elu's coefficient is an option, which the reference's option-less formulas do not take.
  if (kind == OpKind::kElu) return x > 0 ? x : alpha * std::expm1(x);
  return reference_unary(kind, x);
}

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
  if (!unary_args(node, &args)) return nullptr;
  OperandRef input;
  if (!unary_input(node, &input)) return nullptr;
  const TensorView& x = cc.view(input);
  if (x.data_type != DataType::kFloat32 || x.count != out.count) return nullptr;
  return std::make_unique<UnaryKernel>(simd, input, args);
}

}  // namespace webnn
