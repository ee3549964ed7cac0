// Fused epilogues and element-wise chains (graph/passes/epilogue_fusion.cc): the node's head op
// writes its output, then every step runs over it block by block while the block is in cache —
// inside the head kernel when it can (Kernel::set_output_sink: NHWC convolutions apply it per
// finished GEMM block or output row), else in one pass after it.
// Each step calls the same SIMD function, with the same operand order, as the stand-alone
// element-wise kernel would (elementwise.cc), so the fused graph is bit-identical to the
// unfused one.
#include <algorithm>

#include "backends/cpu/cpu_kernels.h"
#include "ops/fused_chain.h"

namespace webnn {

namespace {

// Elements per task, and per block that all steps process before moving on (fits L1).
constexpr int64_t kGrain = 16384;
constexpr int64_t kBlock = 2048;

// One operand of a step: a chain value in a register (ops/fused_chain.h
// assign_chain_registers), the element-wise head's source input (contiguous, same shape), or
// another tensor broadcast into the chain as one block.
struct ChainArg {
  enum Kind : uint8_t { kRegister, kSource, kBroadcast } kind = kRegister;
  int reg = 0;
  OperandRef other;  // kBroadcast
  // Element i of the chain meets element (i / repeat) % period of `other`.
  int64_t repeat = 1, period = 1;
};

struct ChainStep {
  bool unary = true;
  UnaryArgs args;
  BinaryOpF op = BinaryOpF::kAdd;
  ChainArg a, b;  // unary: a
  int out = 0;    // register of the result
};

// How `other` (right-aligned) broadcasts into `out`: one block of equal axes, else false.
bool block_broadcast(const std::vector<int64_t>& other, const std::vector<int64_t>& out,
                     int64_t* repeat, int64_t* period) {
  if (other.size() > out.size()) return false;
  const size_t lead = out.size() - other.size();
  auto dim = [&](size_t i) { return i < lead ? int64_t{1} : other[i - lead]; };
  size_t lo = out.size(), hi = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (dim(i) != 1) lo = std::min(lo, i), hi = i + 1;
  }
  *repeat = 1;
  *period = 1;
  if (lo >= hi) {  // a scalar
    for (int64_t d : out) *repeat *= d;
    return true;
  }
  for (size_t i = lo; i < hi; ++i) {
    if (dim(i) != out[i]) return false;
    *period *= out[i];
  }
  for (size_t i = hi; i < out.size(); ++i) *repeat *= out[i];
  return true;
}

// Register of each chain value (by operand id), -1 for operands outside the chain.
struct ChainRegs {
  std::vector<OperandId> values;
  std::vector<int> reg;
  int find(OperandId id) const {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] == id) return reg[i];
    }
    return -1;
  }
};

bool build_arg(OperandRef r, OperandRef source, const ChainRegs& regs, const CompileContext& cc,
               const TensorView& out, ChainArg* a) {
  if (const int reg = regs.find(r.id); reg >= 0) {
    a->kind = ChainArg::kRegister;
    a->reg = reg;
    return true;
  }
  if (source.present() && r.id == source.id) {
    a->kind = ChainArg::kSource;
    return true;
  }
  const TensorView& o = cc.view(r);
  if (o.data_type != DataType::kFloat32) return false;
  a->kind = ChainArg::kBroadcast;
  a->other = r;
  return block_broadcast(o.shape, out.shape, &a->repeat, &a->period);
}

// `op` as a step whose operands are chain values (`regs`), the source input or broadcast
// tensors, writing register `out_reg`. At most one operand may be a broadcast.
bool build_step(const Node& op, OperandRef source, const ChainRegs& regs, int out_reg,
                const CompileContext& cc, const TensorView& out, ChainStep* s) {
  s->out = out_reg;
  if (cpu_unary_args(op, &s->args)) {
    s->unary = true;
    OperandRef in;
    std::visit(
        [&](const auto& p) {
          if constexpr (requires { p.input; }) in = p.input;
        },
        op.params);
    return in.present() && build_arg(in, source, regs, cc, out, &s->a) &&
           s->a.kind != ChainArg::kBroadcast;
  }
  if (!cpu_binary_op(op.kind, &s->op)) return false;
  const auto& p = op.as<BinaryParams>();
  s->unary = false;
  if (!build_arg(p.a, source, regs, cc, out, &s->a)) return false;
  if (!build_arg(p.b, source, regs, cc, out, &s->b)) return false;
  return !(s->a.kind == ChainArg::kBroadcast && s->b.kind == ChainArg::kBroadcast);
}

// out = head + bias (either operand order: float addition commutes) with bias one value per
// column of the output's last axis, written over the head's value: a GEMM adds it as it stores.
const ChainArg* column_bias(const ChainStep& s, const TensorView& out) {
  if (s.unary || s.op != BinaryOpF::kAdd || s.out != 0 || out.shape.empty()) return nullptr;
  const bool a_head = s.a.kind == ChainArg::kRegister && s.a.reg == 0;
  const bool b_head = s.b.kind == ChainArg::kRegister && s.b.reg == 0;
  const ChainArg* other = a_head ? &s.b : b_head ? &s.a : nullptr;
  if (!other || other->kind != ChainArg::kBroadcast || other->repeat != 1) return nullptr;
  return other->period == out.shape.back() ? other : nullptr;
}

bool same_shape(const TensorView& a, const TensorView& b) {
  return a.data_type == b.data_type && a.shape == b.shape;
}

// The input an element-wise head reads as its chain value (same shape as the output), if any,
// such that the head itself runs as the chain's first step: its other operand must broadcast
// into the output as one block (build_step). Otherwise (e.g. x - reduceMax(x, axes=[1]) with
// keepDimensions, a [N,1,H,W] operand in a [N,C,H,W] output) none: the head runs on its own
// element-wise kernel and the steps follow it.
OperandRef chain_source(const Node& node, const CompileContext& cc) {
  const TensorView& out = cc.view(OperandRef{node.outputs[0]});
  UnaryArgs args;
  BinaryOpF op;
  if (cpu_unary_args(node, &args)) {
    OperandRef in;
    std::visit(
        [&](const auto& p) {
          if constexpr (requires { p.input; }) in = p.input;
        },
        node.params);
    if (in.present() && same_shape(cc.view(in), out)) return in;
  } else if (cpu_binary_op(node.kind, &op)) {
    const auto& p = node.as<BinaryParams>();
    for (const OperandRef& in : {p.a, p.b}) {
      ChainStep s;
      if (same_shape(cc.view(in), out) && build_step(node, in, ChainRegs{}, 0, cc, out, &s)) {
        return in;
      }
    }
  }
  return OperandRef{};
}

class FusedKernel final : public Kernel, public OutputSink {
 public:
  FusedKernel(const SimdKernels& simd, std::unique_ptr<Kernel> head, OperandRef source,
              std::vector<ChainStep> steps, int64_t count)
      : simd_(simd),
        head_(std::move(head)),
        source_(source),
        steps_(std::move(steps)),
        count_(count),
        a_ptr_(steps_.size(), nullptr),
        b_ptr_(steps_.size(), nullptr),
        tile_(steps_.size()) {
    in_head_ = head_ && head_->set_output_sink(this);
    // A short period repeated along the chain (NHWC per-channel operands): one contiguous
    // copy of it repeated over a block length, so each block is one SIMD call, not one per C.
    for (size_t k = 0; k < steps_.size(); ++k) {
      const ChainArg* arg = broadcast_arg(steps_[k]);
      if (arg && arg->repeat == 1 && arg->period > 1 && arg->period < kBlock) {
        tile_[k].resize(static_cast<size_t>(arg->period + kBlock));
      }
    }
  }

  Status run(KernelContext& ctx) override {
    // Operand pointers are read per run: dispatch binds user tensors in place.
    src_ = source_.present() ? ctx.in(source_).as<float>() : nullptr;
    for (size_t k = 0; k < steps_.size(); ++k) {
      const ChainStep& s = steps_[k];
      a_ptr_[k] = s.a.kind == ChainArg::kBroadcast ? ctx.in(s.a.other).as<float>() : nullptr;
      b_ptr_[k] =
          !s.unary && s.b.kind == ChainArg::kBroadcast ? ctx.in(s.b.other).as<float>() : nullptr;
      if (!tile_[k].empty()) {
        const float* o = a_ptr_[k] ? a_ptr_[k] : b_ptr_[k];
        const int64_t period = broadcast_arg(s)->period;
        for (size_t i = 0; i < tile_[k].size(); ++i) tile_[k][i] = o[i % period];
      }
    }
    if (head_) WEBNN_RETURN_IF_ERROR(head_->run(ctx));
    if (in_head_ || steps_.empty()) return Status::ok();
    float* y = ctx.out().as<float>();
    parallel_chunks(ctx.pool(), count_, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; b += kBlock) apply(y, b, std::min(kBlock, end - b));
    });
    return Status::ok();
  }

  // Every step over y[begin, begin + n), block by block; chain values that must outlive the
  // next step live in scratch blocks on this thread's stack.
  void apply(float* y, int64_t begin, int64_t n) const override {
    alignas(64) float scratch[kMaxChainSlots][kBlock];
    for (int64_t b = begin; b < begin + n; b += kBlock) {
      const int64_t len = std::min(kBlock, begin + n - b);
      auto block = [&](const ChainArg& a) -> const float* {
        if (a.kind == ChainArg::kSource) return src_ + b;
        return a.reg == 0 ? y + b : scratch[a.reg - 1];
      };
      for (size_t k = 0; k < steps_.size(); ++k) {
        const ChainStep& s = steps_[k];
        float* out = s.out == 0 ? y + b : scratch[s.out - 1];
        if (s.unary) {
          simd_.unary(s.args, block(s.a), out, len);
        } else if (!tile_[k].empty()) {
          const float* o = tile_[k].data() + b % broadcast_arg(s)->period;
          if (s.a.kind == ChainArg::kBroadcast) {
            simd_.binary(s.op, o, 1, block(s.b), 1, out, len);
          } else {
            simd_.binary(s.op, block(s.a), 1, o, 1, out, len);
          }
        } else if (s.a.kind == ChainArg::kBroadcast) {
          apply_broadcast(s, s.a, a_ptr_[k], block(s.b), false, out, b, len);
        } else if (s.b.kind == ChainArg::kBroadcast) {
          apply_broadcast(s, s.b, b_ptr_[k], block(s.a), true, out, b, len);
        } else {
          simd_.binary(s.op, block(s.a), 1, block(s.b), 1, out, len);
        }
      }
    }
  }

 private:
  static const ChainArg* broadcast_arg(const ChainStep& s) {
    if (s.unary) return nullptr;
    if (s.a.kind == ChainArg::kBroadcast) return &s.a;
    if (s.b.kind == ChainArg::kBroadcast) return &s.b;
    return nullptr;
  }

  // out = in op other (in_is_a) or other op in, over chain elements [pos, pos + n), as runs
  // over which `other` is one repeated value (step 0) or contiguous (step 1).
  void apply_broadcast(const ChainStep& s, const ChainArg& arg, const float* other, const float* in,
                       bool in_is_a, float* out, int64_t pos, int64_t n) const {
    for (int64_t i = 0; i < n;) {
      const int64_t g = pos + i;
      int64_t len, step;
      const float* o;
      if (arg.period == 1) {
        len = n - i, step = 0, o = other;
      } else if (arg.repeat == 1) {
        const int64_t off = g % arg.period;
        len = std::min(n - i, arg.period - off), step = 1, o = other + off;
      } else {
        len = std::min(n - i, arg.repeat - g % arg.repeat), step = 0;
        o = other + (g / arg.repeat) % arg.period;
      }
      if (in_is_a) {
        simd_.binary(s.op, in + i, 1, o, step, out + i, len);
      } else {
        simd_.binary(s.op, o, step, in + i, 1, out + i, len);
      }
      i += len;
    }
  }

  const SimdKernels& simd_;
  std::unique_ptr<Kernel> head_;
  OperandRef source_;
  std::vector<ChainStep> steps_;
  int64_t count_;
  bool in_head_ = false;  // the head applies the steps as its output parts finish
  // Per run (one run at a time per plan).
  const float* src_ = nullptr;
  std::vector<const float*> a_ptr_, b_ptr_;
  std::vector<std::vector<float>> tile_;  // per step: its short-period operand, repeated
};

}  // namespace

bool fused_head_is_elementwise(const Node& node, const CompileContext& cc) {
  return chain_source(node, cc).present();
}

std::unique_ptr<Kernel> make_fused_kernel(const Node& node, const CompileContext& cc,
                                          const SimdKernels& simd, std::unique_ptr<Kernel> head) {
  const TensorView& out = cc.view(OperandRef{node.outputs[0]});
  if (out.data_type != DataType::kFloat32) return nullptr;
  ChainRegs regs;
  regs.values = chain_values(node);
  if (!assign_chain_registers(node, &regs.reg)) return nullptr;
  std::vector<ChainStep> steps;
  OperandRef source;
  if (!head) {
    // The head is the chain's first step: it reads its source input and writes register 0.
    source = chain_source(node, cc);
    if (!source.present()) return nullptr;
    ChainStep s;
    if (!build_step(node, source, ChainRegs{}, 0, cc, out, &s)) return nullptr;
    steps.push_back(s);
  }
  for (size_t k = 0; k < node.epilogue.size(); ++k) {
    ChainStep s;
    if (!build_step(node.epilogue[k].op, source, regs, regs.reg[k + 1], cc, out, &s)) {
      return nullptr;
    }
    steps.push_back(s);
  }
  // A GEMM head takes a bias add right after it into its store: one pass over the output less
  // (none for matmul + bias), the same float32 addition.
  if (head && !steps.empty()) {
    const ChainArg* bias = column_bias(steps[0], out);
    if (bias && head->take_column_bias(bias->other)) steps.erase(steps.begin());
  }
  return std::make_unique<FusedKernel>(simd, std::move(head), source, std::move(steps),
                                       static_cast<int64_t>(out.count));
}

}  // namespace webnn
