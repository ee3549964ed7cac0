// The quantized conv2d and matmul (nodes with Node::Quantized, made by graph/passes/qdq_fusion.cc):
// reads the (u)int8 input, sums (x - x_zp) * w in int32 and writes the requantized (u)int8
// output (qgemm.h Requant). Two routes, weights prepared once at compile time:
//  - depthwise (one input and one output channel per group): a direct loop per channel plane;
//  - everything else, per group: im2col rows of int16 (x - x_zp, zero where the window leaves
//    the image, which is what padding the dequantized float input with 0 means) times the
//    packed integer filter on the integer GEMM, requantized as each tile finishes.
// Tasks are blocks of output pixels (or channel planes) of one image and group, run on the
// context's pool; each thread keeps its own im2col buffer between runs.
#include <algorithm>
#include <cstring>

#include "backends/cpu/conv_filter.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/qgemm.h"

namespace webnn {

namespace {

constexpr int64_t kRowsPerTask = 64;  // multiple of kQGemmMr
constexpr int64_t kMinTaskMacs = 256 * 1024;

// Runs fn(item, thread) for every item, in tasks of consecutive items of at least
// kMinTaskMacs multiply-adds each (small layers run inline: a wake-up would cost more than
// the work). The split depends only on the shapes, never on the pool's state.
template <class F>
void run_tasks(ThreadPool* pool, int64_t items, int64_t macs_per_item, F&& fn) {
  const int64_t tasks = std::clamp<int64_t>(items * macs_per_item / kMinTaskMacs, 1, items);
  if (!pool || pool->num_threads() == 1 || tasks == 1) {
    for (int64_t t = 0; t < items; ++t) fn(t, 0);
    return;
  }
  pool->parallel_for(tasks, [&](int64_t t, int thread) {
    for (int64_t i = t * items / tasks; i < (t + 1) * items / tasks; ++i) fn(i, thread);
  });
}

class QConv2dKernel final : public Kernel {
 public:
  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<Conv2dParams>();
    const TensorView& x = cc.view(p.input);
    const TensorView& w = cc.view(p.filter);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    const Node::Quantized& q = *node.quantized;
    if (x.rank() != 4 || w.rank() != 4 || y.rank() != 4 || !cc.is_constant(p.filter)) return false;
    if (w.data_type != DataType::kFloat32) return false;
    x_signed_ = x.data_type == DataType::kInt8;
    rq_.is_signed = q.requant_signed;
    table_ = q.table;
    if (!table_.empty() && table_.size() != 256 &&
        static_cast<int64_t>(table_.size()) != 256 * y.shape[p.input_layout == "nhwc" ? 3 : 1])
      return false;
    rq_.table_per_column = table_.size() > 256;
    nhwc_ = p.input_layout == "nhwc";
    const int c_axis = nhwc_ ? 3 : 1, h_axis = nhwc_ ? 1 : 2, w_axis = nhwc_ ? 2 : 3;
    n_ = x.shape[0], c_ = x.shape[c_axis], h_ = x.shape[h_axis], w_ = x.shape[w_axis];
    oc_ = y.shape[c_axis], oh_ = y.shape[h_axis], ow_ = y.shape[w_axis];
    const FilterLayout f(p.filter_layout, w.shape);
    kh_ = f.size('h'), kw_ = f.size('w');
    g_ = p.groups;
    gi_ = f.size('i');
    if (g_ < 1 || oc_ % g_ != 0 || gi_ * g_ != c_) return false;
    go_ = oc_ / g_;
    if (p.strides) sh_ = (*p.strides)[0], sw_ = (*p.strides)[1];
    if (p.dilations) dh_ = (*p.dilations)[0], dw_ = (*p.dilations)[1];
    if (p.padding) pt_ = (*p.padding)[0], pl_ = (*p.padding)[2];
    x_zp_ = q.input_zero_point;
    multiplier_ = q.multiplier;
    if (multiplier_.size() != 1 && static_cast<int64_t>(multiplier_.size()) != oc_) return false;
    rq_.per_column = multiplier_.size() != 1;
    rq_.zero_point = q.output_zero_point;
    if (p.bias.present()) {
      const float* b = cc.view(p.bias).as<float>();
      bias_.assign(b, b + oc_);
    }
    depthwise_ = gi_ == 1 && go_ == 1;
    const float* wf = w.as<float>();
    const int64_t taps = kh_ * kw_;
    k_ = gi_ * taps;
    if (q.u8s8_saturating) return !depthwise_ && init_saturating(wf, f);
    // Without VNNI, a filter of several taps whose int8 weights have no pair that can
    // saturate runs on the same route: the pair-saturating tiles are exact then, on raw bytes
    // (QLinearConv 3x3 32 -> 32 at 320x320 on AVX2: 46 -> 25 ms; a 1x1 filter measured
    // slower there than on the int16 tiles).
    if (!depthwise_ && taps > 1 && !qgemm_u8s8_ukernel() && pairs_never_saturate(wf, f)) {
      return init_saturating(wf, f);
    }
    if (depthwise_) {
      dw_weights_.resize(static_cast<size_t>(c_ * taps));
      for (int64_t c = 0; c < c_; ++c) {
        for (int64_t t = 0; t < taps; ++t) {
          dw_weights_[c * taps + t] = static_cast<int32_t>(wf[f.at(c, 0, t / kw_, t % kw_)]);
        }
      }
      return true;
    }
    if (!nhwc_) {
      // NCHW: the transposed GEMM (qgemm_cols), weights as int16 rows of kp. Its pixel panels
      // gather from the input padded once per run (x - x_zp, zeros around): element k of
      // pixel (oh, ow) is at k_offset_[k] + (oh * sh) * wp_ + ow * sw in a group's planes.
      const int64_t kp = qgemm_kp(k_);
      hp_ = (oh_ - 1) * sh_ + (kh_ - 1) * dh_ + 1;
      wp_ = (ow_ - 1) * sw_ + (kw_ - 1) * dw_ + 1;
      k_offset_.resize(static_cast<size_t>(k_));
      for (int64_t i = 0; i < gi_; ++i) {
        for (int64_t t = 0; t < taps; ++t) {
          k_offset_[i * taps + t] = (i * hp_ + t / kw_ * dh_) * wp_ + t % kw_ * dw_;
        }
      }
      for (int64_t g = 0; g < g_; ++g) {
        std::vector<int16_t> rows(static_cast<size_t>(go_ * kp), 0);
        for (int64_t o = 0; o < go_; ++o) {
          for (int64_t i = 0; i < gi_; ++i) {
            for (int64_t t = 0; t < taps; ++t) {
              rows[o * kp + i * taps + t] =
                  static_cast<int16_t>(wf[f.at(g * go_ + o, i, t / kw_, t % kw_)]);
            }
          }
        }
        packed_.push_back(std::move(rows));
      }
      return true;
    }
    std::vector<int16_t> b(static_cast<size_t>(k_ * go_));
    for (int64_t g = 0; g < g_; ++g) {
      for (int64_t o = 0; o < go_; ++o) {
        for (int64_t i = 0; i < gi_; ++i) {
          for (int64_t t = 0; t < taps; ++t) {
            const float v = wf[f.at(g * go_ + o, i, t / kw_, t % kw_)];
            b[(i * taps + t) * go_ + o] = static_cast<int16_t>(v);
          }
        }
      }
      packed_.push_back(qgemm_pack_b(b.data(), go_, 1, k_, go_));
    }
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<Conv2dParams>();
    const uint8_t* x = ctx.in(p.input).data;
    uint8_t* y = ctx.out().data;
    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->num_threads() : 1;
    if (saturating_) return run_saturating(x, y, pool, threads);
    if (static_cast<int>(scratch_.size()) < threads) scratch_.resize(threads);
    if (static_cast<int>(row_scratch_.size()) < threads) row_scratch_.resize(threads);
    if (static_cast<int>(tap_scratch_.size()) < threads) tap_scratch_.resize(threads);
    const int64_t pixels = oh_ * ow_;
    if (depthwise_) {
      run_tasks(pool, n_ * c_, oh_ * ow_ * kh_ * kw_, [&](int64_t t, int thread) {
        std::vector<int32_t>& acc = row_scratch_[thread];
        acc.resize(static_cast<size_t>(2 * ow_));  // sums, then the row's bytes
        depthwise_plane(x, y, t / c_, t % c_, acc.data(), scratch_[thread], tap_scratch_[thread]);
      });
      return Status::ok();
    }
    const int64_t blocks = (pixels + kRowsPerTask - 1) / kRowsPerTask;
    const QGemmUkernel uk = qgemm_ukernel();
    const int64_t kp = qgemm_kp(k_);
    if (static_cast<int>(pack_scratch_.size()) < threads) pack_scratch_.resize(threads);
    if (static_cast<int>(offset_scratch_.size()) < threads) offset_scratch_.resize(threads);
    if (!nhwc_ && !pointwise()) pad_input(x);
    run_tasks(pool, n_ * g_ * blocks, kRowsPerTask * k_ * go_, [&](int64_t t, int thread) {
      const int64_t block = t % blocks, g = t / blocks % g_, n = t / blocks / g_;
      const int64_t p0 = block * kRowsPerTask, rows = std::min(kRowsPerTask, pixels - p0);
      std::vector<int16_t>& a = scratch_[thread];
      if (!nhwc_) {
        // The im2col rows straight into pixel panels.
        std::vector<int16_t>& panels = pack_scratch_[thread];
        const int64_t pairs = kp / 2;
        panels.assign(static_cast<size_t>(qgemm_panels(rows) * pairs * kQGemmNr * 2), 0);
        if (pointwise()) {
          pointwise_panels(x, n, g, p0, rows, panels.data(), pairs);
        } else {
          gather_panels(padded_.data() + ((n * c_ + g * gi_) * hp_) * wp_, p0, rows, panels.data(),
                        pairs, offset_scratch_[thread]);
        }
        Requant rq = rq_;
        rq.bias = bias_.empty() ? nullptr : bias_.data() + g * go_;
        rq.multiplier = multiplier_.data() + (rq.per_column ? g * go_ : 0);
        if (!table_.empty()) rq.table = table_.data() + (rq.table_per_column ? g * go_ * 256 : 0);
        qgemm_cols(uk, packed_[g].data(), kp, go_, panels.data(), k_, rows, rq,
                   y + (n * oc_ + g * go_) * pixels + p0, pixels);
        return;
      }
      a.resize(static_cast<size_t>(kRowsPerTask * kp));
      im2col_block(x, n, g, p0, rows, a.data(), kp);
      Requant rq = rq_;
      rq.bias = bias_.empty() ? nullptr : bias_.data() + g * go_;
      rq.multiplier = multiplier_.data() + (rq.per_column ? g * go_ : 0);
      if (!table_.empty()) rq.table = table_.data() + (rq.table_per_column ? g * go_ * 256 : 0);
      // Output (n, g * go_ + o, pixel): NCHW rows are pixels (stride 1), columns planes.
      uint8_t* out =
          nhwc_ ? y + (n * pixels + p0) * oc_ + g * go_ : y + (n * oc_ + g * go_) * pixels + p0;
      qgemm_rows(uk, a.data(), kp, rows, packed_[g].data(), k_, go_, rq, out, nhwc_ ? oc_ : 1,
                 nhwc_ ? 1 : pixels);
    });
    return Status::ok();
  }

 private:
  // ONNX Runtime's u8s8 arithmetic on x86 without VNNI (Node::Quantized::u8s8_saturating,
  // graph/passes/qdq_fusion.cc): the raw uint8 input (int8 flipped by 128) times the raw int8
  // weights, pairs of adjacent products along ORT's reduction order (kernel position, then input
  // channel) saturated to int16, on the pair-saturating tiles; the zero point's raw_zero *
  // colsum(w) is subtracted exactly after (ORT pads with the zero point: raw_zero there).
  bool init_saturating(const float* wf, const FilterLayout& f) {
    saturating_ = true;
    const int64_t taps = kh_ * kw_;
    raw_zero_ = x_zp_ + (x_signed_ ? 128 : 0);
    sat_offset_.assign(static_cast<size_t>(oc_), 0);
    std::vector<int8_t> b(static_cast<size_t>(k_ * go_));
    for (int64_t g = 0; g < g_; ++g) {
      for (int64_t o = 0; o < go_; ++o) {
        for (int64_t i = 0; i < gi_; ++i) {
          for (int64_t t = 0; t < taps; ++t) {
            const float v = wf[f.at(g * go_ + o, i, t / kw_, t % kw_)];
            if (v < -128.0f || v > 127.0f) return false;
            b[(t * gi_ + i) * go_ + o] = static_cast<int8_t>(v);
            sat_offset_[g * go_ + o] += raw_zero_ * static_cast<int32_t>(v);
          }
        }
      }
      packed8_.push_back(qgemm_pack_b_s8(b.data(), k_, go_));
    }
    return true;
  }

  // Whether every weight is an int8 and no pair (2j, 2j + 1) of a channel's weights in ORT's
  // order (init_saturating's packing) can leave int16 for any raw bytes.
  bool pairs_never_saturate(const float* wf, const FilterLayout& f) const {
    auto weight = [&](int64_t o, int64_t kk) -> float {
      return kk < k_ ? wf[f.at(o, kk % gi_, kk / gi_ / kw_, kk / gi_ % kw_)] : 0.0f;
    };
    for (int64_t o = 0; o < oc_; ++o) {
      for (int64_t kk = 0; kk < k_; kk += 2) {
        const float b0 = weight(o, kk), b1 = weight(o, kk + 1);
        if (b0 < -128.0f || b0 > 127.0f || b1 < -128.0f || b1 > 127.0f) return false;
        if (qgemm_u8s8_pair_saturates(static_cast<int32_t>(b0), static_cast<int32_t>(b1))) {
          return false;
        }
      }
    }
    return true;
  }

  // Rows [p0, p0 + rows) of group g's im2col matrix in ORT's order, raw bytes (row r at
  // a + r * kq, zero past k_), from NHWC bytes x (flipped: int8 already shifted to uint8).
  void raw_im2col(const uint8_t* x, int64_t n, int64_t g, int64_t p0, int64_t rows, uint8_t* a,
                  int64_t kq, bool flipped) const {
    const uint8_t flip = x_signed_ && !flipped ? 0x80 : 0, pad = static_cast<uint8_t>(raw_zero_);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t oh = (p0 + r) / ow_, ow = (p0 + r) % ow_;
      uint8_t* row = a + r * kq;
      std::memset(row + k_, 0, static_cast<size_t>(kq - k_));
      for (int64_t kh = 0; kh < kh_; ++kh) {
        const int64_t ih = oh * sh_ - pt_ + kh * dh_;
        for (int64_t kw = 0; kw < kw_; ++kw) {
          const int64_t iw = ow * sw_ - pl_ + kw * dw_;
          uint8_t* out = row + (kh * kw_ + kw) * gi_;
          if (ih < 0 || ih >= h_ || iw < 0 || iw >= w_) {
            std::memset(out, pad, static_cast<size_t>(gi_));
          } else {
            const uint8_t* in = x + ((n * h_ + ih) * w_ + iw) * c_ + g * gi_;
            if (!flip) {
              std::memcpy(out, in, static_cast<size_t>(gi_));
            } else {
              for (int64_t i = 0; i < gi_; ++i) out[i] = in[i] ^ flip;
            }
          }
        }
      }
    }
  }

  // NCHW: the raw bytes as NHWC (int8 flipped), so that each tap's channels are one run.
  // Blocks of 32 x 32 keep reads and writes within a few cache lines.
  const uint8_t* raw_nhwc(const uint8_t* x) {
    // Locals, not members: byte stores may alias *this, which kept c_ reloaded per byte.
    const int64_t plane = h_ * w_, channels = c_, images = n_;
    nhwc_raw_.resize(static_cast<size_t>(images * plane * channels));
    const uint8_t flip = x_signed_ ? 0x80 : 0;
    constexpr int64_t kBlock = 32;
    for (int64_t n = 0; n < images; ++n) {
      const uint8_t* src = x + n * channels * plane;
      uint8_t* dst = nhwc_raw_.data() + n * plane * channels;
      for (int64_t c0 = 0; c0 < channels; c0 += kBlock) {
        const int64_t c1 = std::min(channels, c0 + kBlock);
        for (int64_t p0 = 0; p0 < plane; p0 += kBlock) {
          const int64_t p1 = std::min(plane, p0 + kBlock);
          for (int64_t c = c0; c < c1; ++c) {
            const uint8_t* in = src + c * plane;
            for (int64_t q = p0; q < p1; ++q) dst[q * channels + c] = in[q] ^ flip;
          }
        }
      }
    }
    return nhwc_raw_.data();
  }

  Status run_saturating(const uint8_t* x, uint8_t* y, ThreadPool* pool, int threads) {
    if (static_cast<int>(sat_scratch_.size()) < threads) sat_scratch_.resize(threads);
    // Rows are gathered from NHWC bytes (already flipped when they come from raw_nhwc).
    const uint8_t* rows_from = nhwc_ ? x : raw_nhwc(x);
    const int64_t pixels = oh_ * ow_, kq = qgemm_kq(k_);
    const int64_t blocks = (pixels + kRowsPerTask - 1) / kRowsPerTask;
    const QGemmU8Ukernel uk = qgemm_u8s8_sat_ukernel();
    run_tasks(pool, n_ * g_ * blocks, kRowsPerTask * k_ * go_, [&](int64_t t, int thread) {
      const int64_t block = t % blocks, g = t / blocks % g_, n = t / blocks / g_;
      const int64_t p0 = block * kRowsPerTask, rows = std::min(kRowsPerTask, pixels - p0);
      std::vector<uint8_t>& buf = sat_scratch_[thread];
      buf.resize(static_cast<size_t>(kRowsPerTask * (kq + go_)));
      uint8_t* a = buf.data();
      raw_im2col(rows_from, n, g, p0, rows, a, kq, /*flipped=*/!nhwc_);
      Requant rq = rq_;
      rq.bias = bias_.empty() ? nullptr : bias_.data() + g * go_;
      rq.multiplier = multiplier_.data() + (rq.per_column ? g * go_ : 0);
      if (!table_.empty()) rq.table = table_.data() + (rq.table_per_column ? g * go_ * 256 : 0);
      const int32_t* offset = sat_offset_.data() + g * go_;
      if (nhwc_) {
        qgemm_rows_u8(uk, a, kq, rows, packed8_[g].data(), k_, go_, offset, nullptr, rq,
                      y + (n * pixels + p0) * oc_ + g * go_, oc_);
        return;
      }
      // NCHW: the rows' bytes, then each channel's run of pixels.
      uint8_t* tile = a + kRowsPerTask * kq;
      qgemm_rows_u8(uk, a, kq, rows, packed8_[g].data(), k_, go_, offset, nullptr, rq, tile, go_);
      const int64_t go = go_;  // a local: byte stores may alias the member
      for (int64_t o = 0; o < go; ++o) {
        uint8_t* out = y + (n * oc_ + g * go + o) * pixels + p0;
        for (int64_t r = 0; r < rows; ++r) out[r] = tile[r * go + o];
      }
    });
    return Status::ok();
  }

  // Image row ih of channel c of image n, and the distance between its neighbouring pixels.
  const uint8_t* x_row(const uint8_t* x, int64_t n, int64_t c, int64_t ih) const {
    return nhwc_ ? x + ((n * h_ + ih) * w_) * c_ + c : x + ((n * c_ + c) * h_ + ih) * w_;
  }
  int64_t x_step() const { return nhwc_ ? c_ : 1; }

  // out[i * out_step] = in[i * step] - x_zp for i < count (int16: |value| <= 255).
  template <class T>
  void shifted(const uint8_t* in, int64_t step, int64_t count, int16_t* out,
               int64_t out_step) const {
    const T* v = reinterpret_cast<const T*>(in);
    const int32_t zp = x_zp_;
    if (step == 1 && out_step == 1) {  // vectorizes
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<int16_t>(int32_t{v[i]} - zp);
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      out[i * out_step] = static_cast<int16_t>(int32_t{v[i * step]} - zp);
    }
  }
  void shifted(const uint8_t* in, int64_t step, int64_t count, int16_t* out,
               int64_t out_step) const {
    if (x_signed_) return shifted<int8_t>(in, step, count, out, out_step);
    shifted<uint8_t>(in, step, count, out, out_step);
  }

  // Rows [p0, p0 + rows) of group g's im2col matrix (row r at a + r * kp): x - x_zp at
  // k = (i * kh + h) * kw + w, zero where the window leaves the image. Filled one k and one
  // output row at a time: the valid output columns of a tap are one run, read along the image
  // row (unit stride in NCHW).
  // Rows [p0, p0 + rows) of group g's im2col matrix: x - x_zp at k = (i * kh + h) * kw + w,
  // zero where the window leaves the image. Filled one k and one output row at a time: the
  // valid output columns of a tap are one run, read along the image row (unit stride in NCHW).
  // store(k, r, count, in, in_step) writes the run of rows [r, r + count) of column k
  // (in == nullptr: zeros).
  template <class Store>
  void im2col_runs(const uint8_t* x, int64_t n, int64_t g, int64_t p0, int64_t rows,
                   Store&& store) const {
    const int64_t step = x_step();
    for (int64_t i = 0; i < gi_; ++i) {
      const int64_t c = g * gi_ + i;
      for (int64_t kh = 0; kh < kh_; ++kh) {
        for (int64_t kw = 0; kw < kw_; ++kw) {
          const int64_t k = (i * kh_ + kh) * kw_ + kw;
          const int64_t off = kw * dw_ - pl_;  // iw = ow * sw + off
          const int64_t lo = off >= 0 ? 0 : (-off + sw_ - 1) / sw_;
          const int64_t hi = w_ - 1 - off < 0 ? 0 : std::min(ow_, (w_ - 1 - off) / sw_ + 1);
          for (int64_t r = 0; r < rows;) {
            const int64_t oh = (p0 + r) / ow_, ow0 = (p0 + r) % ow_;
            const int64_t seg = std::min(ow_ - ow0, rows - r);
            const int64_t ih = oh * sh_ - pt_ + kh * dh_;
            const int64_t b = std::clamp(lo, ow0, ow0 + seg), e = std::clamp(hi, b, ow0 + seg);
            if (ih < 0 || ih >= h_ || b >= e) {
              store(k, r, seg, nullptr, 0);
            } else {
              if (b > ow0) store(k, r, b - ow0, nullptr, 0);
              store(k, r + b - ow0, e - b, x_row(x, n, c, ih) + (b * sw_ + off) * step, sw_ * step);
              if (ow0 + seg > e) store(k, r + e - ow0, ow0 + seg - e, nullptr, 0);
            }
            r += seg;
          }
        }
      }
    }
  }

  bool pointwise() const {
    return kh_ == 1 && kw_ == 1 && sh_ == 1 && sw_ == 1 && pt_ == 0 && pl_ == 0 && !nhwc_ &&
           oh_ == h_ && ow_ == w_;
  }

  // padded_ = every image's channels as hp_ x wp_ int16 planes of x - x_zp, zero outside.
  void pad_input(const uint8_t* x) {
    padded_.assign(static_cast<size_t>(n_ * c_ * hp_ * wp_), 0);
    const int64_t q0 = pl_, q1 = std::min(wp_, w_ + pl_);  // padded columns inside the image
    if (q0 >= q1) return;
    for (int64_t n = 0; n < n_; ++n) {
      for (int64_t c = 0; c < c_; ++c) {
        for (int64_t r = 0; r < hp_; ++r) {
          const int64_t ih = r - pt_;
          if (ih < 0 || ih >= h_) continue;
          int16_t* out = padded_.data() + ((n * c_ + c) * hp_ + r) * wp_ + q0;
          shifted(x_row(x, n, c, ih), 1, q1 - q0, out, 1);
        }
      }
    }
  }

  // The pixel panels of rows [p0, p0 + rows) gathered from one image's padded group planes,
  // two k at a time, so that each pair row of a panel is written contiguously.
  void gather_panels(const int16_t* planes, int64_t p0, int64_t rows, int16_t* panels,
                     int64_t pairs, std::vector<int64_t>& offsets) const {
    offsets.resize(static_cast<size_t>(rows));
    for (int64_t j = 0; j < rows; ++j) {
      const int64_t oh = (p0 + j) / ow_, ow = (p0 + j) % ow_;
      offsets[j] = oh * sh_ * wp_ + ow * sw_;
    }
    for (int64_t q = 0; q * kQGemmNr < rows; ++q) {
      const int64_t j0 = q * kQGemmNr, cols = std::min<int64_t>(kQGemmNr, rows - j0);
      const int64_t* off = offsets.data() + j0;
      for (int64_t pr = 0; pr < pairs; ++pr) {
        int16_t* out = panels + (q * pairs + pr) * kQGemmNr * 2;
        const int16_t* a = planes + k_offset_[2 * pr];
        if (2 * pr + 1 < k_) {
          const int16_t* b = planes + k_offset_[2 * pr + 1];
          for (int64_t j = 0; j < cols; ++j) {
            out[2 * j] = a[off[j]];
            out[2 * j + 1] = b[off[j]];
          }
        } else {
          for (int64_t j = 0; j < cols; ++j) out[2 * j] = a[off[j]];
        }
      }
    }
  }

  // out[2j] = a[j] - x_zp, out[2j + 1] = b[j] - x_zp (0 without b), for j < count (the rest of
  // the panel row stays zero).
  template <class T>
  void interleave(const uint8_t* a, const uint8_t* b, int64_t count, int16_t* out) const {
    const T* u = reinterpret_cast<const T*>(a);
    const T* v = reinterpret_cast<const T*>(b);
    const int32_t zp = x_zp_;
    if (v && count == kQGemmNr) {
      for (int j = 0; j < kQGemmNr; ++j) {
        out[2 * j] = static_cast<int16_t>(int32_t{u[j]} - zp);
        out[2 * j + 1] = static_cast<int16_t>(int32_t{v[j]} - zp);
      }
      return;
    }
    for (int64_t j = 0; j < count; ++j) {
      out[2 * j] = static_cast<int16_t>(int32_t{u[j]} - zp);
      out[2 * j + 1] = v ? static_cast<int16_t>(int32_t{v[j]} - zp) : int16_t{0};
    }
  }

  // The im2col rows as rows of A (row r at a + r * kp, padded with a zero to kp).
  void im2col_block(const uint8_t* x, int64_t n, int64_t g, int64_t p0, int64_t rows, int16_t* a,
                    int64_t kp) const {
    if (k_ % 2) {
      for (int64_t r = 0; r < rows; ++r) a[r * kp + k_] = 0;
    }
    im2col_runs(x, n, g, p0, rows,
                [&](int64_t k, int64_t r, int64_t count, const uint8_t* in, int64_t in_step) {
                  int16_t* out = a + r * kp + k;
                  if (!in) {
                    for (int64_t j = 0; j < count; ++j) out[j * kp] = 0;
                  } else {
                    shifted(in, in_step, count, out, kp);
                  }
                });
  }

  // A pointwise layer's pixel panels (qgemm_pack_b's layout, the pixels as columns): element
  // (r, k) at ((r / 16 * pairs + k / 2) * 16 + r % 16) * 2 + k % 2, k the input channel whose
  // pixels are contiguous; two channels at a time interleave into one pair row of a panel.
  // `panels` must hold zeros past k and past rows (the caller clears it).
  void pointwise_panels(const uint8_t* x, int64_t n, int64_t g, int64_t p0, int64_t rows,
                        int16_t* panels, int64_t pairs) const {
    // Pointwise: k is the input channel, whose pixels are contiguous; two channels at a
    // time interleave into one pair row of a panel (a loop the compiler vectorizes).
    const uint8_t* base = x + (n * c_ + g * gi_) * h_ * w_ + p0;
    const int64_t plane = h_ * w_;
    for (int64_t pr = 0; pr < pairs; ++pr) {
      const uint8_t* r0 = base + 2 * pr * plane;
      const uint8_t* r1 = 2 * pr + 1 < k_ ? r0 + plane : nullptr;
      for (int64_t q = 0; q * kQGemmNr < rows; ++q) {
        int16_t* out = panels + (q * pairs + pr) * kQGemmNr * 2;
        const int64_t cols = std::min<int64_t>(kQGemmNr, rows - q * kQGemmNr);
        if (x_signed_) {
          interleave<int8_t>(r0 + q * kQGemmNr, r1 ? r1 + q * kQGemmNr : nullptr, cols, out);
        } else {
          interleave<uint8_t>(r0 + q * kQGemmNr, r1 ? r1 + q * kQGemmNr : nullptr, cols, out);
        }
      }
    }
  }

  // Columns q in [q0, q1) of one input row (in[0] is column q0) as x - x_zp into the stride-2
  // phases: even columns to even[q / 2], odd ones to odd[q / 2].
  template <class T>
  void split_phases(const uint8_t* in, int64_t q0, int64_t q1, int16_t* even, int16_t* odd) const {
    const T* v = reinterpret_cast<const T*>(in);
    const int32_t zp = x_zp_;
    int64_t q = q0;
    if (q % 2 && q < q1) {
      odd[q / 2] = static_cast<int16_t>(int32_t{v[0]} - zp);
      ++q;
    }
    const int64_t pairs = (q1 - q) / 2;
    const T* p = v + (q - q0);
    int16_t* e = even + q / 2;
    int16_t* o = odd + q / 2;
    for (int64_t j = 0; j < pairs; ++j) {  // vectorizes (interleaved loads)
      e[j] = static_cast<int16_t>(int32_t{p[2 * j]} - zp);
      o[j] = static_cast<int16_t>(int32_t{p[2 * j + 1]} - zp);
    }
    q += 2 * pairs;
    if (q < q1) even[q / 2] = static_cast<int16_t>(int32_t{v[q - q0]} - zp);
  }

  // One channel plane. The plane is first copied to int16 x - x_zp with the padding as zeros,
  // split by column phase (column q goes to phase q % sw at q / sw), so that every filter tap
  // reads one contiguous run per output row; each tap then adds its weight times that run into
  // an int32 row (qdw_row: AVX2 where available).
  void depthwise_plane(const uint8_t* x, uint8_t* y, int64_t n, int64_t c, int32_t* acc,
                       std::vector<int16_t>& buf, std::vector<const int16_t*>& tap_rows) const {
    const int32_t* w = dw_weights_.data() + c * kh_ * kw_;
    const int32_t bias = bias_.empty() ? 0 : bias_[c];
    const float mult = multiplier_[rq_.per_column ? c : 0];
    const uint8_t* table =
        table_.empty() ? nullptr : table_.data() + (rq_.table_per_column ? c * 256 : 0);
    const int64_t hp = (oh_ - 1) * sh_ + (kh_ - 1) * dh_ + 1;
    const int64_t wp = (ow_ - 1) * sw_ + (kw_ - 1) * dw_ + 1;
    const int64_t lp = (wp + sw_ - 1) / sw_;  // one phase's length
    buf.assign(static_cast<size_t>(hp * sw_ * lp), 0);
    const int64_t step = x_step();
    for (int64_t r = 0; r < hp; ++r) {
      const int64_t ih = r - pt_;
      if (ih < 0 || ih >= h_) continue;
      const int64_t q0 = std::max<int64_t>(0, pl_), q1 = std::min(wp, w_ + pl_);  // inside
      if (q0 >= q1) continue;
      const uint8_t* in = x_row(x, n, c, ih) + (q0 - pl_) * step;
      if (sw_ == 2 && step == 1) {  // both phases in one pass (a strided copy was scalar)
        int16_t* even = buf.data() + (r * 2) * lp;
        int16_t* odd = even + lp;
        if (x_signed_) {
          split_phases<int8_t>(in, q0, q1, even, odd);
        } else {
          split_phases<uint8_t>(in, q0, q1, even, odd);
        }
        continue;
      }
      for (int64_t ph = 0; ph < sw_; ++ph) {
        // Columns q in [q0, q1) with q % sw == ph.
        const int64_t first = q0 + ((ph - q0 % sw_) % sw_ + sw_) % sw_;
        if (first >= q1) continue;
        const int64_t count = (q1 - first + sw_ - 1) / sw_;
        int16_t* out = buf.data() + (r * sw_ + ph) * lp + first / sw_;
        shifted(in + (first - q0) * step, sw_ * step, count, out, 1);
      }
    }
    const QDwRowFn row_step = qdw_row();
    const QRequantFn requant = qrequant();
    const int64_t taps = kh_ * kw_;
    tap_rows.resize(static_cast<size_t>(taps));
    for (int64_t oh = 0; oh < oh_; ++oh) {
      std::fill(acc, acc + ow_, bias);
      for (int64_t kh = 0; kh < kh_; ++kh) {
        const int64_t r = oh * sh_ + kh * dh_;
        for (int64_t kw = 0; kw < kw_; ++kw) {
          const int64_t q = kw * dw_;
          tap_rows[kh * kw_ + kw] = buf.data() + (r * sw_ + q % sw_) * lp + q / sw_;
        }
      }
      row_step(acc, tap_rows.data(), w, taps, ow_);
      uint8_t* out =
          nhwc_ ? y + ((n * oh_ + oh) * ow_) * oc_ + c : y + ((n * oc_ + c) * oh_ + oh) * ow_;
      const bool direct = !nhwc_ && !table;
      // The bytes go straight to an NCHW row, or through a row buffer (after the int32 sums).
      uint8_t* q = direct ? out : reinterpret_cast<uint8_t*>(acc + ow_);
      requant(QRequantRun{acc, ow_, nullptr, &mult, false, rq_.zero_point, rq_.is_signed, q});
      if (direct) continue;
      const int64_t out_step = nhwc_ ? oc_ : 1;
      if (table) {
        for (int64_t ow = 0; ow < ow_; ++ow) out[ow * out_step] = table[q[ow]];
      } else {
        for (int64_t ow = 0; ow < ow_; ++ow) out[ow * out_step] = q[ow];
      }
    }
  }

  bool nhwc_ = false, x_signed_ = false, depthwise_ = false;
  bool saturating_ = false;                        // u8s8_saturating (init_saturating)
  int32_t raw_zero_ = 0;                           // the raw zero point (padding) then
  std::vector<int32_t> sat_offset_;                // raw_zero_ * colsum(w) per channel
  std::vector<std::vector<int8_t>> packed8_;       // per group, ORT's order
  std::vector<std::vector<uint8_t>> sat_scratch_;  // per thread im2col rows + NCHW tile
  std::vector<uint8_t> nhwc_raw_;                  // an NCHW input's raw bytes as NHWC
  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, oc_ = 0, oh_ = 0, ow_ = 0, kh_ = 0, kw_ = 0;
  int64_t g_ = 1, gi_ = 0, go_ = 0, k_ = 0;
  int64_t sh_ = 1, sw_ = 1, dh_ = 1, dw_ = 1, pt_ = 0, pl_ = 0;
  int32_t x_zp_ = 0;
  std::vector<float> multiplier_;
  std::vector<int32_t> bias_, dw_weights_;
  std::vector<uint8_t> table_;  // Node::Quantized::table
  // Per group: the packed filter (NHWC), or its int16 rows of kp (NCHW, qgemm_cols).
  std::vector<std::vector<int16_t>> packed_;
  Requant rq_;
  std::vector<std::vector<int16_t>> scratch_;             // per thread im2col rows
  std::vector<std::vector<int16_t>> pack_scratch_;        // per thread packed pixel panels (NCHW)
  std::vector<std::vector<int32_t>> row_scratch_;         // per thread depthwise sums
  std::vector<std::vector<const int16_t*>> tap_scratch_;  // per thread depthwise tap rows
  std::vector<std::vector<int64_t>> offset_scratch_;      // per thread pixel offsets (NCHW)
  std::vector<int16_t> padded_;                           // NCHW: the padded input (pad_input)
  std::vector<int64_t> k_offset_;  // NCHW: element k's offset in a padded group's planes
  int64_t hp_ = 0, wp_ = 0;        // NCHW: padded plane size
};

// matmul of a (u)int8 x (..., K) by a constant (K, N): rows of x - x_zp in blocks of
// kRowsPerTask times the packed matrix.
class QMatmulKernel final : public Kernel {
 public:
  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<BinaryParams>();
    const TensorView& x = cc.view(p.a);
    const TensorView& b = cc.view(p.b);
    if (b.rank() != 2 || x.rank() < 2 || !cc.is_constant(p.b)) return false;
    if (b.data_type != DataType::kFloat32) return false;
    k_ = b.shape[0], n_ = b.shape[1];
    if (x.shape.back() != k_) return false;
    m_ = static_cast<int64_t>(x.count) / k_;
    x_signed_ = x.data_type == DataType::kInt8;
    const Node::Quantized& q = *node.quantized;
    x_zp_ = q.input_zero_point;
    float_output_ = q.float_output;
    if (float_output_ && cc.view(OperandRef{node.outputs[0]}).data_type != DataType::kFloat32) {
      return false;
    }
    multiplier_ = q.multiplier;
    if (multiplier_.size() != 1 && static_cast<int64_t>(multiplier_.size()) != n_) return false;
    rq_.per_column = multiplier_.size() != 1;
    rq_.multiplier = multiplier_.data();
    rq_.zero_point = q.output_zero_point;
    rq_.is_signed = q.requant_signed;
    table_ = q.table;
    if (!table_.empty() && table_.size() != 256 && static_cast<int64_t>(table_.size()) != 256 * n_)
      return false;
    rq_.table = table_.empty() ? nullptr : table_.data();
    rq_.table_per_column = table_.size() > 256;
    const float* bf = b.as<float>();
    std::vector<int16_t> b16(static_cast<size_t>(k_ * n_));
    for (size_t i = 0; i < b16.size(); ++i) b16[i] = static_cast<int16_t>(bf[i]);
    // AVX-512 VNNI: weights within int8 multiply the raw (u)int8 x on the u8s8 tiles (int8 x
    // shifted by 128 to uint8), the zero point's and that shift's x * colsum(w) subtracted:
    // the same exact sums, for the float output and the requantized one alike.
    // Weights spanning at most 256 values but not within int8 (uint8 weights minus their
    // zero point) are shifted by w_shift_ into int8; w_shift_ * rowsum(a) is added back.
    uk8_ = qgemm_u8s8_ukernel();
    int32_t lo = 0, hi = 0;
    for (int16_t v : b16) lo = std::min<int32_t>(lo, v), hi = std::max<int32_t>(hi, v);
    w_shift_ = lo >= -128 && hi <= 127 ? 0 : lo + 128;
    // |sums| stay in int32: 255 * 255 * k for the shifted route.
    if (hi - lo > 255 || (w_shift_ != 0 && k_ > 16384)) uk8_ = nullptr;
    if (q.u8s8_saturating) {
      // ORT's pair-saturating sum of the raw uint8 x (int8 x flipped by 128) and the int8
      // weights (integer_matmul.cc, qdq_fusion.cc checked them): only those tiles compute
      // it, on every ISA; the zero point's x_zp * colsum(w) is subtracted exactly after.
      if (w_shift_ != 0) return false;
      uk8_ = qgemm_u8s8_sat_ukernel();
    } else if (!uk8_ && hi - lo <= 255 && (w_shift_ == 0 || k_ <= 16384) &&
               !any_pair_saturates(b16, w_shift_)) {
      // Without VNNI: where no pair of the int8 weights can saturate for any uint8 pair of
      // x (int8 x flipped by 128 included), the pair-saturating tiles are exact, on half
      // the weight bytes of the int16 ones.
      uk8_ = qgemm_u8s8_sat_ukernel();
    }
    if (uk8_) {
      std::vector<int8_t> b8(b16.size());
      for (size_t i = 0; i < b16.size(); ++i) b8[i] = static_cast<int8_t>(b16[i] - w_shift_);
      packed8_ = qgemm_pack_b_s8(b8.data(), k_, n_);
      const int32_t shift = x_zp_ + (x_signed_ ? 128 : 0);
      offset_.assign(static_cast<size_t>(n_), 0);
      for (int64_t i = 0; i < k_; ++i) {
        for (int64_t j = 0; j < n_; ++j) offset_[j] += shift * b16[i * n_ + j];
      }
      // Raw uint8 rows of a length the tiles read (k a multiple of 4) are read in place.
      a_in_place_ = !x_signed_ && w_shift_ == 0 && qgemm_kq(k_) == k_;
      if (!a_in_place_) a8_.assign(static_cast<size_t>(m_ * qgemm_kq(k_)), 0);
      if (w_shift_ != 0) row_add_.assign(static_cast<size_t>(m_), 0);
    } else {
      packed_ = qgemm_pack_b(b16.data(), n_, 1, k_, n_);
      if (float_output_) a16_.assign(static_cast<size_t>(m_ * qgemm_kp(k_)), 0);
    }
    return true;
  }

  Status run(KernelContext& ctx) override {
    const uint8_t* x = ctx.in(ctx.params<BinaryParams>().a).data;
    if (float_output_) return run_float(x, ctx.out().as<float>(), ctx.pool());
    uint8_t* y = ctx.out().data;
    ThreadPool* pool = ctx.pool();
    if (uk8_) return run_u8(x, y, pool);
    const int threads = pool ? pool->num_threads() : 1;
    if (static_cast<int>(scratch_.size()) < threads) scratch_.resize(threads);
    const QGemmUkernel uk = qgemm_ukernel();
    const int64_t kp = qgemm_kp(k_), blocks = (m_ + kRowsPerTask - 1) / kRowsPerTask;
    auto task = [&](int64_t t, int thread) {
      const int64_t m0 = t * kRowsPerTask, rows = std::min(kRowsPerTask, m_ - m0);
      std::vector<int16_t>& a = scratch_[thread];
      a.assign(static_cast<size_t>(kRowsPerTask * kp), 0);
      for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* in = x + (m0 + r) * k_;
        for (int64_t i = 0; i < k_; ++i) {
          const int32_t v = x_signed_ ? int32_t{static_cast<int8_t>(in[i])} : int32_t{in[i]};
          a[r * kp + i] = static_cast<int16_t>(v - x_zp_);
        }
      }
      qgemm_rows(uk, a.data(), kp, rows, packed_.data(), k_, n_, rq_, y + m0 * n_, n_, 1);
    };
    run_tasks(pool, blocks, kRowsPerTask * k_ * n_, task);
    return Status::ok();
  }

 private:
  static constexpr int64_t kPanelsPerTask = 8;  // 128 columns

  // float(sum (x - x_zp) * w) (Node::Quantized::float_output): A converted to int16 rows once,
  // then tasks of (row block, column block); each sum is exact, so any split gives the same bits.
  Status run_float(const uint8_t* x, float* y, ThreadPool* pool) {
    if (uk8_) return run_float_u8(x, y, pool);
    const int64_t kp = qgemm_kp(k_);
    for (int64_t r = 0; r < m_; ++r) {
      const uint8_t* in = x + r * k_;
      int16_t* a = a16_.data() + r * kp;
      if (x_signed_) {
        for (int64_t i = 0; i < k_; ++i) a[i] = static_cast<int16_t>(int8_t(in[i]) - x_zp_);
      } else {
        for (int64_t i = 0; i < k_; ++i) a[i] = static_cast<int16_t>(in[i] - x_zp_);
      }
    }
    const QGemmUkernel uk = qgemm_ukernel();
    const int64_t row_blocks = (m_ + kRowsPerTask - 1) / kRowsPerTask;
    const int64_t col_blocks = (qgemm_panels(n_) + kPanelsPerTask - 1) / kPanelsPerTask;
    const int64_t panel_size = kp / 2 * kQGemmNr * 2;
    auto task = [&](int64_t t, int) {
      const int64_t m0 = t / col_blocks * kRowsPerTask, rows = std::min(kRowsPerTask, m_ - m0);
      const int64_t p0 = t % col_blocks * kPanelsPerTask, j0 = p0 * kQGemmNr;
      const int64_t cols = std::min(kPanelsPerTask * kQGemmNr, n_ - j0);
      qgemm_rows_f32(uk, a16_.data() + m0 * kp, kp, rows, packed_.data() + p0 * panel_size, k_,
                     cols, y + m0 * n_ + j0, n_);
    };
    run_tasks(pool, row_blocks * col_blocks, std::min(kRowsPerTask, m_) * k_ * 128, task);
    return Status::ok();
  }

  // The uint8 rows the u8s8 tiles read (x itself, or flipped / padded into a8_), and each
  // row's w_shift_ * rowsum in row_add_.
  const uint8_t* u8_rows(const uint8_t* x) {
    if (a_in_place_) return x;
    const int64_t kq = qgemm_kq(k_);
    const uint8_t flip = x_signed_ ? 0x80 : 0;  // int8 + 128 as uint8
    for (int64_t r = 0; r < m_; ++r) {
      const uint8_t* in = x + r * k_;
      uint8_t* a = a8_.data() + r * kq;
      for (int64_t i = 0; i < k_; ++i) a[i] = in[i] ^ flip;
      if (w_shift_ != 0) {
        int32_t sum = 0;
        for (int64_t i = 0; i < k_; ++i) sum += a[i];
        row_add_[r] = w_shift_ * sum;
      }
    }
    return a8_.data();
  }

  // Tasks of (row block, column block) over the u8s8 tiles: fn(a rows, m0, rows, first panel,
  // first column, columns).
  template <class F>
  void u8_tasks(ThreadPool* pool, F&& fn) const {
    const int64_t row_blocks = (m_ + kRowsPerTask - 1) / kRowsPerTask;
    const int64_t col_blocks = (qgemm_panels(n_) + kPanelsPerTask - 1) / kPanelsPerTask;
    run_tasks(pool, row_blocks * col_blocks, std::min(kRowsPerTask, m_) * k_ * 128,
              [&](int64_t t, int) {
                const int64_t m0 = t / col_blocks * kRowsPerTask;
                const int64_t rows = std::min(kRowsPerTask, m_ - m0);
                const int64_t p0 = t % col_blocks * kPanelsPerTask, j0 = p0 * kQGemmNr;
                fn(m0, rows, p0, j0, std::min(kPanelsPerTask * kQGemmNr, n_ - j0));
              });
  }

  Status run_float_u8(const uint8_t* x, float* y, ThreadPool* pool) {
    const uint8_t* a = u8_rows(x);
    const int64_t lda = a_in_place_ ? k_ : qgemm_kq(k_);
    const int64_t panel_size = qgemm_kq(k_) / 4 * kQGemmNr * 4;
    const int32_t* row_add = row_add_.empty() ? nullptr : row_add_.data();
    u8_tasks(pool, [&](int64_t m0, int64_t rows, int64_t p0, int64_t j0, int64_t cols) {
      qgemm_rows_u8_f32(uk8_, a + m0 * lda, lda, rows, packed8_.data() + p0 * panel_size, k_, cols,
                        offset_.data() + j0, row_add ? row_add + m0 : nullptr, y + m0 * n_ + j0,
                        n_);
    });
    return Status::ok();
  }

  // The requantized output on the u8s8 tiles: the same exact sums as the int16 route, so the
  // same bytes.
  Status run_u8(const uint8_t* x, uint8_t* y, ThreadPool* pool) {
    const uint8_t* a = u8_rows(x);
    const int64_t lda = a_in_place_ ? k_ : qgemm_kq(k_);
    const int64_t panel_size = qgemm_kq(k_) / 4 * kQGemmNr * 4;
    const int32_t* row_add = row_add_.empty() ? nullptr : row_add_.data();
    u8_tasks(pool, [&](int64_t m0, int64_t rows, int64_t p0, int64_t j0, int64_t cols) {
      Requant rq = rq_;  // from column j0 on
      if (rq.per_column) rq.multiplier += j0;
      if (rq.table && rq.table_per_column) rq.table += j0 * 256;
      qgemm_rows_u8(uk8_, a + m0 * lda, lda, rows, packed8_.data() + p0 * panel_size, k_, cols,
                    offset_.data() + j0, row_add ? row_add + m0 : nullptr, rq, y + m0 * n_ + j0,
                    n_);
    });
    return Status::ok();
  }

  // Whether a pair (2j, 2j + 1) of some column of the k_ x n_ weights b16 - shift can
  // saturate in the pair-saturating tiles (an odd k_'s last row pairs with 0).
  bool any_pair_saturates(const std::vector<int16_t>& b16, int32_t shift) const {
    for (int64_t i = 0; i < k_; i += 2) {
      for (int64_t j = 0; j < n_; ++j) {
        const int32_t b0 = b16[i * n_ + j] - shift;
        const int32_t b1 = i + 1 < k_ ? b16[(i + 1) * n_ + j] - shift : 0;
        if (qgemm_u8s8_pair_saturates(b0, b1)) return true;
      }
    }
    return false;
  }

  int64_t m_ = 0, k_ = 0, n_ = 0;
  // The u8s8 tiles (VNNI; or the pair-saturating ones for u8s8_saturating and where no pair
  // can saturate), else null
  QGemmU8Ukernel uk8_ = nullptr;
  std::vector<int8_t> packed8_;
  std::vector<int32_t> offset_;   // (x_zp [+ 128 for int8 x]) * colsum(w) per column
  int32_t w_shift_ = 0;           // the int8 weights are w - w_shift_
  std::vector<int32_t> row_add_;  // w_shift_ * rowsum(a) per row (one run at a time)
  std::vector<uint8_t> a8_;       // the flipped / padded rows (unless a_in_place_)
  bool a_in_place_ = false;       // the tiles read x itself
  bool x_signed_ = false, float_output_ = false;
  std::vector<int16_t> a16_;  // float_output on the int16 tiles: the rows of x - x_zp
  int32_t x_zp_ = 0;
  std::vector<float> multiplier_;
  Requant rq_;
  std::vector<uint8_t> table_;
  std::vector<int16_t> packed_;
  std::vector<std::vector<int16_t>> scratch_;
};

}  // namespace

std::unique_ptr<Kernel> make_quantized_kernel(const Node& node, const CompileContext& cc) {
  if (!node.quantized) return nullptr;
  if (node.quantized->dynamic_lstm) return make_dynamic_lstm_kernel(node, cc);
  if (node.quantized->fake_quantize) {
    return node.kind == OpKind::kQuantizeLinear ? make_fake_quantize_kernel(node, cc) : nullptr;
  }
  if (node.kind == OpKind::kConv2d) {
    auto k = std::make_unique<QConv2dKernel>();
    if (k->init(node, cc)) return k;
  } else if (node.kind == OpKind::kMatmul) {
    auto k = std::make_unique<QMatmulKernel>();
    if (k->init(node, cc)) return k;
  }
  return nullptr;
}

}  // namespace webnn
