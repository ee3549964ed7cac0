// Fused epilogues and element-wise chains (graph/passes/epilogue_fusion.cc): the node's head op
// writes its output, then every step runs over it block by block while the block is in cache —
// inside the head kernel when it can (Kernel::set_output_sink: NHWC convolutions apply it per
// finished GEMM block or output row), else in one pass after it.
// Each step calls the same SIMD function, with the same operand order, as the stand-alone
// element-wise kernel would (elementwise.cc), so the fused graph is bit-identical to the
// unfused one.
#include <algorithm>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

// Elements per task, and per block that all steps process before moving on (fits L1).
constexpr int64_t kGrain = 16384;
constexpr int64_t kBlock = 2048;

struct ChainStep {
  bool unary = true;
  UnaryArgs args;
  BinaryOpF op = BinaryOpF::kAdd;
  bool a_chain = true, b_chain = false;  // which binary operands carry the chain value
  OperandRef other;                      // the operand that does not (binary)
  // Element i of the chain meets element (i / repeat) % period of `other`.
  int64_t repeat = 1, period = 1;
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

bool build_step(const Node& op, OperandId chain, const CompileContext& cc, const TensorView& out,
                ChainStep* s) {
  if (cpu_unary_args(op, &s->args)) {
    s->unary = true;
    return true;
  }
  if (!cpu_binary_op(op.kind, &s->op)) return false;
  const auto& p = op.as<BinaryParams>();
  s->unary = false;
  s->a_chain = p.a.id == chain;
  s->b_chain = p.b.id == chain;
  if (s->a_chain && s->b_chain) return true;
  s->other = s->a_chain ? p.b : p.a;
  const TensorView& o = cc.view(s->other);
  if (o.data_type != DataType::kFloat32) return false;
  return block_broadcast(o.shape, out.shape, &s->repeat, &s->period);
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
      if (same_shape(cc.view(in), out) && build_step(node, in.id, cc, out, &s)) return in;
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
        others_(steps_.size(), nullptr) {
    in_head_ = head_ && head_->set_output_sink(this);
  }

  Status run(KernelContext& ctx) override {
    // Operand pointers are read per run: dispatch binds user tensors in place.
    src_ = source_.present() ? ctx.in(source_).as<float>() : nullptr;
    for (size_t k = 0; k < steps_.size(); ++k) {
      others_[k] = steps_[k].unary || !steps_[k].other.present()
                       ? nullptr
                       : ctx.in(steps_[k].other).as<float>();
    }
    if (head_) WEBNN_RETURN_IF_ERROR(head_->run(ctx));
    if (in_head_) return Status::ok();
    float* y = ctx.out().as<float>();
    parallel_chunks(ctx.pool(), count_, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; b += kBlock) apply(y, b, std::min(kBlock, end - b));
    });
    return Status::ok();
  }

  // Every step over y[begin, begin + n) (the chain starts from the source input, if any).
  void apply(float* y, int64_t begin, int64_t n) const override {
    for (int64_t b = begin; b < begin + n; b += kBlock) {
      const int64_t len = std::min(kBlock, begin + n - b);
      for (size_t k = 0; k < steps_.size(); ++k) {
        const float* in = (k == 0 && src_ ? src_ : y) + b;
        apply_step(steps_[k], others_[k], in, y + b, b, len);
      }
    }
  }

 private:
  void apply_step(const ChainStep& s, const float* other, const float* in, float* out, int64_t pos,
                  int64_t n) const {
    if (s.unary) {
      simd_.unary(s.args, in, out, n);
      return;
    }
    if (s.a_chain && s.b_chain) {
      simd_.binary(s.op, in, 1, in, 1, out, n);
      return;
    }
    // Runs over which `other` is one repeated value (step 0) or contiguous (step 1).
    for (int64_t i = 0; i < n;) {
      const int64_t g = pos + i;
      int64_t len, step;
      const float* o;
      if (s.period == 1) {
        len = n - i, step = 0, o = other;
      } else if (s.repeat == 1) {
        const int64_t off = g % s.period;
        len = std::min(n - i, s.period - off), step = 1, o = other + off;
      } else {
        len = std::min(n - i, s.repeat - g % s.repeat), step = 0;
        o = other + (g / s.repeat) % s.period;
      }
      if (s.a_chain) {
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
  std::vector<const float*> others_;
};

}  // namespace

bool fused_head_is_elementwise(const Node& node, const CompileContext& cc) {
  return chain_source(node, cc).present();
}

std::unique_ptr<Kernel> make_fused_kernel(const Node& node, const CompileContext& cc,
                                          const SimdKernels& simd, std::unique_ptr<Kernel> head) {
  const TensorView& out = cc.view(OperandRef{node.outputs[0]});
  if (out.data_type != DataType::kFloat32) return nullptr;
  std::vector<ChainStep> steps;
  OperandRef source;
  if (!head) {
    source = chain_source(node, cc);
    if (!source.present()) return nullptr;
    ChainStep s;
    if (!build_step(node, source.id, cc, out, &s)) return nullptr;
    steps.push_back(s);
  }
  for (const Node::Step& e : node.epilogue) {
    ChainStep s;
    if (!build_step(e.op, e.chain, cc, out, &s)) return nullptr;
    steps.push_back(s);
  }
  return std::make_unique<FusedKernel>(simd, std::move(head), source, std::move(steps),
                                       static_cast<int64_t>(out.count));
}

}  // namespace webnn
