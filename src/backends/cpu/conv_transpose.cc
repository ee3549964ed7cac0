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
// NCHW tensors are transposed to NHWC around it, as conv2d does.
#include <algorithm>
#include <string>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/gemm.h"

namespace webnn {

namespace {

// Element (i, o, h, w) of a convTranspose2d filter in any layout, by per-letter strides.
class TransposeFilter {
 public:
  TransposeFilter(const std::string& letters, const std::vector<int64_t>& shape) {
    int64_t stride = 1;
    for (size_t i = letters.size(); i-- > 0;) {
      stride_[index(letters[i])] = stride;
      size_[index(letters[i])] = shape[i];
      stride *= shape[i];
    }
  }
  int64_t size(char c) const { return size_[index(c)]; }
  int64_t at(int64_t i, int64_t o, int64_t h, int64_t w) const {
    return i * stride_[0] + o * stride_[1] + h * stride_[2] + w * stride_[3];
  }

 private:
  static int index(char c) { return c == 'i' ? 0 : c == 'o' ? 1 : c == 'h' ? 2 : 3; }
  int64_t stride_[4] = {};
  int64_t size_[4] = {};
};

// The non-negative remainder of a by b (b > 0).
int64_t mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

struct Phase {
  int64_t ph = 0, pw = 0;       // first output row / column of the phase
  int64_t rows = 0, cols = 0;   // output rows / columns in it
  std::vector<int64_t> kh, kw;  // the taps (one entry per tap, row-major over kh x kw)
  std::vector<int64_t> dh, dw;  // input row (column) offset of each tap: ih = r + dh (iw = j + dw)
  size_t weights = 0;           // offset of its packed filter (groups consecutive)
};

class ConvTranspose2dKernel final : public Kernel {
 public:
  explicit ConvTranspose2dKernel(const SimdKernels& simd) : simd_(simd) {}

  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<ConvTranspose2dParams>();
    const TensorView& x = cc.view(p.input);
    const TensorView& w = cc.view(p.filter);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (x.data_type != DataType::kFloat32 || w.data_type != DataType::kFloat32) return false;
    if (p.bias.present() && cc.view(p.bias).data_type != DataType::kFloat32) return false;
    if (x.rank() != 4 || w.rank() != 4 || y.rank() != 4) return false;
    if (p.input_layout != "nchw" && p.input_layout != "nhwc") return false;
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
    filter_ = TransposeFilter(p.filter_layout, w.shape);
    k_h_ = filter_.size('h');
    k_w_ = filter_.size('w');
    groups_ = p.groups;
    if (groups_ < 1 || in_c_ % groups_ != 0 || filter_.size('i') != in_c_) return false;
    group_in_ = in_c_ / groups_;
    group_out_ = filter_.size('o');
    if (group_out_ * groups_ != out_c_) return false;
    int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0;
    if (p.strides) stride_h = (*p.strides)[0], stride_w = (*p.strides)[1];
    if (p.dilations) dil_h = (*p.dilations)[0], dil_w = (*p.dilations)[1];
    if (p.padding) pad_top = (*p.padding)[0], pad_left = (*p.padding)[2];
    stride_h_ = stride_h;
    stride_w_ = stride_w;

    size_t total = 0;
    for (int64_t ph = 0; ph < std::min(stride_h, out_h_); ++ph) {
      for (int64_t pw = 0; pw < std::min(stride_w, out_w_); ++pw) {
        Phase f;
        f.ph = ph;
        f.pw = pw;
        f.rows = (out_h_ - ph + stride_h - 1) / stride_h;
        f.cols = (out_w_ - pw + stride_w - 1) / stride_w;
        for (int64_t kh = 0; kh < k_h_; ++kh) {
          const int64_t th = ph + pad_top - kh * dil_h;
          if (mod(th, stride_h) != 0) continue;
          for (int64_t kw = 0; kw < k_w_; ++kw) {
            const int64_t tw = pw + pad_left - kw * dil_w;
            if (mod(tw, stride_w) != 0) continue;
            f.kh.push_back(kh);
            f.kw.push_back(kw);
            f.dh.push_back(th / stride_h);  // exact division: th is a multiple of stride_h
            f.dw.push_back(tw / stride_w);
          }
        }
        size_t floats = 0;
        if (!packed_b_floats(static_cast<int64_t>(f.kh.size()) * group_in_, group_out_,
                             simd_.gemm_nr, &floats)) {
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
    if (!nhwc_) {
      in_nhwc_.reserve(static_cast<size_t>(x.count));
      out_nhwc_.reserve(static_cast<size_t>(y.count));
    }
    filter_constant_ = cc.is_constant(p.filter);
    if (filter_constant_) prepare_weights(w.as<float>());
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<ConvTranspose2dParams>();
    if (!filter_constant_) prepare_weights(ctx.in(p.filter).as<float>());
    const float* x = ctx.in(p.input).as<float>();
    const float* bias = p.bias.present() ? ctx.in(p.bias).as<float>() : nullptr;
    float* y = ctx.out().as<float>();
    ThreadPool* pool = ctx.pool();
    if (!nhwc_) {
      transpose_batch(x, batch_, in_c_, in_h_ * in_w_, in_nhwc_.data(), pool);
      x = in_nhwc_.data();
    }
    float* out = nhwc_ ? y : out_nhwc_.data();
    for (const Phase& f : phases_) run_phase(f, x, bias, out, pool);
    if (!nhwc_) transpose_batch(out, batch_, out_h_ * out_w_, out_c_, y, pool);
    return Status::ok();
  }

 private:
  // `count` matrices of rows x cols (consecutive) transposed, in parallel.
  void transpose_batch(const float* a, int64_t count, int64_t rows, int64_t cols, float* out,
                       ThreadPool* pool) const {
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cols));
    parallel_chunks(pool, count * rows, grain, [&](int64_t begin, int64_t end) {
      while (begin < end) {
        const int64_t m = begin / rows, r0 = begin % rows;
        const int64_t r1 = std::min(rows, r0 + (end - begin));
        simd_.transpose(a + m * rows * cols, rows, cols, r0, r1, out + m * rows * cols);
        begin += r1 - r0;
      }
    });
  }

  // Per phase and group, B packed for the GEMM micro-kernel: panels of gemm_nr output
  // channels, rows (tap, input channel of the group); columns past group_out are zero.
  void prepare_weights(const float* w) {
    const int nr = simd_.gemm_nr;
    for (const Phase& f : phases_) {
      const int64_t taps = static_cast<int64_t>(f.kh.size());
      const int64_t k = taps * group_in_;
      const int64_t panels = (group_out_ + nr - 1) / nr;
      const size_t group_floats = static_cast<size_t>(panels * k * nr);
      for (int64_t g = 0; g < groups_; ++g) {
        float* dst = weights_.data() + f.weights + g * group_floats;
        for (int64_t pnl = 0; pnl < panels; ++pnl) {
          for (int64_t t = 0; t < taps; ++t) {
            for (int64_t i = 0; i < group_in_; ++i) {
              float* row = dst + (pnl * k + t * group_in_ + i) * nr;
              for (int64_t j = 0; j < nr; ++j) {
                const int64_t o = pnl * nr + j;
                row[j] =
                    o < group_out_ ? w[filter_.at(g * group_in_ + i, o, f.kh[t], f.kw[t])] : 0.0f;
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

  void run_phase(const Phase& f, const float* x, const float* bias, float* out, ThreadPool* pool) {
    const int nr = simd_.gemm_nr;
    const int64_t taps = static_cast<int64_t>(f.kh.size());
    const size_t group_floats =
        static_cast<size_t>(((group_out_ + nr - 1) / nr) * taps * group_in_ * nr);
    const int64_t count = batch_ * f.rows * groups_;
    jobs_.resize(static_cast<size_t>(count));  // within the capacity reserved at init
    for (int64_t j = 0; j < count; ++j) {
      const int64_t g = j % groups_, rows = j / groups_;
      const int64_t n = rows / f.rows, oh = f.ph + (rows % f.rows) * stride_h_;
      GemmJob& job = jobs_[j];
      job.m = f.cols;
      job.n = group_out_;
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
    run_gemm(simd_, jobs_, GemmEpilogue{}, GemmAFn{tile, &tc}, GemmBFn{}, scratch_, pool);
  }

  const SimdKernels& simd_;
  bool nhwc_ = false, filter_constant_ = false;
  int64_t batch_ = 0, in_c_ = 0, in_h_ = 0, in_w_ = 0, out_c_ = 0, out_h_ = 0, out_w_ = 0;
  int64_t k_h_ = 0, k_w_ = 0, groups_ = 1, group_in_ = 0, group_out_ = 0;
  int64_t stride_h_ = 1, stride_w_ = 1;
  TransposeFilter filter_{"iohw", {0, 0, 0, 0}};
  std::vector<Phase> phases_;
  int64_t max_jobs_ = 0;
  AlignedFloats weights_, zero_, in_nhwc_, out_nhwc_;
  std::vector<GemmJob> jobs_;
  GemmScratch scratch_;
};

}  // namespace

std::unique_ptr<Kernel> make_conv_transpose2d_kernel(const Node& node, const CompileContext& cc,
                                                     const SimdKernels& simd) {
  auto k = std::make_unique<ConvTranspose2dKernel>(simd);
  if (!k->init(node, cc)) return nullptr;
  return k;
}

}  // namespace webnn
