// The dynamically quantized LSTM direction of graph/passes/dynamic_quant_lstm.cc
// (Node::Quantized::dynamic_lstm): the steps of the importer's unrolled DynamicQuantizeLSTM
// as one kernel. Per step: h quantized to uint8 (min/max over the state, ONNX Runtime's
// scale and zero point rule, quantizeLinear with scale 1 on the qquantize kernel), the
// product (q - zp) R on the int16 GEMM micro-kernels (qgemm.h, exact int32), ORT's u8s8
// saturation correction in int32, then per column float(sum) * (h_scale * r_scale) + x W + b
// and the cell, each the graph's float32 operation in its order with the vector sigmoid /
// tanh of the element-wise kernels (the cell in one SIMD pass per row and task,
// SimdKernels::lstm_cell): the same bits as the unfused graph on the cpu backend.
//
// On AVX-512 VNNI, R within int8 is packed as int8 and multiplies the raw uint8 q (vpdpbusd,
// exact), zp * colsum(R) subtracted after: the same integers at twice the products per
// instruction and half the weight bytes. Without VNNI the same packing runs on ORT's own
// pair-saturating arithmetic (vpmaddubsw on AVX2) where that equals the graph's product (the
// correction slots are exactly R's saturating pairs, or no pair can saturate): half the bytes
// of int16 R per step, and no slot loop.
//
// R is packed with its columns regrouped by blocks of kQGemmNr hidden units, the four gates of
// a block in consecutive panels, so a task (a range of blocks of units) computes its gate
// columns and finishes those units' cell: one parallel region per step, split by shapes only.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/qgemm.h"

namespace webnn {

namespace {

constexpr int64_t kUnits = kQGemmNr;  // hidden units per block
// A step is split over threads only in tasks of at least this many multiply-adds: a parallel
// region per step costs microseconds (more when the machine is busy), a small step less.
constexpr int64_t kMinTaskMacs = 1 << 20;

// One direction: its packed weights and per-run state.
class Direction {
 public:
  Direction(const SimdKernels& simd, std::shared_ptr<const DynamicLstmForm> form)
      : simd_(simd), f_(std::move(form)) {}

  // xw: the view of the scaled x W rows.
  bool init(const TensorView& xw) {
    const DynamicLstmForm& f = *f_;
    const int64_t n = 4 * f.hidden;
    if (xw.rank() != 2 || xw.shape[1] != n || xw.data_type != DataType::kFloat32) return false;
    const int64_t t_lo = f.backward ? f.first_t - f.steps + 1 : f.first_t;
    if (t_lo < 0 || (t_lo + f.steps) * f.batch > xw.shape[0]) return false;
    if (static_cast<int64_t>(f.r.size()) != f.hidden * n) return false;
    if (f.r_scale.size() != 1 && static_cast<int64_t>(f.r_scale.size()) != n) return false;
    if (!f.bias.empty() && static_cast<int64_t>(f.bias.size()) != n) return false;
    blocks_ = (f.hidden + kUnits - 1) / kUnits;
    // Columns regrouped: panel (block * 4 + gate k) holds units [block * 16, +16) of gate k.
    const int64_t np = blocks_ * 4 * kUnits;
    std::vector<int16_t> b(static_cast<size_t>(f.hidden * np), 0);
    for (int64_t u = 0; u < blocks_; ++u) {
      for (int k = 0; k < 4; ++k) {
        for (int64_t j = 0; j < kUnits && u * kUnits + j < f.hidden; ++j) {
          const int64_t src = f.gate_col[k] + u * kUnits + j;
          const int64_t dst = (u * 4 + k) * kUnits + j;
          for (int64_t i = 0; i < f.hidden; ++i) b[i * np + dst] = f.r[i * n + src];
        }
      }
    }
    kp_ = qgemm_kp(f.hidden);
    kq_ = qgemm_kq(f.hidden);
    bool fits8 = true;
    for (int16_t v : b) fits8 = fits8 && v >= -128 && v <= 127;
    uk8_ = fits8 ? qgemm_u8s8_ukernel() : nullptr;
    if (fits8 && !uk8_ && slots_are_saturation(f)) {
      // Without VNNI: ORT's own arithmetic (vpmaddubsw), which is the exact product plus the
      // slots' correction, on half the weight bytes of the int16 tiles.
      uk8_ = qgemm_u8s8_sat_ukernel();
      saturating_ = true;
    }
    if (uk8_) {
      // uint8 q times int8 r, then zp * colsum(r) subtracted: the same exact integers.
      std::vector<int8_t> b8(b.begin(), b.end());
      packed8_ = qgemm_pack_b_s8(b8.data(), f.hidden, np);
      colsum_.assign(static_cast<size_t>(np), 0);
      for (int64_t i = 0; i < f.hidden; ++i) {
        for (int64_t j = 0; j < np; ++j) colsum_[j] += b[i * np + j];
      }
    } else {
      packed_ = qgemm_pack_b(b.data(), np, 1, f.hidden, np);
    }
    return true;
  }

  // Every step; pool null: on the calling thread only.
  void run(const float* xw, const float* h0, const float* c0, float* out_h, float* out_c,
           float* seq, ThreadPool* pool) {
    const DynamicLstmForm& f = *f_;
    const int64_t hs = f.hidden, n = 4 * hs, batch = f.batch, state = batch * hs;
    h_.assign(h0, h0 + state);
    c_.assign(c0, c0 + state);
    next_h_.resize(state), next_c_.resize(state);
    q_.resize(state), xs_.resize(state);
    a_.assign(static_cast<size_t>(batch * kp_), 0);
    a8_.assign(static_cast<size_t>(batch * kq_), 0);
    col_scale_.resize(n);
    const int64_t t_lo = f.backward ? f.first_t - f.steps + 1 : f.first_t;
    const int64_t macs = batch * 4 * kUnits * hs;
    const int64_t tasks = std::clamp<int64_t>(blocks_ * macs / kMinTaskMacs, 1, blocks_);
    const bool parallel = pool && pool->num_threads() > 1 && tasks > 1;
    const int64_t pre_per_thread = kQGemmMr * 4 * blocks_ * kUnits;
    pre_.resize(static_cast<size_t>(pre_per_thread * (parallel ? pool->num_threads() : 1)));
    for (int64_t s = 0; s < f.steps; ++s) {
      const int64_t t = f.backward ? f.first_t - s : f.first_t + s;
      const float* xt = xw + t * batch * n;
      if (!quantize_state()) {
        // A NaN in h: the graph's zero point is NaN (min / max propagate it), so every
        // product, gate, c and h of the step is NaN.
        std::fill(next_h_.begin(), next_h_.end(), std::numeric_limits<float>::quiet_NaN());
        std::fill(next_c_.begin(), next_c_.end(), std::numeric_limits<float>::quiet_NaN());
      } else if (parallel) {
        pool->parallel_for(tasks, [&](int64_t task, int thread) {
          blocks(task * blocks_ / tasks, (task + 1) * blocks_ / tasks, xt,
                 pre_.data() + thread * pre_per_thread);
        });
      } else {
        blocks(0, blocks_, xt, pre_.data());
      }
      h_.swap(next_h_);
      c_.swap(next_c_);
      std::memcpy(seq + (t - t_lo) * state, h_.data(), state * sizeof(float));
    }
    std::memcpy(out_h, h_.data(), state * sizeof(float));
    std::memcpy(out_c, c_.data(), state * sizeof(float));
  }

 private:
  // Whether the slots are exactly ORT's saturating pairs of R (python/webnn/onnx/ops/
  // ort_u8s8.py): each slot with a weight is a pair (2j, 2j + 1) of R's column, listed once
  // with R's weights, and every pair that can saturate is listed. Then sum_j sat16(pair j),
  // the pair-saturating tile's integer, equals the exact product plus the slots' correction
  // (a pair that cannot saturate adds nothing to either). Without slots: no pair of R can
  // saturate, so that tile is exact. R holds the weights minus their zero point; a nonzero
  // zero point makes the slot weights (raw weights) differ, and the check fails.
  static bool slots_are_saturation(const DynamicLstmForm& f) {
    const int64_t hs = f.hidden, n = 4 * hs, pairs = (hs + 1) / 2;
    auto r = [&](int64_t i, int64_t col) { return i < hs ? int32_t{f.r[i * n + col]} : 0; };
    std::vector<uint8_t> listed(static_cast<size_t>(pairs));
    for (int64_t col = 0; col < n; ++col) {
      std::fill(listed.begin(), listed.end(), 0);
      for (int64_t sl = 0; sl < f.slots; ++sl) {
        const int64_t at = sl * n + col;
        const int32_t w0 = f.w0[at], w1 = f.w1[at], i0 = f.idx0[at], i1 = f.idx1[at];
        if (w0 == 0 && w1 == 0) continue;  // padding: adds clamp(0) - 0
        if (i0 < 0 || i0 >= hs || i0 % 2 != 0 || listed[i0 / 2]) return false;
        if (w0 != r(i0, col) || w1 != r(i0 + 1, col)) return false;
        if (w1 != 0 && i1 != i0 + 1) return false;
        listed[i0 / 2] = 1;
      }
      for (int64_t j = 0; j < pairs; ++j) {
        if (!listed[j] && qgemm_u8s8_pair_saturates(r(2 * j, col), r(2 * j + 1, col))) {
          return false;
        }
      }
    }
    return true;
  }

  // quantized_recurrent.py _dynamic_uint8 on h_, in the graph's float32 operations: q_ the
  // uint8 values, a_ the int16 rows q - zp, col_scale_ the product's scale per column. False
  // when h holds a NaN.
  bool quantize_state() {
    const DynamicLstmForm& f = *f_;
    const int64_t state = f.batch * f.hidden, n = 4 * f.hidden;
    // (Which zero a -0 / +0 extreme comes back as cannot change scale or zp below.)
    float mn, mx;
    if (!simd_.min_max(h_.data(), state, &mn, &mx)) return false;
    const float lo = std::min(mn, 0.0f), hi = std::max(mx, 0.0f);
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float zp = std::clamp(std::nearbyint(0.0f - lo / scale), 0.0f, 255.0f);
    const int32_t zpi = static_cast<int32_t>(zp);
    simd_.binary(BinaryOpF::kDiv, h_.data(), 1, &scale, 0, xs_.data(), state);
    qquantize()(xs_.data(), state, zpi, false, q_.data());
    zp_ = zpi;
    for (int64_t b = 0; b < f.batch; ++b) {
      if (uk8_) {
        std::memcpy(a8_.data() + b * kq_, q_.data() + b * f.hidden, f.hidden);
        continue;
      }
      for (int64_t i = 0; i < f.hidden; ++i) {
        a_[b * kp_ + i] = static_cast<int16_t>(int32_t{q_[b * f.hidden + i]} - zpi);
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      col_scale_[j] = scale * f.r_scale[f.r_scale.size() == 1 ? 0 : j];
    }
    return true;
  }

  // Units [u0 * 16, min(u1 * 16, hidden)) of every batch row: their four gate columns' exact
  // integer sums (the blocks' tiles and the correction) into `pre` (4 x the range's units per
  // row), then per row the cell over the whole range in one SIMD pass (scale, x W, bias,
  // gates, c and h: SimdKernels::lstm_cell; one long call, not one per block, which measured
  // slower).
  void blocks(int64_t u0, int64_t u1, const float* xt, int32_t* pre) {
    const DynamicLstmForm& f = *f_;
    const int64_t hs = f.hidden, n = 4 * hs;
    const int64_t j_begin = u0 * kUnits, nu = std::min(u1 * kUnits, hs) - j_begin;
    const int64_t pairs = kp_ / 2;
    const QGemmUkernel uk = qgemm_ukernel();
    alignas(64) int32_t tile[4][kQGemmMr * kQGemmNr];
    for (int64_t r0 = 0; r0 < f.batch; r0 += kQGemmMr) {
      const int mr = static_cast<int>(std::min<int64_t>(kQGemmMr, f.batch - r0));
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t units = std::min(kUnits, hs - u * kUnits);
        if (uk8_) {
          // The block's four gate panels in one call (tile[k] is panel k's output).
          const int64_t panel_size = kq_ / 4 * kQGemmNr * 4;
          uk8_(QGemmU8Tile{a8_.data() + r0 * kq_, kq_, mr, packed8_.data() + u * 4 * panel_size,
                           kq_ / 4, tile[0], 4, panel_size});
        } else {
          for (int k = 0; k < 4; ++k) {
            const int16_t* b = packed_.data() + (u * 4 + k) * pairs * kQGemmNr * 2;
            uk(QGemmTile{a_.data() + r0 * kp_, kp_, mr, b, pairs, tile[k]});
          }
        }
        for (int r = 0; r < mr; ++r) {
          const uint8_t* q = q_.data() + (r0 + r) * hs;
          for (int k = 0; k < 4; ++k) {
            const int64_t col0 = f.gate_col[k] + u * kUnits;
            const int32_t* acc = tile[k] + r * kQGemmNr;
            int32_t* sum = pre + (r * 4 + k) * nu + (u * kUnits - j_begin);
            if (uk8_) {
              const int32_t* csum = colsum_.data() + (u * 4 + k) * kUnits;
              for (int64_t j = 0; j < units; ++j) sum[j] = acc[j] - zp_ * csum[j];
            } else {
              for (int64_t j = 0; j < units; ++j) sum[j] = acc[j];
            }
            for (int64_t sl = 0; sl < (saturating_ ? 0 : f.slots); ++sl) {
              const int32_t* i0 = f.idx0.data() + sl * n + col0;
              const int32_t* i1 = f.idx1.data() + sl * n + col0;
              const int32_t* w0 = f.w0.data() + sl * n + col0;
              const int32_t* w1 = f.w1.data() + sl * n + col0;
              for (int64_t j = 0; j < units; ++j) {
                const int32_t pv = int32_t{q[i0[j]]} * w0[j] + int32_t{q[i1[j]]} * w1[j];
                sum[j] += std::clamp<int32_t>(pv, -32768, 32767) - pv;
              }
            }
          }
        }
      }
      for (int r = 0; r < mr; ++r) {
        const int64_t row = r0 + r;
        LstmCellArgs cell;
        for (int k = 0; k < 4; ++k) {
          const int64_t col0 = f.gate_col[k] + j_begin;
          cell.sum[k] = pre + (r * 4 + k) * nu;
          cell.x[k] = xt + row * n + col0;
          cell.scale[k] = col_scale_.data() + col0;
          cell.bias[k] = f.bias.empty() ? nullptr : f.bias.data() + col0;
        }
        const int64_t off = row * hs + j_begin;
        cell.c = c_.data() + off;
        cell.next_c = next_c_.data() + off;
        cell.next_h = next_h_.data() + off;
        cell.n = nu;
        simd_.lstm_cell(cell);
      }
    }
  }

  const SimdKernels& simd_;
  std::shared_ptr<const DynamicLstmForm> f_;
  int64_t blocks_ = 0, kp_ = 0, kq_ = 0;
  std::vector<int16_t> packed_;
  // The u8s8 VNNI route (qgemm.h QGemmU8Tile), when R fits int8: R packed as int8, its column
  // sums (for the zero point), A the raw uint8 rows.
  QGemmU8Ukernel uk8_ = nullptr;
  // uk8_ is the pair-saturating tile (no VNNI), whose sums already hold the slots' correction.
  bool saturating_ = false;
  std::vector<int8_t> packed8_;
  std::vector<int32_t> colsum_;
  std::vector<uint8_t> a8_;
  int32_t zp_ = 0;
  // Per-run scratch (a kernel runs on one dispatch at a time).
  std::vector<float> h_, c_, next_h_, next_c_, xs_, col_scale_;
  std::vector<int32_t> pre_;  // the gates' integer sums (blocks)
  std::vector<uint8_t> q_;
  std::vector<int16_t> a_;
};

// The node: one direction, or two (a bidirectional layer, DynamicLstmForm::paired), which
// with two or more threads run at the same time, one thread each, every step on its thread.
class DynamicLstmKernel final : public Kernel {
 public:
  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<LstmParams>();
    const std::shared_ptr<const DynamicLstmForm>& f = node.quantized->dynamic_lstm;
    dirs_.reserve(2);
    dirs_.emplace_back(simd_kernels(), f);
    if (!dirs_[0].init(cc.view(p.input))) return false;
    if (f->paired) {
      if (node.outputs.size() != 6 || f->paired->paired) return false;
      dirs_.emplace_back(simd_kernels(), f->paired);
      if (!dirs_[1].init(cc.view(p.weight))) return false;
    } else if (node.outputs.size() != 3) {
      return false;
    }
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<LstmParams>();
    auto one = [&](size_t d, ThreadPool* pool) {
      const OperandRef xw = d == 0 ? p.input : p.weight;
      const OperandRef h0 = d == 0 ? p.initial_hidden_state : p.recurrent_bias;
      const OperandRef c0 = d == 0 ? p.initial_cell_state : p.peephole_weight;
      dirs_[d].run(ctx.in(xw).as<float>(), ctx.in(h0).as<float>(), ctx.in(c0).as<float>(),
                   ctx.out(3 * d).as<float>(), ctx.out(3 * d + 1).as<float>(),
                   ctx.out(3 * d + 2).as<float>(), pool);
    };
    ThreadPool* pool = ctx.pool();
    if (dirs_.size() == 2 && pool && pool->num_threads() > 1) {
      pool->parallel_for(2, [&](int64_t d, int) { one(static_cast<size_t>(d), nullptr); });
    } else {
      for (size_t d = 0; d < dirs_.size(); ++d) one(d, pool);
    }
    return Status::ok();
  }

 private:
  std::vector<Direction> dirs_;
};

}  // namespace

std::unique_ptr<Kernel> make_dynamic_lstm_kernel(const Node& node, const CompileContext& cc) {
  if (node.kind != OpKind::kLstm || !node.quantized || !node.quantized->dynamic_lstm) {
    return nullptr;
  }
  auto k = std::make_unique<DynamicLstmKernel>();
  if (!k->init(node, cc)) return nullptr;
  return k;
}

}  // namespace webnn
