// Reference kernels for the recurrent family: gru, gruCell, lstm, lstmCell (spec/ops.md 3.12).
//
// The WebNN spec defines these ops as decompositions into matmul/add/mul/activations. Here a
// whole op runs in double and every output is rounded once to its type, so the result is the
// decomposition's exact value up to that single rounding.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/reference/kernels.h"
#include "ops/recurrent_activation.h"

namespace webnn {

namespace {

using Act = RecurrentActivation;

// Infer has checked the names and their count.
std::vector<Act> activations_or(const OptStringList& names, std::vector<Act> defaults) {
  return parse_recurrent_activations(names, std::move(defaults)).value();
}

// The operand's values as doubles; an absent operand gives an empty vector.
std::vector<double> load(const KernelContext& ctx, OperandRef r) {
  if (!r.present()) return {};
  const TensorView& v = ctx.in(r);
  std::vector<double> out(v.count);
  dispatch_float(v.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* p = v.as<T>();
    for (uint64_t i = 0; i < v.count; ++i) out[i] = to_double(p[i]);
  });
  return out;
}

void store(TensorView& out, const std::vector<double>& values) {
  dispatch_float(out.data_type, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.as<T>();
    for (uint64_t i = 0; i < out.count; ++i) p[i] = static_cast<T>(values[i]);
  });
}

// Weights of one direction: rows of `w` are [gates * H, input_size], rows of `r` are
// [gates * H, H]; biases are null when absent.
struct CellWeights {
  const double* w;
  const double* r;
  const double* b;
  const double* rb;
  const double* peephole;  // lstm only: [3H] for the i, o, f gates
};

const double* part(const std::vector<double>& v, int64_t offset) {
  return v.empty() ? nullptr : v.data() + offset;
}

// sum_k a[k] * row[k].
double dot(const double* a, const double* row, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += a[k] * row[k];
  return s;
}

struct CellDims {
  int64_t batch, input_size, hidden;
};

// x·W[g]ᵀ + b[g] for gate row `g` (absolute row index into the weight).
double input_term(const CellDims& d, const CellWeights& wt, const double* x, int64_t g) {
  return dot(x, wt.w + g * d.input_size, d.input_size) + (wt.b ? wt.b[g] : 0.0);
}

double recurrent_term(const CellDims& d, const CellWeights& wt, const double* h, int64_t g) {
  return dot(h, wt.r + g * d.hidden, d.hidden) + (wt.rb ? wt.rb[g] : 0.0);
}

// One GRU step: h ([batch, H]) is replaced by the new hidden state.
void gru_step(const CellDims& d, const CellWeights& wt, const double* x, bool zrn, bool reset_after,
              const std::vector<Act>& act, std::vector<double>& h) {
  const int64_t hs = d.hidden;
  const int64_t z_row = zrn ? 0 : hs, r_row = zrn ? hs : 0, n_row = 2 * hs;
  std::vector<double> next(h.size()), z(hs), r(hs), rh(hs);
  for (int64_t bi = 0; bi < d.batch; ++bi) {
    const double* xb = x + bi * d.input_size;
    const double* hb = h.data() + bi * hs;
    for (int64_t j = 0; j < hs; ++j) {
      z[j] = apply_recurrent_activation(
          act[0], input_term(d, wt, xb, z_row + j) + recurrent_term(d, wt, hb, z_row + j));
      r[j] = apply_recurrent_activation(
          act[0], input_term(d, wt, xb, r_row + j) + recurrent_term(d, wt, hb, r_row + j));
      rh[j] = r[j] * hb[j];
    }
    for (int64_t j = 0; j < hs; ++j) {
      const int64_t g = n_row + j;
      double n = input_term(d, wt, xb, g);
      if (reset_after) {
        n += r[j] * recurrent_term(d, wt, hb, g);
      } else {
        n += recurrent_term(d, wt, rh.data(), g);
      }
      n = apply_recurrent_activation(act[1], n);
      next[bi * hs + j] = (1.0 - z[j]) * n + z[j] * hb[j];
    }
  }
  h.swap(next);
}

// One LSTM step: h and c ([batch, H]) are replaced by the new hidden and cell states.
// Peepholes see the incoming cell state for all three gates, as in the spec's decomposition.
void lstm_step(const CellDims& d, const CellWeights& wt, const double* x, bool iofg,
               const std::vector<Act>& act, std::vector<double>& h, std::vector<double>& c) {
  const int64_t hs = d.hidden;
  const int64_t i_row = 0, o_row = iofg ? hs : 3 * hs, f_row = iofg ? 2 * hs : hs,
                g_row = iofg ? 3 * hs : 2 * hs;
  std::vector<double> next_h(h.size()), next_c(c.size());
  for (int64_t bi = 0; bi < d.batch; ++bi) {
    const double* xb = x + bi * d.input_size;
    const double* hb = h.data() + bi * hs;
    const double* cb = c.data() + bi * hs;
    for (int64_t j = 0; j < hs; ++j) {
      auto pre = [&](int64_t row) {
        return input_term(d, wt, xb, row + j) + recurrent_term(d, wt, hb, row + j);
      };
      auto peep = [&](int64_t slot) {
        return wt.peephole ? wt.peephole[slot * hs + j] * cb[j] : 0;
      };
      const double i = apply_recurrent_activation(act[0], pre(i_row) + peep(0));
      const double f = apply_recurrent_activation(act[0], pre(f_row) + peep(2));
      const double g = apply_recurrent_activation(act[1], pre(g_row));
      const double o = apply_recurrent_activation(act[0], pre(o_row) + peep(1));
      const double cell = f * cb[j] + i * g;
      next_c[bi * hs + j] = cell;
      next_h[bi * hs + j] = o * apply_recurrent_activation(act[2], cell);
    }
  }
  h.swap(next_h);
  c.swap(next_c);
}

// Copies `src` into `dst` at element offset `offset`.
void put(std::vector<double>& dst, int64_t offset, const std::vector<double>& src) {
  std::copy(src.begin(), src.end(), dst.begin() + offset);
}

std::vector<double> slab(const std::vector<double>& v, int64_t offset, int64_t size) {
  if (v.empty()) return std::vector<double>(size, 0.0);
  return std::vector<double>(v.begin() + offset, v.begin() + offset + size);
}

Status run_gru(KernelContext& ctx) {
  const auto& p = ctx.params<GruParams>();
  const TensorView& input = ctx.in(p.input);
  const int64_t steps = input.shape[0], hs = p.hidden_size;
  const CellDims d{input.shape[1], input.shape[2], hs};
  const int64_t dirs = p.direction == "both" ? 2 : 1, gates = 3 * hs, state = d.batch * hs;
  const std::vector<double> x = load(ctx, p.input), w = load(ctx, p.weight),
                            r = load(ctx, p.recurrent_weight), b = load(ctx, p.bias),
                            rb = load(ctx, p.recurrent_bias),
                            h0 = load(ctx, p.initial_hidden_state);
  const std::vector<Act> act = activations_or(p.activations, {Act::kSigmoid, Act::kTanh});
  std::vector<double> hidden(dirs * state), sequence(p.return_sequence ? steps * dirs * state : 0);
  for (int64_t dir = 0; dir < dirs; ++dir) {
    const CellWeights wt{w.data() + dir * gates * d.input_size, r.data() + dir * gates * hs,
                         part(b, dir * gates), part(rb, dir * gates), nullptr};
    std::vector<double> h = slab(h0, dir * state, state);
    const bool reverse = dir == 1 || p.direction == "backward";
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t t = reverse ? steps - 1 - step : step;
      gru_step(d, wt, x.data() + t * d.batch * d.input_size, p.layout == "zrn", p.reset_after, act,
               h);
      // The sequence is indexed by input time, so a backward pass fills it from the end.
      if (p.return_sequence) put(sequence, (t * dirs + dir) * state, h);
    }
    put(hidden, dir * state, h);
  }
  store(ctx.out(0), hidden);
  if (p.return_sequence) store(ctx.out(1), sequence);
  return Status::ok();
}

Status run_gru_cell(KernelContext& ctx) {
  const auto& p = ctx.params<GruCellParams>();
  const TensorView& input = ctx.in(p.input);
  const CellDims d{input.shape[0], input.shape[1], p.hidden_size};
  const std::vector<double> x = load(ctx, p.input), w = load(ctx, p.weight),
                            r = load(ctx, p.recurrent_weight), b = load(ctx, p.bias),
                            rb = load(ctx, p.recurrent_bias);
  std::vector<double> h = load(ctx, p.hidden_state);
  const CellWeights wt{w.data(), r.data(), part(b, 0), part(rb, 0), nullptr};
  gru_step(d, wt, x.data(), p.layout == "zrn", p.reset_after,
           activations_or(p.activations, {Act::kSigmoid, Act::kTanh}), h);
  store(ctx.out(0), h);
  return Status::ok();
}

Status run_lstm(KernelContext& ctx) {
  const auto& p = ctx.params<LstmParams>();
  const TensorView& input = ctx.in(p.input);
  const int64_t steps = input.shape[0], hs = p.hidden_size;
  const CellDims d{input.shape[1], input.shape[2], hs};
  const int64_t dirs = p.direction == "both" ? 2 : 1, gates = 4 * hs, state = d.batch * hs;
  const std::vector<double> x = load(ctx, p.input), w = load(ctx, p.weight),
                            r = load(ctx, p.recurrent_weight), b = load(ctx, p.bias),
                            rb = load(ctx, p.recurrent_bias), peep = load(ctx, p.peephole_weight),
                            h0 = load(ctx, p.initial_hidden_state),
                            c0 = load(ctx, p.initial_cell_state);
  const std::vector<Act> act =
      activations_or(p.activations, {Act::kSigmoid, Act::kTanh, Act::kTanh});
  std::vector<double> hidden(dirs * state), cell(dirs * state),
      sequence(p.return_sequence ? steps * dirs * state : 0);
  for (int64_t dir = 0; dir < dirs; ++dir) {
    const CellWeights wt{w.data() + dir * gates * d.input_size, r.data() + dir * gates * hs,
                         part(b, dir * gates), part(rb, dir * gates), part(peep, dir * 3 * hs)};
    std::vector<double> h = slab(h0, dir * state, state), c = slab(c0, dir * state, state);
    const bool reverse = dir == 1 || p.direction == "backward";
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t t = reverse ? steps - 1 - step : step;
      lstm_step(d, wt, x.data() + t * d.batch * d.input_size, p.layout == "iofg", act, h, c);
      if (p.return_sequence) put(sequence, (t * dirs + dir) * state, h);
    }
    put(hidden, dir * state, h);
    put(cell, dir * state, c);
  }
  store(ctx.out(0), hidden);
  store(ctx.out(1), cell);
  if (p.return_sequence) store(ctx.out(2), sequence);
  return Status::ok();
}

Status run_lstm_cell(KernelContext& ctx) {
  const auto& p = ctx.params<LstmCellParams>();
  const TensorView& input = ctx.in(p.input);
  const CellDims d{input.shape[0], input.shape[1], p.hidden_size};
  const std::vector<double> x = load(ctx, p.input), w = load(ctx, p.weight),
                            r = load(ctx, p.recurrent_weight), b = load(ctx, p.bias),
                            rb = load(ctx, p.recurrent_bias), peep = load(ctx, p.peephole_weight);
  std::vector<double> h = load(ctx, p.hidden_state), c = load(ctx, p.cell_state);
  const CellWeights wt{w.data(), r.data(), part(b, 0), part(rb, 0), part(peep, 0)};
  lstm_step(d, wt, x.data(), p.layout == "iofg",
            activations_or(p.activations, {Act::kSigmoid, Act::kTanh, Act::kTanh}), h, c);
  store(ctx.out(0), h);
  store(ctx.out(1), c);
  return Status::ok();
}

}  // namespace

void register_reference_recurrent(KernelTable& t) {
  t[static_cast<int>(OpKind::kGru)] = run_gru;
  t[static_cast<int>(OpKind::kGruCell)] = run_gru_cell;
  t[static_cast<int>(OpKind::kLstm)] = run_lstm;
  t[static_cast<int>(OpKind::kLstmCell)] = run_lstm_cell;
}

}  // namespace webnn
