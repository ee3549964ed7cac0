// Fused epilogues and element-wise chains (graph/passes/epilogue_fusion.cc): the node's head op
// writes its output, then every step runs over it block by block while the block is in cache —
// inside the head kernel when it can (Kernel::set_output_sink: NHWC convolutions apply it per
// finished GEMM block or output row), else in one pass after it.
// Each step calls the same SIMD function, with the same operand order, as the stand-alone
// element-wise kernel would (elementwise.cc), so the fused graph is bit-identical to the
// unfused one.
#include <algorithm>
#include <cstring>
#include <optional>

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
    in_head_ = head_ && !steps_.empty() && head_->set_output_sink(this);
    // A short period repeated along the chain (NHWC per-channel operands): one contiguous
    // copy of it repeated over a block length, so each block is one SIMD call, not one per C.
    for (size_t k = 0; k < steps_.size(); ++k) {
      const ChainArg* arg = broadcast_arg(steps_[k]);
      if (arg && arg->repeat == 1 && arg->period > 1 && arg->period < kBlock) {
        // (No longer than the output needs: the copy is refreshed every run.)
        tile_[k].resize(static_cast<size_t>(arg->period + std::min(kBlock, count_)));
      }
    }
    group_steps();
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
        // The period, then the filled prefix doubled (a modulo per float cost a tiny graph
        // more than its arithmetic).
        float* tile = tile_[k].data();
        const size_t size = tile_[k].size(), first = std::min(size, static_cast<size_t>(period));
        std::memcpy(tile, o, first * sizeof(float));
        for (size_t done = first; done < size;) {
          const size_t n = std::min(done, size - done);
          std::memcpy(tile + done, tile, n * sizeof(float));
          done += n;
        }
      }
    }
    for (Group& g : groups_) {
      if (g.kind == Group::kHardSwish || g.kind == Group::kHardSwishAffine) {
        g.hs.add = *constant_ptr(g.k);
        g.hs.div = *constant_ptr(g.k + 3);
      } else if (g.kind == Group::kErfGelu) {
        g.eg.c1 = *constant_ptr(g.c1_k);
        g.eg.c2 = *constant_ptr(g.c2_k);
        g.eg.c3 = *constant_ptr(g.c3_k);
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
      auto reg_block = [&](int reg) { return reg == 0 ? y + b : scratch[reg - 1]; };
      for (const Group& g : groups_) {
        if (g.kind == Group::kHardSwish) {
          simd_.hard_swish_chain(g.hs, reg_block(g.in_reg), reg_block(g.out_reg), len);
          continue;
        }
        if (g.kind == Group::kErfGelu) {
          const float* x = g.from_source ? src_ + b : reg_block(g.in_reg);
          simd_.erf_gelu_chain(g.eg, x, reg_block(g.out_reg), len);
          continue;
        }
        if (g.kind == Group::kAffine || g.kind == Group::kHardSwishAffine) {
          const size_t ka = g.kind == Group::kAffine ? g.k : g.k + 4;
          AffineChainArgs a = g.af;
          a.s = operand_block(ka, b);
          a.b = operand_block(ka + 1, b);
          if (g.kind == Group::kAffine) {
            simd_.affine_chain(a, reg_block(g.in_reg), reg_block(g.out_reg), len);
          } else {
            simd_.hard_swish_affine_chain(g.hs, a, reg_block(g.in_reg), reg_block(g.out_reg), len);
          }
          continue;
        }
        const size_t k = g.k;
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
  // Runs of steps that chain.inc computes in one pass: `k` is the first step's index.
  struct Group {
    enum Kind : uint8_t { kStep, kHardSwish, kAffine, kHardSwishAffine, kErfGelu } kind = kStep;
    size_t k = 0;
    int in_reg = 0, out_reg = 0;
    HardSwishChainArgs hs;  // the scalars are read per run
    AffineChainArgs af;     // the operand pointers are set per block
    ErfGeluChainArgs eg;    // the scalars are read per run, from steps c1_k, c2_k, c3_k
    size_t c1_k = 0, c2_k = 0, c3_k = 0;
    bool from_source = false;  // x is the element-wise head's source input, not a register
  };

  static bool is_reg(const ChainArg& a) { return a.kind == ChainArg::kRegister; }
  static bool is_scalar(const ChainArg& a) {
    return a.kind == ChainArg::kBroadcast && a.period == 1;
  }
  // A broadcast operand of step k that is a scalar or its repeated short-period copy (tile_).
  bool is_block_constant(size_t k, const ChainArg& a) const {
    return is_scalar(a) || (a.kind == ChainArg::kBroadcast && !tile_[k].empty());
  }

  // Whether register `reg`'s value after step from - 1 is read by a later step (or is the
  // output: register 0 at the end).
  bool read_later(int reg, size_t from) const {
    for (size_t j = from; j < steps_.size(); ++j) {
      const ChainStep& s = steps_[j];
      if (is_reg(s.a) && s.a.reg == reg) return true;
      if (!s.unary && is_reg(s.b) && s.b.reg == reg) return true;
      if (s.out == reg) return false;
    }
    return reg == 0;
  }

  // Steps k..k+3: t = x + c (either order), t1 = clamp(t), u = x * t1 (either order), v = u / d,
  // c and d scalars, only v read after them.
  bool match_hard_swish(size_t k, Group* g) const {
    if (k + 3 >= steps_.size()) return false;
    const ChainStep &s0 = steps_[k], &s1 = steps_[k + 1], &s2 = steps_[k + 2], &s3 = steps_[k + 3];
    if (s0.unary || s0.op != BinaryOpF::kAdd) return false;
    int x;
    if (is_reg(s0.a) && is_scalar(s0.b)) {
      x = s0.a.reg, g->hs.add_first = false;
    } else if (is_scalar(s0.a) && is_reg(s0.b)) {
      x = s0.b.reg, g->hs.add_first = true;
    } else {
      return false;
    }
    const int t = s0.out;
    if (t == x || !s1.unary || s1.args.op != UnaryOpF::kClamp || !is_reg(s1.a) || s1.a.reg != t) {
      return false;
    }
    const int t1 = s1.out;
    if (t1 == x || s2.unary || s2.op != BinaryOpF::kMul || !is_reg(s2.a) || !is_reg(s2.b)) {
      return false;
    }
    if (s2.a.reg == x && s2.b.reg == t1) {
      g->hs.clamped_first = false;
    } else if (s2.a.reg == t1 && s2.b.reg == x) {
      g->hs.clamped_first = true;
    } else {
      return false;
    }
    const int u = s2.out;
    if (s3.unary || s3.op != BinaryOpF::kDiv || !is_reg(s3.a) || s3.a.reg != u ||
        !is_scalar(s3.b)) {
      return false;
    }
    const int v = s3.out;
    for (int r : {t, t1, u}) {
      if (r != v && read_later(r, k + 4)) return false;
    }
    g->kind = Group::kHardSwish;
    g->k = k;
    g->in_reg = x;
    g->out_reg = v;
    g->hs.clamp = s1.args;
    return true;
  }

  // Steps k, k+1: m = x * s (either order) or x / s, z = m + b or m - b (either order), s and
  // b scalars or short-period constants, only z read after them.
  bool match_affine(size_t k, Group* g) const {
    if (k + 1 >= steps_.size()) return false;
    const ChainStep &s0 = steps_[k], &s1 = steps_[k + 1];
    if (s0.unary || (s0.op != BinaryOpF::kMul && s0.op != BinaryOpF::kDiv) || s1.unary) {
      return false;
    }
    if (s1.op != BinaryOpF::kAdd && s1.op != BinaryOpF::kSub) return false;
    int x;
    if (is_reg(s0.a) && is_block_constant(k, s0.b)) {
      x = s0.a.reg, g->af.s_first = false;
    } else if (s0.op == BinaryOpF::kMul && is_block_constant(k, s0.a) && is_reg(s0.b)) {
      x = s0.b.reg, g->af.s_first = true;
    } else {
      return false;
    }
    const int m = s0.out;
    if (is_reg(s1.a) && s1.a.reg == m && is_block_constant(k + 1, s1.b)) {
      g->af.b_first = false;
    } else if (is_block_constant(k + 1, s1.a) && is_reg(s1.b) && s1.b.reg == m) {
      g->af.b_first = true;
    } else {
      return false;
    }
    const int z = s1.out;
    if (m != z && read_later(m, k + 2)) return false;
    g->kind = Group::kAffine;
    g->k = k;
    g->in_reg = x;
    g->out_reg = z;
    g->af.scale_op = s0.op;
    g->af.op = s1.op;
    g->af.s_step = tile_[k].empty() ? 0 : 1;
    g->af.b_step = tile_[k + 1].empty() ? 0 : 1;
    return true;
  }

  // Steps k..k+4 in any order that computes gelu's erf form (ErfGeluChainArgs) from one
  // register x with scalar constants: t = x / c1 or x * c1, e = erf(t), f = e + c2, and two
  // muls combining x, f and c3; only the result is read after them.
  bool match_erf_gelu(size_t k, Group* g) const {
    constexpr size_t kSteps = 5;
    if (k + kSteps > steps_.size()) return false;
    // Symbolic values: 0..4 the steps' results, kX the value a register holds before the
    // group (one register only may be read that way), kScalar a scalar constant.
    constexpr int kX = 100, kScalar = -1, kOther = -2;
    int regs[kMaxChainSlots + 1];
    for (int& r : regs) r = kOther;
    int x_reg = -1;
    bool written[kMaxChainSlots + 1] = {};
    int a[kSteps], b[kSteps];
    bool from_source = false;
    auto value = [&](const ChainArg& arg) {
      if (is_scalar(arg)) return kScalar;
      if (arg.kind == ChainArg::kSource) {
        if (x_reg >= 0) return kOther;
        from_source = true;
        return kX;
      }
      if (!is_reg(arg)) return kOther;
      if (!written[arg.reg]) {
        if (from_source || (x_reg >= 0 && x_reg != arg.reg)) return kOther;
        x_reg = arg.reg;
        return kX;
      }
      return regs[arg.reg];
    };
    for (size_t j = 0; j < kSteps; ++j) {
      const ChainStep& s = steps_[k + j];
      a[j] = value(s.a);
      b[j] = s.unary ? kOther : value(s.b);
      if (a[j] == kOther || (!s.unary && b[j] == kOther)) return false;
      regs[s.out] = static_cast<int>(j);
      written[s.out] = true;
    }
    auto op_is = [&](size_t j, BinaryOpF op) {
      return !steps_[k + j].unary && steps_[k + j].op == op;
    };
    // Step j's operands are {p, q} in either order; *swap: they are (q, p).
    auto reads = [&](size_t j, int p, int q, bool* swap) {
      if (a[j] == p && b[j] == q) return *swap = false, true;
      if (a[j] == q && b[j] == p) return *swap = true, true;
      return false;
    };
    int e = -1;
    for (size_t j = 0; j < kSteps; ++j) {
      if (steps_[k + j].unary && steps_[k + j].args.op == UnaryOpF::kErf) e = static_cast<int>(j);
    }
    if (e < 0) return false;
    const int pre = a[e];
    if (pre < 0 || pre >= static_cast<int>(kSteps)) return false;
    ErfGeluChainArgs& p = g->eg;
    if (op_is(pre, BinaryOpF::kDiv) && a[pre] == kX && b[pre] == kScalar) {
      p.pre_op = BinaryOpF::kDiv;
      p.pre_swap = false;
    } else if (op_is(pre, BinaryOpF::kMul) && reads(pre, kX, kScalar, &p.pre_swap)) {
      p.pre_op = BinaryOpF::kMul;
    } else {
      return false;
    }
    int f = -1, m1 = -1, m2 = -1;
    for (size_t j = 0; j < kSteps; ++j) {
      if (static_cast<int>(j) == e || static_cast<int>(j) == pre) continue;
      if (op_is(j, BinaryOpF::kAdd) && reads(j, e, kScalar, &p.add_swap)) {
        f = static_cast<int>(j);
      } else if (!op_is(j, BinaryOpF::kMul)) {
        return false;
      }
    }
    if (f < 0) return false;
    for (size_t j = 0; j < kSteps; ++j) {
      const int jj = static_cast<int>(j);
      if (jj == e || jj == pre || jj == f) continue;
      (m1 < 0 ? m1 : m2) = jj;
    }
    if (m2 < 0 || !op_is(m1, BinaryOpF::kMul) || !op_is(m2, BinaryOpF::kMul)) return false;
    if (a[m1] == m2 || b[m1] == m2) std::swap(m1, m2);  // m2 reads m1
    if (reads(m1, kX, f, &p.m1_swap) && reads(m2, m1, kScalar, &p.m2_swap)) {
      p.form = 0;
    } else if (reads(m1, kX, kScalar, &p.m1_swap) && reads(m2, m1, f, &p.m2_swap)) {
      p.form = 1;
    } else if (reads(m1, f, kScalar, &p.m1_swap) && reads(m2, kX, m1, &p.m2_swap)) {
      p.form = 2;
    } else {
      return false;
    }
    // The result must still be in a register, and no register left holding another value of
    // the group (or x overwritten) may be read later.
    int out_reg = -1;
    for (int r = 0; r <= kMaxChainSlots; ++r) {
      if (!written[r]) continue;
      if (regs[r] == m2) {
        out_reg = r;
      } else if (read_later(r, k + kSteps)) {
        return false;
      }
    }
    if (out_reg < 0 || (x_reg < 0 && !from_source)) return false;
    g->kind = Group::kErfGelu;
    g->from_source = from_source;
    g->k = k;
    g->in_reg = x_reg;
    g->out_reg = out_reg;
    g->c1_k = k + pre;
    g->c2_k = k + f;
    g->c3_k = k + (p.form == 2 ? m1 : p.form == 1 ? m1 : m2);
    return true;
  }

  void group_steps() {
    for (size_t k = 0; k < steps_.size();) {
      Group g;
      Group a;
      if (match_erf_gelu(k, &g)) {
        k += 5;
      } else if (match_hard_swish(k, &g) && match_affine(k + 4, &a) && a.in_reg == g.out_reg &&
                 (a.out_reg == g.out_reg || !read_later(g.out_reg, k + 6))) {
        // The affine step reads the hardSwish result and nothing else does.
        g.kind = Group::kHardSwishAffine;
        g.out_reg = a.out_reg;
        g.af = a.af;
        k += 6;
      } else if (match_hard_swish(k, &g)) {
        k += 4;
      } else if (match_affine(k, &g)) {
        k += 2;
      } else {
        g.k = k++;
      }
      groups_.push_back(g);
    }
  }

  // The scalar operand of step k (this run's tensor).
  const float* constant_ptr(size_t k) const {
    return steps_[k].a.kind == ChainArg::kBroadcast ? a_ptr_[k] : b_ptr_[k];
  }

  // Step k's constant operand over the block at chain element b: its repeated copy, or the
  // scalar.
  const float* operand_block(size_t k, int64_t b) const {
    if (tile_[k].empty()) return constant_ptr(k);
    return tile_[k].data() + b % broadcast_arg(steps_[k])->period;
  }

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
  std::vector<Group> groups_;             // the steps, some runs of them fused (chain.inc)
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
  // A first step that rewrites the head's value in place with relu or hardSwish (WebNN
  // coefficients) runs in the head's stores when it can (the GEMM micro-kernel), with the
  // same float32 function: one pass less over the output.
  if (head && !steps.empty()) {
    const ChainStep& s = steps[0];
    const bool in_place = s.unary && s.a.kind == ChainArg::kRegister && s.a.reg == 0 && s.out == 0;
    std::optional<Kernel::Activation> act;
    if (in_place && s.args.op == UnaryOpF::kRelu) act = Kernel::Activation::kRelu;
    if (in_place && s.args.webnn_hard_swish() && simd.hard_swish_float32) {
      act = Kernel::Activation::kHardSwish;
    }
    if (act && head->take_activation(*act)) steps.erase(steps.begin());
  }
  return std::make_unique<FusedKernel>(simd, std::move(head), source, std::move(steps),
                                       static_cast<int64_t>(out.count));
}

}  // namespace webnn
