// convTranspose2d (float32) as implicit GEMMs on NHWC data, one per output phase.
//
// Output pixel (oh, ow) receives x[ih][iw] * w[kh][kw] where oh + pad_top = ih * stride_h +
// kh * dil_h (likewise for columns). Output rows of one phase (oh % stride_h) therefore all
// take the same filter rows kh, and their input rows ih advance by one per phase row; the same
// holds for columns. So each phase (ph, pw) is an ordinary convolution-like GEMM: A rows are
// the phase's output pixels of one output row, read in place through a table of per-tap input
// pixel pointers (out-of-range taps point at zeros), B is the filter of that phase's taps
// packed once (rows (tap, input channel), columns output channels), and C is written straight
// into the output with a row stride of stride_w pixels. No scatter-add, no col2im buffer, and
// the k == stride case (no overlap, e.g. 2x2 stride 2) is one tap per phase.
// When the filter width equals the column stride (no dilation, padding or extra width), the
// column phases are merged: A rows are input pixels and B's columns are (kw, output channel),
// which land side by side in the output row, so N grows by k_w (det's 24 -> 1 layer has N = 2
// instead of 1).
// NCHW tensors are transposed to NHWC around it, as conv2d does.
#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/cpu/conv_filter.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/transpose_batch.h"

namespace webnn {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The non-negative remainder of a by b (b > 0).
int64_t mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

struct Phase {
  int64_t ph = 0, pw = 0;       // first output row / column of the phase
  int64_t rows = 0, cols = 0;   // output rows / columns in it
  std::vector<int64_t> kh, kw;  // the taps (one entry per tap, row-major over kh x kw)
  std::vector<int64_t> dh, dw;  // input row (column) offset of each tap: ih = r + dh (iw = j + dw)
  size_t weights = 0;           // offset of its packed filter (groups consecutive)
};

// The geometry of a convTranspose2d node, read by both kernels (sizes, filter addressing).
struct ConvTransposeShape {
  // False when the node is not one the cpu kernels take (float32_conv_operands), is empty, or
  // its filter does not match the channels and groups.
  bool read_shape(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<ConvTranspose2dParams>();
    if (!float32_conv_operands<ConvTranspose2dParams>(node, cc)) return false;
    const TensorView& x = cc.view(p.input);
    const TensorView& w = cc.view(p.filter);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (x.count == 0 || y.count == 0 || w.count == 0) return false;
    nhwc_ = p.input_layout == "nhwc";
    const int c_axis = nhwc_ ? 3 : 1, h_axis = nhwc_ ? 1 : 2, w_axis = nhwc_ ? 2 : 3;
    batch_ = x.shape[0];
    in_c_ = x.shape[c_axis];
    in_h_ = x.shape[h_axis];
    in_w_ = x.shape[w_axis];
    out_c_ = y.shape[c_axis];
    out_h_ = y.shape[h_axis];
    out_w_ = y.shape[w_axis];
    filter_ = FilterLayout(p.filter_layout, w.shape);
    k_h_ = filter_.size('h');
    k_w_ = filter_.size('w');
    groups_ = p.groups;
    if (groups_ < 1 || in_c_ % groups_ != 0 || filter_.size('i') != in_c_) return false;
    group_in_ = in_c_ / groups_;
    group_out_ = filter_.size('o');
    if (group_out_ * groups_ != out_c_) return false;
    if (p.strides) stride_h_ = (*p.strides)[0], stride_w_ = (*p.strides)[1];
    if (p.dilations) dil_h_ = (*p.dilations)[0], dil_w_ = (*p.dilations)[1];
    if (p.padding) pad_top_ = (*p.padding)[0], pad_left_ = (*p.padding)[2];
    return true;
  }

  bool nhwc_ = false;
  int64_t batch_ = 0, in_c_ = 0, in_h_ = 0, in_w_ = 0, out_c_ = 0, out_h_ = 0, out_w_ = 0;
  int64_t k_h_ = 0, k_w_ = 0, groups_ = 1, group_in_ = 0, group_out_ = 0;
  int64_t stride_h_ = 1, stride_w_ = 1, dil_h_ = 1, dil_w_ = 1, pad_top_ = 0, pad_left_ = 0;
  FilterLayout filter_{"iohw", {0, 0, 0, 0}};
};

class ConvTranspose2dKernel final : public Kernel, private ConvTransposeShape {
 public:
  explicit ConvTranspose2dKernel(const SimdKernels& simd) : simd_(simd) {}

  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<ConvTranspose2dParams>();
    const TensorView& x = cc.view(p.input);
    const TensorView& w = cc.view(p.filter);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (!read_shape(node, cc)) return false;
    const int64_t stride_h = stride_h_, stride_w = stride_w_, dil_h = dil_h_, dil_w = dil_w_;
    const int64_t pad_top = pad_top_, pad_left = pad_left_;
    merged_ = groups_ == 1 && k_w_ == stride_w && dil_w == 1 && pad_left == 0 &&
              out_w_ == in_w_ * stride_w;
    n_cols_ = merged_ ? k_w_ * group_out_ : group_out_;

    size_t total = 0;
    for (int64_t ph = 0; ph < std::min(stride_h, out_h_); ++ph) {
      for (int64_t pw = 0; pw < (merged_ ? 1 : std::min(stride_w, out_w_)); ++pw) {
        Phase f;
        f.ph = ph;
        f.pw = pw;
        f.rows = (out_h_ - ph + stride_h - 1) / stride_h;
        f.cols = merged_ ? in_w_ : (out_w_ - pw + stride_w - 1) / stride_w;
        for (int64_t kh = 0; kh < k_h_; ++kh) {
          const int64_t th = ph + pad_top - kh * dil_h;
          if (mod(th, stride_h) != 0) continue;
          for (int64_t kw = 0; kw < (merged_ ? 1 : k_w_); ++kw) {
            const int64_t tw = pw + pad_left - kw * dil_w;
            if (mod(tw, stride_w) != 0) continue;
            f.kh.push_back(kh);
            f.kw.push_back(kw);
            f.dh.push_back(th / stride_h);  // exact division: th is a multiple of stride_h
            f.dw.push_back(tw / stride_w);
          }
        }
        size_t floats = 0;
        if (!packed_b_floats(static_cast<int64_t>(f.kh.size()) * group_in_, n_cols_, simd_.gemm_nr,
                             &floats)) {
          return false;
        }
        f.weights = total;
        total += floats * static_cast<size_t>(groups_);
        phases_.push_back(std::move(f));
        max_jobs_ = std::max(max_jobs_, batch_ * phases_.back().rows * groups_);
      }
    }
    weights_.reserve(std::max<size_t>(1, total));
    // Zeros for padding taps (group_in_ floats are read) and for the B of tap-less phases.
    zero_.reserve(static_cast<size_t>(std::max<int64_t>(group_in_, simd_.gemm_nr) + 16));
    zero_.zero();
    jobs_.reserve(static_cast<size_t>(max_jobs_));
    if (merged_) merged_bias_.reserve(static_cast<size_t>(n_cols_));
    if (!nhwc_) {
      in_nhwc_.reserve(static_cast<size_t>(x.count));
      out_nhwc_.reserve(static_cast<size_t>(y.count));
    }
    filter_constant_ = cc.is_constant(p.filter);
    if (filter_constant_) prepare_weights(w.as<float>());
    return true;
  }

  // NHWC: every output element is written once, by one GEMM block of its phase, and is final
  // then; the fused epilogue runs on each block while it is in cache. NCHW outputs are
  // transposed at the end: the caller applies it after.
  bool set_output_sink(const OutputSink* sink) override {
    if (!nhwc_) return false;
    sink_ = sink;
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<ConvTranspose2dParams>();
    if (!filter_constant_) prepare_weights(ctx.in(p.filter).as<float>());
    const float* x = ctx.in(p.input).as<float>();
    const float* bias = p.bias.present() ? ctx.in(p.bias).as<float>() : nullptr;
    if (bias && merged_) {
      // Columns (kw, o): the bias repeated per kw.
      for (int64_t c = 0; c < n_cols_; ++c) merged_bias_.data()[c] = bias[c % group_out_];
      bias = merged_bias_.data();
    }
    float* y = ctx.out().as<float>();
    ThreadPool* pool = ctx.pool();
    if (!nhwc_) {
      transpose_batch(simd_, x, batch_, in_c_, in_h_ * in_w_, in_nhwc_.data(), pool);
      x = in_nhwc_.data();
    }
    float* out = nhwc_ ? y : out_nhwc_.data();
    for (const Phase& f : phases_) run_phase(f, x, bias, out, y, pool);
    if (!nhwc_) transpose_batch(simd_, out, batch_, out_h_ * out_w_, out_c_, y, pool);
    return Status::ok();
  }

 private:
  // Per phase and group, B packed for the GEMM micro-kernel: panels of gemm_nr output
  // channels (merged phases: (kw, output channel)), rows (tap, input channel of the group);
  // columns past the last are zero.
  void prepare_weights(const float* w) {
    const int nr = simd_.gemm_nr;
    for (const Phase& f : phases_) {
      const int64_t taps = static_cast<int64_t>(f.kh.size());
      const int64_t k = taps * group_in_;
      const int64_t panels = (n_cols_ + nr - 1) / nr;
      const size_t group_floats = static_cast<size_t>(panels * k * nr);
      for (int64_t g = 0; g < groups_; ++g) {
        float* dst = weights_.data() + f.weights + g * group_floats;
        for (int64_t pnl = 0; pnl < panels; ++pnl) {
          for (int64_t t = 0; t < taps; ++t) {
            for (int64_t i = 0; i < group_in_; ++i) {
              float* row = dst + (pnl * k + t * group_in_ + i) * nr;
              for (int64_t j = 0; j < nr; ++j) {
                const int64_t col = pnl * nr + j;
                const int64_t o = col % group_out_;
                const int64_t kw = merged_ ? col / group_out_ : f.kw[t];
                row[j] = col < n_cols_ ? w[filter_.at(o, g * group_in_ + i, f.kh[t], kw)] : 0.0f;
              }
            }
          }
        }
      }
    }
  }

  struct TableCtx {
    const ConvTranspose2dKernel* self;
    const Phase* phase;
    const float* x;
  };

  // Input pixel pointers for tile [m0, m0 + gemm_mr) of job j (one phase row of one image and
  // group): dst[tap * gemm_mr + r]; taps outside the input and rows past the end point at zeros.
  static const float* const* tile(const void* ctx, int64_t j, int64_t m0, const float** dst) {
    const auto& c = *static_cast<const TableCtx*>(ctx);
    const ConvTranspose2dKernel& k = *c.self;
    const Phase& f = *c.phase;
    const int mr = k.simd_.gemm_mr;
    const int64_t rows = j / k.groups_;  // image * phase rows + phase row
    const int64_t n = rows / f.rows, r = rows % f.rows;
    const int64_t taps = static_cast<int64_t>(f.kh.size());
    const float* zero = k.zero_.data();
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t ih = r + f.dh[t];
      const bool row_inside = ih >= 0 && ih < k.in_h_;
      const float* base = c.x + (n * k.in_h_ + (row_inside ? ih : 0)) * k.in_w_ * k.in_c_;
      for (int i = 0; i < mr; ++i) {
        const int64_t col = m0 + i;
        const int64_t iw = col + f.dw[t];
        const bool inside = row_inside && col < f.cols && iw >= 0 && iw < k.in_w_;
        dst[t * mr + i] = inside ? base + iw * k.in_c_ : zero;
      }
    }
    return dst;
  }

  void run_phase(const Phase& f, const float* x, const float* bias, float* out, float* y,
                 ThreadPool* pool) {
    const int nr = simd_.gemm_nr;
    const int64_t taps = static_cast<int64_t>(f.kh.size());
    const size_t group_floats =
        static_cast<size_t>(((n_cols_ + nr - 1) / nr) * taps * group_in_ * nr);
    const int64_t count = batch_ * f.rows * groups_;
    jobs_.resize(static_cast<size_t>(count));  // within the capacity reserved at init
    for (int64_t j = 0; j < count; ++j) {
      const int64_t g = j % groups_, rows = j / groups_;
      const int64_t n = rows / f.rows, oh = f.ph + (rows % f.rows) * stride_h_;
      GemmJob& job = jobs_[j];
      job.m = f.cols;
      job.n = n_cols_;
      job.taps = taps;
      job.k_per_tap = group_in_;
      job.a_offset = g * group_in_;
      job.zero = zero_.data();
      job.b_packed = taps > 0 ? weights_.data() + f.weights + g * group_floats : zero_.data();
      job.c = out + ((n * out_h_ + oh) * out_w_ + f.pw) * out_c_ + g * group_out_;
      job.ldc = stride_w_ * out_c_;
      job.col_bias = bias ? bias + g * group_out_ : nullptr;
    }
    TableCtx tc{this, &f, x};
    GemmEpilogue ep;
    struct SinkCtx {
      const OutputSink* sink;
      float* y;
    } sc{sink_, y};
    if (sink_ && nhwc_) {
      // A block's rows are output pixels stride_w apart (ldc); merged phases fill whole rows.
      ep.post = [](const void* ctx, float* c, int64_t ldc, int64_t rows, int64_t cols) {
        const auto& k = *static_cast<const SinkCtx*>(ctx);
        if (cols == ldc) return k.sink->apply(k.y, c - k.y, rows * cols);
        for (int64_t r = 0; r < rows; ++r) k.sink->apply(k.y, (c - k.y) + r * ldc, cols);
      };
      ep.post_ctx = &sc;
    }
    run_gemm(simd_, jobs_, ep, GemmAFn{tile, &tc}, GemmBFn{}, scratch_, pool);
  }

  const SimdKernels& simd_;
  const OutputSink* sink_ = nullptr;
  bool filter_constant_ = false, merged_ = false;
  int64_t n_cols_ = 0;  // GEMM columns per group
  std::vector<Phase> phases_;
  int64_t max_jobs_ = 0;
  AlignedFloats weights_, zero_, in_nhwc_, out_nhwc_, merged_bias_;
  std::vector<GemmJob> jobs_;
  GemmScratch scratch_;
};

// NCHW input whose taps never overlap ((k - 1) * dilation < stride on both axes, e.g. det's
// 2x2 stride 2): per image and group, a GEMM with the filter as A (rows (kh, kw, output
// channel), columns the group's input channels) and the image's channels x pixels matrix as B
// (read in place, packed per block), so N is the pixel count however few output channels there
// are. Each row of the product is one tap's contribution to one output plane; as no two taps
// meet, the planes are then written by strided copies (the bias added by the GEMM), and output
// pixels that no tap reaches hold the bias. The work goes in bands of input rows whose product
// fits in L2 (one task each: GEMM, then the band's copies), so the product never travels to
// memory. Every output is a single dot product + bias, as in the NHWC path.
// An NHWC input whose output has one channel (det's last 24 -> 1 layer) takes the same path:
// its output plane is laid out alike in both layouts, and B's panels (channels x nr pixels) are
// packed by SIMD transposes of nr pixels' channels.
class ConvTranspose2dPlanarKernel final : public Kernel, private ConvTransposeShape {
 public:
  explicit ConvTranspose2dPlanarKernel(const SimdKernels& simd) : simd_(simd) {}

  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<ConvTranspose2dParams>();
    const TensorView& w = cc.view(p.filter);
    if (!read_shape(node, cc)) return false;
    if (nhwc_ && (out_c_ != 1 || groups_ != 1)) return false;
    if ((k_h_ - 1) * dil_h_ >= stride_h_ || (k_w_ - 1) * dil_w_ >= stride_w_) return false;
    // Every output pixel is reached by exactly one tap only in the exact tiling case.
    covered_ = k_h_ == stride_h_ && k_w_ == stride_w_ && dil_h_ == 1 && dil_w_ == 1 &&
               pad_top_ == 0 && pad_left_ == 0 && out_h_ == in_h_ * stride_h_ &&
               out_w_ == in_w_ * stride_w_;
    row_covered_ =
        k_w_ == stride_w_ && dil_w_ == 1 && pad_left_ == 0 && out_w_ == in_w_ * stride_w_;
    rows_ = k_h_ * k_w_ * group_out_;
    // Bands of whole input rows whose product (rows_ x band pixels) is about 256 KB.
    band_rows_ = std::clamp<int64_t>((int64_t{65536} / rows_) / in_w_, 1, in_h_);
    bands_ = (in_h_ + band_rows_ - 1) / band_rows_;
    a_.reserve(static_cast<size_t>(groups_ * rows_ * group_in_));
    row_bias_.reserve(static_cast<size_t>(groups_ * rows_));
    tables_.resize(static_cast<size_t>(groups_));
    for (int64_t g = 0; g < groups_; ++g) {
      tables_[g].a = {a_.data() + g * rows_ * group_in_};
      tables_[g].lda = {group_in_};
      tables_[g].rows = rows_;
      tables_[g].mr = simd_.gemm_mr;
    }
    filter_constant_ = cc.is_constant(p.filter);
    if (filter_constant_) prepare_weights(w.as<float>());
    return true;
  }

  // When the taps tile the output exactly (covered_), a band's output rows are final once its
  // copies are done, in every plane: the fused epilogue runs on them while they are in cache.
  bool set_output_sink(const OutputSink* sink) override {
    if (!covered_) return false;
    sink_ = sink;
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<ConvTranspose2dParams>();
    if (!filter_constant_) prepare_weights(ctx.in(p.filter).as<float>());
    const float* x = ctx.in(p.input).as<float>();
    const float* bias = p.bias.present() ? ctx.in(p.bias).as<float>() : nullptr;
    float* y = ctx.out().as<float>();
    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->num_threads() : 1;
    if (bias) {
      for (int64_t g = 0; g < groups_; ++g) {
        for (int64_t r = 0; r < rows_; ++r) {
          row_bias_.data()[g * rows_ + r] = bias[g * group_out_ + r % group_out_];
        }
      }
    }
    if (per_thread_.size() < static_cast<size_t>(threads)) per_thread_.resize(threads);
    for (PerThread& t : per_thread_) {
      t.col.reserve(static_cast<size_t>(rows_ * band_rows_ * in_w_));
      t.jobs.resize(1);
    }
    const int64_t plane = out_h_ * out_w_;
    if (!covered_) {
      // Pixels no tap reaches keep the bias; the tasks below overwrite the others.
      parallel_chunks(
          pool, batch_ * out_c_, std::max<int64_t>(1, 16384 / plane), [&](int64_t b, int64_t e) {
            for (int64_t q = b; q < e; ++q) {
              std::fill(y + q * plane, y + (q + 1) * plane, bias ? bias[q % out_c_] : 0.0f);
            }
          });
    }
    // Bands of at most band_rows_, at least 4 per thread when the image has the rows (a
    // single image split 7 ways leaves a second thread idle a quarter of the time).
    int64_t bands = bands_, band_rows = band_rows_;
    if (threads > 1 && batch_ * groups_ * bands < 4 * threads) {
      bands = std::min(in_h_, ceil_div(4 * threads, batch_ * groups_));
      band_rows = std::min(band_rows_, ceil_div(in_h_, bands));
      bands = ceil_div(in_h_, band_rows);
    }
    auto task = [&](int64_t t, int thread) {
      const int64_t n = t / (groups_ * bands), g = (t / bands) % groups_;
      const int64_t ih0 = (t % bands) * band_rows, ih1 = std::min(in_h_, ih0 + band_rows);
      const int64_t px = (ih1 - ih0) * in_w_;
      PerThread& pt = per_thread_[thread];
      GemmJob& job = pt.jobs[0];
      job.m = rows_;
      job.n = px;
      job.taps = 1;
      job.k_per_tap = group_in_;
      job.c = pt.col.data();
      job.ldc = px;
      job.row_bias = bias ? row_bias_.data() + g * rows_ : nullptr;
      // B: element (input channel k, band pixel j) at base[k * stride + j] (NCHW), or at
      // base[j * in_c + k] (NHWC).
      struct Band {
        const ConvTranspose2dPlanarKernel* self;
        const float* base;
        int64_t stride;
      } band{this,
             nhwc_ ? x + (n * in_h_ + ih0) * in_w_ * in_c_
                   : x + (n * in_c_ + g * group_in_) * in_h_ * in_w_ + ih0 * in_w_,
             in_h_ * in_w_};
      GemmBFn b{
          [](const void* ctx, int64_t, int64_t n0, int64_t nc, int64_t k0, int64_t kc, float* dst) {
            const auto& c = *static_cast<const Band*>(ctx);
            const int nr = c.self->simd_.gemm_nr;
            if (!c.self->nhwc_) {
              pack_b(c.base + k0 * c.stride + n0, c.stride, 1, kc, nc, nr, dst);
              return;
            }
            const int64_t in_c = c.self->in_c_;
            int64_t full = 0;
            if (k0 == 0 && kc == in_c) {  // whole pixels: a panel is a transposed nr x in_c block
              for (; full + nr <= nc; full += nr) {
                c.self->simd_.transpose(c.base + (n0 + full) * in_c, nr, in_c, 0, nr, 0, in_c,
                                        dst + (full / nr) * kc * nr);
              }
            }
            if (full < nc) {
              pack_b(c.base + (n0 + full) * in_c + k0, 1, in_c, kc, nc - full, nr,
                     dst + (full / nr) * kc * nr);
            }
          },
          &band};
      run_gemm(simd_, pt.jobs, GemmEpilogue{}, tables_[g].fn(), b, pt.scratch, nullptr);
      for (int64_t o = 0; o < group_out_; ++o) {
        float* dst = y + (n * out_c_ + g * group_out_ + o) * plane;
        for (int64_t kh = 0; kh < k_h_; ++kh) {
          const float* tap0 = pt.col.data() + (kh * k_w_ * group_out_ + o) * px;
          if (row_covered_) {
            interleave_taps(tap0, group_out_ * px, kh, ih0, ih1, dst);
            continue;
          }
          for (int64_t kw = 0; kw < k_w_; ++kw) {
            copy_tap(tap0 + kw * group_out_ * px, kh, kw, ih0, ih1, dst);
          }
        }
        // covered_: output rows [ih0 * stride_h, ih1 * stride_h) of the plane, all written.
        if (sink_) {
          sink_->apply(y, (dst - y) + ih0 * stride_h_ * out_w_, (ih1 - ih0) * stride_h_ * out_w_);
        }
      }
    };
    const int64_t tasks = batch_ * groups_ * bands;
    if (pool) {
      pool->parallel_for(tasks, task);
    } else {
      for (int64_t t = 0; t < tasks; ++t) task(t, 0);
    }
    return Status::ok();
  }

 private:
  // A per group: rows (kh, kw, o), columns the group's input channels.
  void prepare_weights(const float* w) {
    for (int64_t g = 0; g < groups_; ++g) {
      for (int64_t kh = 0; kh < k_h_; ++kh) {
        for (int64_t kw = 0; kw < k_w_; ++kw) {
          for (int64_t o = 0; o < group_out_; ++o) {
            const int64_t r = (kh * k_w_ + kw) * group_out_ + o;
            float* dst = a_.data() + (g * rows_ + r) * group_in_;
            for (int64_t i = 0; i < group_in_; ++i) {
              dst[i] = w[filter_.at(o, g * group_in_ + i, kh, kw)];
            }
          }
        }
      }
    }
  }

  // All k_w taps of filter row kh for input rows [ih0, ih1) when they tile output rows exactly
  // (k_w == stride_w, no dilation or padding along w): each output row is (input row, all taps
  // side by side), written in one contiguous pass. Tap kw's rows start at tap0 + kw *
  // tap_stride, input row ih at (ih - ih0) * in_w.
  void interleave_taps(const float* tap0, int64_t tap_stride, int64_t kh, int64_t ih0, int64_t ih1,
                       float* dst) const {
    for (int64_t ih = ih0; ih < ih1; ++ih) {
      const int64_t oh = ih * stride_h_ + kh * dil_h_ - pad_top_;
      if (oh < 0 || oh >= out_h_) continue;
      const float* a = tap0 + (ih - ih0) * in_w_;
      float* d = dst + oh * out_w_;
      if (k_w_ == 2) {
        const float* b = a + tap_stride;
        for (int64_t iw = 0; iw < in_w_; ++iw) {
          d[2 * iw] = a[iw];
          d[2 * iw + 1] = b[iw];
        }
      } else {
        for (int64_t iw = 0; iw < in_w_; ++iw) {
          for (int64_t kw = 0; kw < k_w_; ++kw) d[iw * k_w_ + kw] = a[kw * tap_stride + iw];
        }
      }
    }
  }

  // Writes one tap's rows [ih0, ih1) into an output plane: (ih, iw) -> (ih * s + k * d - pad).
  void copy_tap(const float* src, int64_t kh, int64_t kw, int64_t ih0, int64_t ih1,
                float* dst) const {
    const int64_t off_w = kw * dil_w_ - pad_left_;
    // Input columns whose output column is inside the plane.
    int64_t iw0 = 0;
    while (iw0 < in_w_ && iw0 * stride_w_ + off_w < 0) ++iw0;
    int64_t iw1 = in_w_;
    while (iw1 > iw0 && (iw1 - 1) * stride_w_ + off_w >= out_w_) --iw1;
    for (int64_t ih = ih0; ih < ih1; ++ih) {
      const int64_t oh = ih * stride_h_ + kh * dil_h_ - pad_top_;
      if (oh < 0 || oh >= out_h_) continue;
      const float* s = src + (ih - ih0) * in_w_;
      float* d = dst + oh * out_w_ + off_w;
      for (int64_t iw = iw0; iw < iw1; ++iw) d[iw * stride_w_] = s[iw];
    }
  }

  struct PerThread {
    AlignedFloats col;  // one band's product
    std::vector<GemmJob> jobs;
    GemmScratch scratch;
  };

  const SimdKernels& simd_;
  const OutputSink* sink_ = nullptr;
  int64_t rows_ = 0, band_rows_ = 1, bands_ = 1;
  bool covered_ = false, row_covered_ = false, filter_constant_ = false;
  AlignedFloats a_, row_bias_;
  std::vector<RowMajorA> tables_;
  std::vector<PerThread> per_thread_;
};

}  // namespace

std::unique_ptr<Kernel> make_conv_transpose2d_kernel(const Node& node, const CompileContext& cc,
                                                     const SimdKernels& simd) {
  auto planar = std::make_unique<ConvTranspose2dPlanarKernel>(simd);
  if (planar->init(node, cc)) return planar;
  auto k = std::make_unique<ConvTranspose2dKernel>(simd);
  if (!k->init(node, cc)) return nullptr;
  return k;
}

}  // namespace webnn
