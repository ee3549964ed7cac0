// lstm, lstmCell, gru, gruCell in float32 on the packed GEMM (gemm.h), for products large
// enough that the double kernel (recurrent.cc) costs real time: the input terms of every step
// (x W^T + b) are one GEMM over the whole sequence, the recurrent term of each step
// (h R^T + rb, batch rows) one more, split over the pool by gate columns as run_gemm splits
// any product (by shapes and thread count only), and the gates are evaluated on the SIMD
// activations. The arithmetic follows the reference's decomposition in float32 (so its results
// are not bit-identical to the double reference: see docs/performance.md for the rule and the
// measured bounds).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/recurrent_spec.h"

namespace webnn {

namespace {

using Act = RecurrentActivation;

UnaryOpF unary_of(Act a) {
  switch (a) {
    case Act::kRelu:
      return UnaryOpF::kRelu;
    case Act::kSigmoid:
      return UnaryOpF::kSigmoid;
    case Act::kTanh:
      return UnaryOpF::kTanh;
  }
  return UnaryOpF::kCopy;
}

// A GEMM operand B packed for the micro-kernel: columns [col, col + n) of the gate rows.
struct PackedPart {
  int64_t col = 0, n = 0;
  AlignedFloats data;
};

// One direction's weights: W^T packed (k = input), R^T packed in parts (one for lstm and for
// gru with reset_after; the z/r gates and the new gate apart for gru without it, whose new-gate
// term multiplies r * h), biases as floats (zeros when absent: the reference adds 0 too).
struct PackedDirF32 {
  AlignedFloats w;
  std::vector<PackedPart> r;
  std::vector<float> bias, rbias, peephole;
  bool has_peephole = false;
};

class RecurrentF32Kernel final : public Kernel {
 public:
  RecurrentF32Kernel(const SimdKernels& simd, RecurrentSpec spec)
      : simd_(simd), s_(std::move(spec)), tile_(main_gemm_tile(simd)) {}

  void prepare(const CompileContext& cc) {
    packed_at_build_ = s_.weights_constant(cc);
    if (packed_at_build_) pack([&](OperandRef ref) { return cc.view(ref).as<float>(); });
  }

  Status run(KernelContext& ctx) override {
    if (!packed_at_build_) pack([&](OperandRef ref) { return ctx.in(ref).as<float>(); });
    const int64_t hs = s_.hidden, state = s_.batch * hs, gh = s_.gates * hs;
    const int64_t rows = s_.steps * s_.batch;
    const RecurrentIo io(s_, ctx);
    const float *x = io.x, *h0 = io.h0, *c0 = io.c0;
    float *out_h = io.out_h, *out_c = io.out_c, *out_seq = io.out_seq;
    // Per direction d: states at d * state, gate rows at d * state * gates.
    const int64_t all = s_.dirs * state;
    xin_.resize(static_cast<size_t>(s_.dirs * rows * gh));
    rec_.resize(static_cast<size_t>(all * s_.gates));
    pre_.resize(static_cast<size_t>(all * s_.gates));
    h_.resize(all), c_.resize(all), next_h_.resize(all), next_c_.resize(all), tmp_.resize(all);
    for (int64_t i = 0; i < all; ++i) {
      h_[i] = h0 ? h0[i] : 0.0f;
      c_[i] = c0 ? c0[i] : 0.0f;
    }

    // x W^T + b for every step, batch row and direction: one product per direction.
    std::vector<GemmJob> jobs(s_.dirs);
    RowMajorA a;
    a.rows = rows;
    a.mr = tile_.mr;
    for (int64_t d = 0; d < s_.dirs; ++d) {
      GemmJob& job = jobs[d];
      job.m = rows, job.n = gh, job.k_per_tap = s_.input;
      job.b_packed = packed_[d].w.data();
      job.c = xin_.data() + d * rows * gh;
      job.ldc = gh;
      job.col_bias = packed_[d].bias.data();
      a.a.push_back(x);
      a.lda.push_back(s_.input);
    }
    run_gemm(simd_, jobs, GemmEpilogue{}, a.fn(), GemmBFn{}, scratch_, ctx.pool(), &tile_);

    // The directions are independent: both take their step s together (the backward one at
    // t = steps - 1 - s), so each step is one GEMM call (one hand-off to the pool) for both.
    std::vector<int64_t> t_of(s_.dirs);
    for (int64_t step = 0; step < s_.steps; ++step) {
      for (int64_t d = 0; d < s_.dirs; ++d) {
        t_of[d] = d == 1 || s_.backward ? s_.steps - 1 - step : step;
      }
      recurrent_terms(ctx.pool(), 0, h_.data());
      for (int64_t d = 0; d < s_.dirs; ++d) {
        const float* xin = xin_.data() + (d * rows + t_of[d] * s_.batch) * gh;
        if (s_.lstm) {
          lstm_gates(d, xin);
        } else {
          gru_gates_zr(d, xin);
        }
      }
      if (!s_.lstm) {
        // Without reset_after the new gate's recurrent term reads r * h (tmp_).
        if (!s_.reset_after) recurrent_terms(ctx.pool(), 1, tmp_.data());
        for (int64_t d = 0; d < s_.dirs; ++d) {
          gru_gates_n(d, xin_.data() + (d * rows + t_of[d] * s_.batch) * gh);
        }
      }
      h_.swap(next_h_);
      c_.swap(next_c_);
      if (out_seq) {
        for (int64_t d = 0; d < s_.dirs; ++d) {
          std::memcpy(out_seq + (t_of[d] * s_.dirs + d) * state, h_.data() + d * state, state * 4);
        }
      }
    }
    std::memcpy(out_h, h_.data(), all * 4);
    if (out_c) std::memcpy(out_c, c_.data(), all * 4);
    return Status::ok();
  }

 private:
  template <class Data>
  void pack(Data data) {
    const int64_t hs = s_.hidden, gh = s_.gates * hs, nr = tile_.nr;
    packed_.resize(s_.dirs);
    const float* w = data(s_.w);
    const float* r = data(s_.r);
    const float* b = s_.b.present() ? data(s_.b) : nullptr;
    const float* rb = s_.rb.present() ? data(s_.rb) : nullptr;
    const float* peep = s_.peephole.present() ? data(s_.peephole) : nullptr;
    auto pack_rows = [&](const float* src, int64_t k, int64_t n, AlignedFloats* dst) {
      // src holds n gate rows of k weights: B = src^T, element (i, j) at src[j * k + i].
      size_t floats = 0;
      packed_b_floats(k, n, nr, &floats);  // sizes were checked by make_recurrent_kernel
      dst->reserve(std::max<size_t>(1, floats));
      pack_b(src, 1, k, k, n, nr, dst->data());
    };
    auto copy_or_zero = [](const float* src, int64_t n, std::vector<float>* dst) {
      dst->assign(static_cast<size_t>(n), 0.0f);
      if (src) std::copy(src, src + n, dst->begin());
    };
    for (int64_t d = 0; d < s_.dirs; ++d) {
      PackedDirF32& p = packed_[d];
      pack_rows(w + d * gh * s_.input, s_.input, gh, &p.w);
      const float* rd = r + d * gh * hs;
      const bool split = !s_.lstm && !s_.reset_after;
      p.r.resize(split ? 2 : 1);
      p.r[0].col = 0;
      p.r[0].n = split ? 2 * hs : gh;
      pack_rows(rd, hs, p.r[0].n, &p.r[0].data);
      if (split) {
        p.r[1].col = 2 * hs;
        p.r[1].n = hs;
        pack_rows(rd + 2 * hs * hs, hs, hs, &p.r[1].data);
      }
      copy_or_zero(b ? b + d * gh : nullptr, gh, &p.bias);
      copy_or_zero(rb ? rb + d * gh : nullptr, gh, &p.rbias);
      p.has_peephole = peep != nullptr;
      copy_or_zero(peep ? peep + d * 3 * hs : nullptr, 3 * hs, &p.peephole);
    }
  }

  // For every direction d: rec_[d][bi][part.col + j] = (h_bi R_d^T)[part.col + j] +
  // rb_d[part.col + j] for the batch rows of h + d * state (batch x hidden), part `part` of
  // the packed R.
  void recurrent_terms(ThreadPool* pool, int part, const float* h) {
    const int64_t gh = s_.gates * s_.hidden, state = s_.batch * s_.hidden;
    rec_jobs_.resize(s_.dirs);
    rec_a_.a.resize(s_.dirs);
    rec_a_.lda.assign(s_.dirs, s_.hidden);
    rec_a_.rows = s_.batch;
    rec_a_.mr = tile_.mr;
    for (int64_t d = 0; d < s_.dirs; ++d) {
      const PackedPart& pp = packed_[d].r[part];
      GemmJob& job = rec_jobs_[d];
      job.m = s_.batch, job.n = pp.n, job.k_per_tap = s_.hidden;
      job.b_packed = pp.data.data();
      job.c = rec_.data() + d * state * s_.gates + pp.col;
      job.ldc = gh;
      job.col_bias = packed_[d].rbias.data() + pp.col;
      rec_a_.a[d] = h + d * state;
    }
    run_gemm(simd_, rec_jobs_, GemmEpilogue{}, rec_a_.fn(), GemmBFn{}, scratch_, pool, &tile_);
  }

  void activate(Act act, float* v, int64_t n) const {
    UnaryArgs args;
    args.op = unary_of(act);
    simd_.unary(args, v, v, n);
  }

  // One LSTM step of direction d for every batch row, as reference/recurrent.cc lstm_step in
  // float32.
  void lstm_gates(int64_t d, const float* xin) {
    const PackedDirF32& p = packed_[d];
    const int64_t hs = s_.hidden, gh = 4 * hs, off = d * s_.batch * hs;
    const int64_t i_row = 0, o_row = s_.alt_layout ? hs : 3 * hs,
                  f_row = s_.alt_layout ? 2 * hs : hs, g_row = s_.alt_layout ? 3 * hs : 2 * hs;
    for (int64_t bi = 0; bi < s_.batch; ++bi) {
      const float* xb = xin + bi * gh;
      const float* rb = rec_.data() + off * 4 + bi * gh;
      float* pre = pre_.data() + off * 4 + bi * gh;
      const float* cb = c_.data() + off + bi * hs;
      for (int64_t g = 0; g < gh; ++g) pre[g] = xb[g] + rb[g];
      if (p.has_peephole) {
        const float* pp = p.peephole.data();
        for (int64_t j = 0; j < hs; ++j) {
          pre[i_row + j] = pre[i_row + j] + pp[j] * cb[j];
          pre[o_row + j] = pre[o_row + j] + pp[hs + j] * cb[j];
          pre[f_row + j] = pre[f_row + j] + pp[2 * hs + j] * cb[j];
        }
      }
      activate(s_.acts[0], pre + i_row, hs);
      activate(s_.acts[0], pre + f_row, hs);
      activate(s_.acts[0], pre + o_row, hs);
      activate(s_.acts[1], pre + g_row, hs);
      float* nc = next_c_.data() + off + bi * hs;
      for (int64_t j = 0; j < hs; ++j) {
        const float fc = pre[f_row + j] * cb[j];
        const float ig = pre[i_row + j] * pre[g_row + j];
        nc[j] = fc + ig;
      }
      float* t = tmp_.data() + off + bi * hs;
      std::memcpy(t, nc, hs * 4);
      activate(s_.acts[2], t, hs);
      float* nh = next_h_.data() + off + bi * hs;
      for (int64_t j = 0; j < hs; ++j) nh[j] = pre[o_row + j] * t[j];
    }
  }

  // The z and r gates of a GRU step of direction d for every batch row (and r * h in tmp_
  // when the new gate's recurrent term reads it), as reference/recurrent.cc gru_step in float32.
  void gru_gates_zr(int64_t d, const float* xin) {
    const int64_t hs = s_.hidden, gh = 3 * hs, off = d * s_.batch * hs;
    const int64_t r_row = s_.alt_layout ? hs : 0;
    for (int64_t bi = 0; bi < s_.batch; ++bi) {
      const float* xb = xin + bi * gh;
      const float* rb = rec_.data() + off * 3 + bi * gh;
      float* pre = pre_.data() + off * 3 + bi * gh;
      for (int64_t g = 0; g < 2 * hs; ++g) pre[g] = xb[g] + rb[g];
      activate(s_.acts[0], pre, 2 * hs);  // z and r, adjacent in both layouts
      if (!s_.reset_after) {
        float* rh = tmp_.data() + off + bi * hs;
        const float* hb = h_.data() + off + bi * hs;
        for (int64_t j = 0; j < hs; ++j) rh[j] = pre[r_row + j] * hb[j];
      }
    }
  }

  // The new gate and the next h of a GRU step of direction d (after gru_gates_zr and, without
  // reset_after, the recurrent term of r * h).
  void gru_gates_n(int64_t d, const float* xin) {
    const int64_t hs = s_.hidden, gh = 3 * hs, off = d * s_.batch * hs;
    const int64_t z_row = s_.alt_layout ? 0 : hs, r_row = s_.alt_layout ? hs : 0, n_row = 2 * hs;
    for (int64_t bi = 0; bi < s_.batch; ++bi) {
      const float* xb = xin + bi * gh;
      const float* rb = rec_.data() + off * 3 + bi * gh;
      float* pre = pre_.data() + off * 3 + bi * gh;
      float* n = pre + n_row;
      if (s_.reset_after) {
        for (int64_t j = 0; j < hs; ++j) n[j] = xb[n_row + j] + pre[r_row + j] * rb[n_row + j];
      } else {
        for (int64_t j = 0; j < hs; ++j) n[j] = xb[n_row + j] + rb[n_row + j];
      }
      activate(s_.acts[1], n, hs);
      const float* z = pre + z_row;
      const float* hb = h_.data() + off + bi * hs;
      float* nh = next_h_.data() + off + bi * hs;
      for (int64_t j = 0; j < hs; ++j) {
        const float keep = (1.0f - z[j]) * n[j];
        const float old = z[j] * hb[j];
        nh[j] = keep + old;
      }
    }
  }

  const SimdKernels& simd_;
  RecurrentSpec s_;
  GemmTile tile_;
  bool packed_at_build_ = false;
  std::vector<PackedDirF32> packed_;
  GemmScratch scratch_;
  std::vector<GemmJob> rec_jobs_;
  RowMajorA rec_a_;
  // Per-run scratch (a kernel runs on one dispatch at a time).
  std::vector<float> xin_, rec_, pre_, h_, c_, next_h_, next_c_, tmp_;
};

}  // namespace

bool recurrent_uses_f32(const RecurrentSpec& spec) {
  if (const char* env = std::getenv("WEBNN_RECURRENT_KERNEL")) {
    const std::string v = env;
    if (v == "double") return false;
    if (v == "float32") return true;
  }
  // Only where float32 rounding stays of the order of its own size over the steps: gates in
  // (0, 1) (sigmoid) and bounded candidates (sigmoid / tanh). relu lets the states grow without
  // bound, and tanh gates (a gru's 1 - z up to 2) amplify a step's rounding in the next ones
  // (1e-3 after 10 steps was measured): those keep the double kernel.
  if (spec.acts.empty() || spec.acts[0] != Act::kSigmoid) return false;
  for (Act a : spec.acts) {
    if (a == Act::kRelu) return false;
  }
  return spec.macs() >= kRecurrentF32MinMacs;
}

std::unique_ptr<Kernel> make_recurrent_f32_kernel(const SimdKernels& simd, RecurrentSpec spec,
                                                  const CompileContext& cc) {
  auto k = std::make_unique<RecurrentF32Kernel>(simd, std::move(spec));
  k->prepare(cc);
  return k;
}

}  // namespace webnn
