// lstm, lstmCell, gru, gruCell (float32) on the SIMD matrix-vector product, every option of
// the ops (directions, layouts, activations, reset_after, initial states, return_sequence).
//
// The reference kernel (reference/recurrent.cc) evaluates the spec's decomposition in double
// and rounds each output once. This kernel does the same double operations in the same order
// (gemv_acc_d sums each gate row's products in the reference's order; biases, peepholes and
// gate arithmetic follow it step by step; activations call the same libm functions), so its
// results are bit-identical to the reference's. What it saves is the reference's per-run
// conversion of every weight to double and its scalar dot products: weights are transposed
// once (at build when constant) so that each step is two vector GEMVs over contiguous gate
// rows, and wide steps are split over the pool by gate columns. make_recurrent_kernel (below)
// parses the node once and hands large products with sigmoid gates to the float32 kernel
// instead (recurrent_f32.cc, rule in recurrent_spec.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/recurrent_spec.h"
#include "ops/recurrent_activation.h"

namespace webnn {

namespace {

using Act = RecurrentActivation;

bool parse_acts(const OptStringList& names, std::vector<Act> defaults, std::vector<Act>* out) {
  auto parsed = parse_recurrent_activations(names, std::move(defaults));
  if (parsed) *out = std::move(*parsed);
  return parsed.has_value();
}

// A direction's weights, transposed to [in][gates * hidden] floats: gate row g's weights for
// input k are at k * gh + g, so a step reads contiguous gate columns.
struct PackedDirection {
  std::vector<float> wt, rt;
  std::vector<double> bias, rbias, peephole;  // zeros when absent, as the reference adds 0.0
  bool has_peephole = false;
};

void transpose_into(const float* src, int64_t rows, int64_t cols, std::vector<float>* dst) {
  dst->resize(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = 0; k < cols; ++k) (*dst)[k * rows + i] = src[i * cols + k];
  }
}

void widen_into(const float* src, int64_t n, std::vector<double>* dst) {
  dst->assign(static_cast<size_t>(n), 0.0);
  if (src) {
    for (int64_t i = 0; i < n; ++i) (*dst)[i] = src[i];
  }
}

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const SimdKernels& simd, RecurrentSpec spec) : simd_(simd), s_(std::move(spec)) {}

  // Packs the weights now when all of them are constants (else at every run).
  void prepare(const CompileContext& cc) {
    packed_at_build_ = s_.weights_constant(cc);
    if (packed_at_build_) pack([&](OperandRef ref) { return cc.view(ref).as<float>(); });
  }

  Status run(KernelContext& ctx) override {
    if (!packed_at_build_) pack([&](OperandRef ref) { return ctx.in(ref).as<float>(); });
    const int64_t hs = s_.hidden, state = s_.batch * hs, gh = s_.gates * hs;
    const RecurrentIo io(s_, ctx);
    const float *x = io.x, *h0 = io.h0, *c0 = io.c0;
    float *out_h = io.out_h, *out_c = io.out_c, *out_seq = io.out_seq;
    h_.resize(state);
    c_.resize(state);
    next_h_.resize(state);
    next_c_.resize(state);
    xd_.resize(s_.input);
    xin_.resize(gh);
    rec_.resize(gh);
    gate_.resize(2 * hs);
    for (int64_t dir = 0; dir < s_.dirs; ++dir) {
      const PackedDirection& p = packed_[dir];
      for (int64_t i = 0; i < state; ++i) {
        h_[i] = h0 ? h0[dir * state + i] : 0.0;
        c_[i] = c0 ? c0[dir * state + i] : 0.0;
      }
      const bool reverse = dir == 1 || s_.backward;
      for (int64_t step = 0; step < s_.steps; ++step) {
        const int64_t t = reverse ? s_.steps - 1 - step : step;
        for (int64_t bi = 0; bi < s_.batch; ++bi) {
          const float* xb = x + (t * s_.batch + bi) * s_.input;
          for (int64_t k = 0; k < s_.input; ++k) xd_[k] = xb[k];
          // x W^T + b over every gate row (the reference's input_term).
          std::fill(xin_.begin(), xin_.end(), 0.0);
          gemv(ctx.pool(), p.wt.data(), gh, s_.input, 0, gh, xd_.data(), xin_.data());
          for (int64_t g = 0; g < gh; ++g) xin_[g] = xin_[g] + p.bias[g];
          if (s_.lstm) {
            lstm_row(ctx.pool(), p, bi);
          } else {
            gru_row(ctx.pool(), p, bi);
          }
        }
        h_.swap(next_h_);
        c_.swap(next_c_);
        if (out_seq) {
          float* dst = out_seq + (t * s_.dirs + dir) * state;
          for (int64_t i = 0; i < state; ++i) dst[i] = static_cast<float>(h_[i]);
        }
      }
      for (int64_t i = 0; i < state; ++i) out_h[dir * state + i] = static_cast<float>(h_[i]);
      if (out_c) {
        for (int64_t i = 0; i < state; ++i) out_c[dir * state + i] = static_cast<float>(c_[i]);
      }
    }
    return Status::ok();
  }

 private:
  template <class Data>
  void pack(Data data) {
    const int64_t gh = s_.gates * s_.hidden;
    packed_.resize(s_.dirs);
    const float* w = data(s_.w);
    const float* r = data(s_.r);
    const float* b = s_.b.present() ? data(s_.b) : nullptr;
    const float* rb = s_.rb.present() ? data(s_.rb) : nullptr;
    const float* peep = s_.peephole.present() ? data(s_.peephole) : nullptr;
    for (int64_t d = 0; d < s_.dirs; ++d) {
      PackedDirection& p = packed_[d];
      transpose_into(w + d * gh * s_.input, gh, s_.input, &p.wt);
      transpose_into(r + d * gh * s_.hidden, gh, s_.hidden, &p.rt);
      widen_into(b ? b + d * gh : nullptr, gh, &p.bias);
      widen_into(rb ? rb + d * gh : nullptr, gh, &p.rbias);
      p.has_peephole = peep != nullptr;
      widen_into(peep ? peep + d * 3 * s_.hidden : nullptr, 3 * s_.hidden, &p.peephole);
    }
  }

  // Columns [col, col + n) of y += x^T W (W: k rows of ld floats), split over the pool by
  // column blocks when the product is large enough to pay for the hand-off. Each column's sum
  // is the same however the columns are split.
  void gemv(ThreadPool* pool, const float* w, int64_t ld, int64_t k, int64_t col, int64_t n,
            const double* x, double* y) const {
    constexpr int64_t kColBlock = 64;
    const int64_t blocks = (n + kColBlock - 1) / kColBlock;
    const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, k * kColBlock));
    parallel_chunks(pool, blocks, grain, [&](int64_t b0, int64_t b1) {
      const int64_t j0 = b0 * kColBlock, j1 = std::min(n, b1 * kColBlock);
      simd_.gemv_acc_d(w + col + j0, ld, k, j1 - j0, x, y + col + j0);
    });
  }

  // h W_r^T + rb over gate columns [col, col + n) for the hidden row h (recurrent_term).
  void recurrent_terms(ThreadPool* pool, const PackedDirection& p, const double* h, int64_t col,
                       int64_t n) {
    const int64_t gh = s_.gates * s_.hidden;
    std::fill(rec_.begin() + col, rec_.begin() + col + n, 0.0);
    gemv(pool, p.rt.data(), gh, s_.hidden, col, n, h, rec_.data());
    for (int64_t g = col; g < col + n; ++g) rec_[g] = rec_[g] + p.rbias[g];
  }

  // One batch row of an LSTM step, as reference/recurrent.cc lstm_step.
  void lstm_row(ThreadPool* pool, const PackedDirection& p, int64_t bi) {
    const int64_t hs = s_.hidden;
    const int64_t i_row = 0, o_row = s_.alt_layout ? hs : 3 * hs,
                  f_row = s_.alt_layout ? 2 * hs : hs, g_row = s_.alt_layout ? 3 * hs : 2 * hs;
    const double* hb = h_.data() + bi * hs;
    const double* cb = c_.data() + bi * hs;
    recurrent_terms(pool, p, hb, 0, s_.gates * hs);
    for (int64_t j = 0; j < hs; ++j) {
      auto pre = [&](int64_t row) { return xin_[row + j] + rec_[row + j]; };
      auto peep = [&](int64_t slot) {
        return p.has_peephole ? p.peephole[slot * hs + j] * cb[j] : 0;
      };
      const double i = apply_recurrent_activation(s_.acts[0], pre(i_row) + peep(0));
      const double f = apply_recurrent_activation(s_.acts[0], pre(f_row) + peep(2));
      const double g = apply_recurrent_activation(s_.acts[1], pre(g_row));
      const double o = apply_recurrent_activation(s_.acts[0], pre(o_row) + peep(1));
      const double cell = f * cb[j] + i * g;
      next_c_[bi * hs + j] = cell;
      next_h_[bi * hs + j] = o * apply_recurrent_activation(s_.acts[2], cell);
    }
  }

  // One batch row of a GRU step, as reference/recurrent.cc gru_step.
  void gru_row(ThreadPool* pool, const PackedDirection& p, int64_t bi) {
    const int64_t hs = s_.hidden;
    const int64_t z_row = s_.alt_layout ? 0 : hs, r_row = s_.alt_layout ? hs : 0, n_row = 2 * hs;
    const double* hb = h_.data() + bi * hs;
    // reset_after: r multiplies the whole recurrent term, so all three gates read h; else the
    // new-gate term reads r * h, known only after the z and r gates.
    recurrent_terms(pool, p, hb, 0, s_.reset_after ? 3 * hs : 2 * hs);
    double* z = gate_.data();
    double* rh = gate_.data() + hs;
    std::vector<double>& r = rgate_;
    r.resize(hs);
    for (int64_t j = 0; j < hs; ++j) {
      z[j] = apply_recurrent_activation(s_.acts[0], xin_[z_row + j] + rec_[z_row + j]);
      r[j] = apply_recurrent_activation(s_.acts[0], xin_[r_row + j] + rec_[r_row + j]);
      rh[j] = r[j] * hb[j];
    }
    if (!s_.reset_after) recurrent_terms(pool, p, rh, n_row, hs);
    for (int64_t j = 0; j < hs; ++j) {
      double n = xin_[n_row + j];
      if (s_.reset_after) {
        n += r[j] * rec_[n_row + j];
      } else {
        n += rec_[n_row + j];
      }
      n = apply_recurrent_activation(s_.acts[1], n);
      next_h_[bi * hs + j] = (1.0 - z[j]) * n + z[j] * hb[j];
    }
  }

  const SimdKernels& simd_;
  RecurrentSpec s_;
  bool packed_at_build_ = false;
  std::vector<PackedDirection> packed_;
  // Per-run scratch (a kernel runs on one dispatch at a time).
  std::vector<double> h_, c_, next_h_, next_c_, xd_, xin_, rec_, gate_, rgate_;
};

bool all_float32(const CompileContext& cc, std::initializer_list<OperandRef> refs) {
  for (OperandRef r : refs) {
    if (r.present() && cc.view(r).data_type != DataType::kFloat32) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<Kernel> make_recurrent_kernel(const Node& node, const CompileContext& cc,
                                              const SimdKernels& simd) {
  RecurrentSpec s;
  bool ok = false;
  switch (node.kind) {
    case OpKind::kLstm: {
      const auto& p = node.as<LstmParams>();
      s.lstm = true;
      s.gates = 4;
      s.x = p.input, s.w = p.weight, s.r = p.recurrent_weight, s.b = p.bias;
      s.rb = p.recurrent_bias, s.peephole = p.peephole_weight;
      s.h0 = p.initial_hidden_state, s.c0 = p.initial_cell_state;
      s.hidden = p.hidden_size;
      s.dirs = p.direction == "both" ? 2 : 1;
      s.backward = p.direction == "backward";
      s.alt_layout = p.layout == "iofg";
      s.return_sequence = p.return_sequence;
      ok = parse_acts(p.activations, {Act::kSigmoid, Act::kTanh, Act::kTanh}, &s.acts);
      break;
    }
    case OpKind::kGru: {
      const auto& p = node.as<GruParams>();
      s.lstm = false;
      s.gates = 3;
      s.x = p.input, s.w = p.weight, s.r = p.recurrent_weight, s.b = p.bias;
      s.rb = p.recurrent_bias, s.h0 = p.initial_hidden_state;
      s.hidden = p.hidden_size;
      s.dirs = p.direction == "both" ? 2 : 1;
      s.backward = p.direction == "backward";
      s.alt_layout = p.layout == "zrn";
      s.reset_after = p.reset_after;
      s.return_sequence = p.return_sequence;
      ok = parse_acts(p.activations, {Act::kSigmoid, Act::kTanh}, &s.acts);
      break;
    }
    case OpKind::kLstmCell: {
      const auto& p = node.as<LstmCellParams>();
      s.lstm = true;
      s.cell_op = true;
      s.gates = 4;
      s.x = p.input, s.w = p.weight, s.r = p.recurrent_weight, s.b = p.bias;
      s.rb = p.recurrent_bias, s.peephole = p.peephole_weight;
      s.h0 = p.hidden_state, s.c0 = p.cell_state;
      s.hidden = p.hidden_size;
      s.alt_layout = p.layout == "iofg";
      ok = parse_acts(p.activations, {Act::kSigmoid, Act::kTanh, Act::kTanh}, &s.acts);
      break;
    }
    case OpKind::kGruCell: {
      const auto& p = node.as<GruCellParams>();
      s.lstm = false;
      s.cell_op = true;
      s.gates = 3;
      s.x = p.input, s.w = p.weight, s.r = p.recurrent_weight, s.b = p.bias;
      s.rb = p.recurrent_bias, s.h0 = p.hidden_state;
      s.hidden = p.hidden_size;
      s.alt_layout = p.layout == "zrn";
      s.reset_after = p.reset_after;
      ok = parse_acts(p.activations, {Act::kSigmoid, Act::kTanh}, &s.acts);
      break;
    }
    default:
      return nullptr;
  }
  // Anything unexpected (other types, names, shapes) stays on the reference kernel.
  if (!ok || !all_float32(cc, {s.x, s.w, s.r, s.b, s.rb, s.peephole, s.h0, s.c0})) return nullptr;
  for (OperandId id : node.outputs) {
    if (cc.view(OperandRef{id}).data_type != DataType::kFloat32) return nullptr;
  }
  const TensorView& x = cc.view(s.x);
  if (s.cell_op) {
    if (x.rank() != 2) return nullptr;
    s.steps = 1, s.batch = x.shape[0], s.input = x.shape[1];
  } else {
    if (x.rank() != 3) return nullptr;
    s.steps = x.shape[0], s.batch = x.shape[1], s.input = x.shape[2];
  }
  const int64_t gh = s.gates * s.hidden;
  if (s.hidden <= 0 || cc.view(s.w).count != static_cast<uint64_t>(s.dirs * gh * s.input) ||
      cc.view(s.r).count != static_cast<uint64_t>(s.dirs * gh * s.hidden)) {
    return nullptr;
  }
  if (recurrent_uses_f32(s)) return make_recurrent_f32_kernel(simd, std::move(s), cc);
  auto k = std::make_unique<RecurrentKernel>(simd, std::move(s));
  k->prepare(cc);
  return k;
}

}  // namespace webnn
