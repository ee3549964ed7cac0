// conv2d (float32). Three paths, all with weights rearranged once when the filter is a
// constant:
//  - depthwise (groups == input channels == output channels): NHWC rows vectorised over
//    channels, NCHW planes vectorised along rows (simd_kernels.h);
//  - everything else: an implicit GEMM on NHWC data (gemm.h): A rows are output pixels read
//    in place through a table of per-tap pointers (padding taps point at zeros), B the packed
//    filter. NCHW tensors are transposed to NHWC around it.
//    With few input channels (a first RGB layer: 3 per tap) the micro-kernel would spend more
//    time starting taps than multiplying, so A has k_h taps of k_w * in_c floats: the k_w
//    taps of one filter row are consecutive floats of the NHWC row. Windows inside the image
//    read the input in place; the few border columns whose window crosses the left or right
//    edge read a zero-padded copy of their k_w pixels (refreshed per run), rows in the padding
//    read zeros. B's rows (kh, kw, i) are the same either way.
#include <algorithm>
#include <cstring>
#include <string>

#include "backends/cpu/conv_filter.h"
#include "backends/cpu/conv_winograd.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/plane.h"
#include "backends/cpu/transpose_batch.h"
#include "core/layout.h"

namespace webnn {

namespace {

struct ConvShape {
  int64_t batch = 0, in_c = 0, in_h = 0, in_w = 0;
  int64_t out_c = 0, out_h = 0, out_w = 0;
  int64_t k_h = 0, k_w = 0, groups = 1, group_in = 0, group_out = 0;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0;
  bool nhwc = false;

  int64_t pixels() const { return out_h * out_w; }
  int64_t taps() const { return k_h * k_w; }
};

class Conv2dKernel final : public Kernel {
 public:
  explicit Conv2dKernel(const SimdKernels& simd) : simd_(simd) {}

  // pack_constant_filter = false leaves a constant filter unpacked until a run needs it: the
  // Winograd kernel keeps this kernel only for its rare runs with infs or NaNs.
  bool init(const Node& node, const CompileContext& cc, bool pack_constant_filter) {
    const auto& p = node.as<Conv2dParams>();
    const TensorView& x = cc.view(p.input);
    const TensorView& w = cc.view(p.filter);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (!float32_conv_operands<Conv2dParams>(node, cc)) return false;
    ConvShape& s = s_;
    s.nhwc = p.input_layout == "nhwc";
    const int c_axis = s.nhwc ? 3 : 1, h_axis = s.nhwc ? 1 : 2, w_axis = s.nhwc ? 2 : 3;
    s.batch = x.shape[0];
    s.in_c = x.shape[c_axis];
    s.in_h = x.shape[h_axis];
    s.in_w = x.shape[w_axis];
    s.out_c = y.shape[c_axis];
    s.out_h = y.shape[h_axis];
    s.out_w = y.shape[w_axis];
    filter_ = FilterLayout(p.filter_layout, w.shape);
    s.k_h = filter_.size('h');
    s.k_w = filter_.size('w');
    s.groups = p.groups;
    s.group_in = filter_.size('i');
    s.group_out = s.out_c / s.groups;
    if (p.strides) s.stride_h = (*p.strides)[0], s.stride_w = (*p.strides)[1];
    if (p.dilations) s.dil_h = (*p.dilations)[0], s.dil_w = (*p.dilations)[1];
    if (p.padding) s.pad_top = (*p.padding)[0], s.pad_left = (*p.padding)[2];
    depthwise_ = s.groups == s.in_c && s.group_in == 1 && s.group_out == 1;
    filter_constant_ = cc.is_constant(p.filter);
    if (node.depthwise_input && !init_depthwise_stage(node, cc)) return false;
    if (depthwise_) {
      weight_floats_ = static_cast<size_t>(std::max<int64_t>(1, s.in_c * s.taps()));
      if (!s.nhwc) {
        plane_ = PaddedPlane(window());
        if (!plane_.fits()) return false;  // the reference kernel computes it
      }
    } else {
      tile_ = gemm_tile_for_columns(simd_, s.group_out);
      if (!packed_b_floats(s.taps() * s.group_in, s.group_out, tile_.nr, &group_floats_)) {
        return false;
      }
      weight_floats_ = std::max<size_t>(1, group_floats_ * s.groups);
      // Padded rows: one group, few channels, filter taps along a row adjacent in memory.
      padded_ = s.groups == 1 && s.in_c < 16 && s.k_w > 1 && s.dil_w == 1 && s.pixels() > 0;
      a_taps_ = padded_ ? s.k_h : s.taps();
      a_k_ = padded_ ? s.k_w * s.in_c : s.group_in;
      if (padded_) {
        // Output columns whose window crosses an edge of the image get a patch per input row.
        border_index_.assign(static_cast<size_t>(s.out_w), -1);
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          const int64_t iw0 = ow * s.stride_w - s.pad_left;
          if (iw0 < 0 || iw0 + s.k_w > s.in_w) {
            border_index_[ow] = borders_++;
            border_columns_.push_back(ow);
          }
        }
        uint64_t floats = 0;
        if (__builtin_mul_overflow(static_cast<uint64_t>(s.batch * s.in_h),
                                   static_cast<uint64_t>(borders_ * a_k_), &floats)) {
          return false;
        }
        // Zero once: runs write only the image's pixels, the padding stays zero.
        patches_.reserve(static_cast<size_t>(std::max<uint64_t>(1, floats)));
        patches_.zero();
      }
      zero_.reserve(static_cast<size_t>(a_k_ + 16));
      zero_.zero();
      m_ = s.batch * s.pixels();
      // The pointer table is kept between runs (streaming it costs less than refilling it:
      // a one-channel stem's 3 pointers per pixel took longer to compute than its K = 9
      // products) unless it would outgrow the input 8-fold and 64 MB (few input channels at
      // stride 1 on large images): then tiles fill it as they go.
      uint64_t table_bytes = 0;
      const uint64_t tiles = static_cast<uint64_t>((m_ + tile_.mr - 1) / tile_.mr);
      const uint64_t input_bytes = x.count * sizeof(float);
      const uint64_t table_limit = std::max<uint64_t>(
          uint64_t{4} << 20,
          std::min<uint64_t>(input_bytes > (uint64_t{1} << 60) ? input_bytes : 8 * input_bytes,
                             uint64_t{64} << 20));
      precompute_table_ = !__builtin_mul_overflow(
                              tiles, static_cast<uint64_t>(a_taps_ * tile_.mr * 8), &table_bytes) &&
                          table_bytes <= table_limit;
      if (!s.nhwc) {
        in_nhwc_.reserve(static_cast<size_t>(std::max<int64_t>(1, x.count)));
        out_nhwc_.reserve(static_cast<size_t>(std::max<int64_t>(1, y.count)));
      }
    }
    if (!filter_constant_) weights_.reserve(weight_floats_);  // packed per run
    if (!filter_constant_ || !pack_constant_filter) return true;
    {
      // Packed once per filter data: every plan of the graph (one per input shape) and every
      // graph of the context built from the same weights share it. The packing depends on the
      // filter's shape and layout besides its bytes.
      const auto filter = cc.constant_data(p.filter);
      const std::string key = str_cat(
          "conv2d/", s.groups, "/", s.out_c, "x", s.group_in, "x", s.k_h, "x", s.k_w,
          depthwise_ ? std::string("/dw/") : str_cat("/gemm", tile_.nr, padded_ ? "p/" : "/"),
          s.nhwc ? "nhwc/" : "nchw/", p.filter_layout, "/", simd_.name);
      if (cc.cache()) {
        shared_ = std::static_pointer_cast<const AlignedFloats>(cc.cache()->get(filter, key));
      }
      if (!shared_) {
        weights_.reserve(weight_floats_);
        prepare_weights(w.as<float>(), nullptr);
        if (cc.cache()) {
          auto packed = std::make_shared<AlignedFloats>(std::move(weights_));
          cc.cache()->put(filter, key, packed);
          shared_ = std::move(packed);
        }
      }
      packed_ = true;
    }
    return true;
  }

  // NHWC outputs are final row by row (depthwise) or block by block (GEMM): a fused epilogue
  // runs there. NCHW outputs are transposed at the end; the caller applies it after.
  bool set_output_sink(const OutputSink* sink) override {
    if (!s_.nhwc) return false;
    sink_ = sink;
    return true;
  }

  // The implicit GEMM applies relu / hardSwish in its micro-kernel's stores, NHWC depthwise
  // rows in theirs (not NCHW depthwise planes, nor the direct fallback of a Winograd kernel,
  // which takes none).
  bool take_activation(Activation activation) override {
    if ((depthwise_ && !s_.nhwc) || !activation_allowed_) return false;
    activation_ =
        activation == Activation::kRelu ? GemmActivation::kRelu : GemmActivation::kHardSwish;
    return true;
  }

  // A Winograd kernel's direct fallback must leave its fused epilogue whole.
  void refuse_activations() { activation_allowed_ = false; }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<Conv2dParams>();
    if (!filter_constant_) {
      prepare_weights(ctx.in(p.filter).as<float>(), ctx.pool());
    } else if (!packed_) {  // left for the first run that needs it (init)
      weights_.reserve(weight_floats_);
      prepare_weights(ctx.in(p.filter).as<float>(), ctx.pool());
      packed_ = true;
    }
    const float* x = ctx.in(p.input).as<float>();
    const float* bias = p.bias.present() ? ctx.in(p.bias).as<float>() : nullptr;
    float* y = ctx.out().as<float>();
    if (dw_ && ex_) {
      auto optional = [&](const OperandRef& r) {
        return r.present() ? ctx.in(r).as<float>() : nullptr;
      };
      const auto& dp = dw_node_->as<Conv2dParams>();
      const Node& ex_node = *dw_node_->expansion_input;
      const auto& ep = ex_node.as<Conv2dParams>();
      ExpansionInputs in;
      in.bias = optional(ep.bias);
      if (ex_node.depthwise_input) {  // the expansion computes its own depthwise input
        const auto& ip = ex_node.depthwise_input->as<Conv2dParams>();
        in.x = ctx.in(ip.input).as<float>();
        in.dw_bias = optional(ip.bias);
      } else {
        in.x = ctx.in(ep.input).as<float>();
      }
      expansion_depthwise_pointwise(in, optional(dp.bias), bias, y, ctx.pool());
    } else if (dw_) {
      const auto& dp = dw_node_->as<Conv2dParams>();
      depthwise_pointwise(ctx.in(dp.input).as<float>(),
                          dp.bias.present() ? ctx.in(dp.bias).as<float>() : nullptr, bias, y,
                          ctx.pool());
    } else if (depthwise_) {
      if (s_.nhwc) {
        depthwise_nhwc(x, bias, y, ctx.pool());
      } else {
        depthwise_nchw(x, bias, y, ctx.pool());
      }
    } else {
      implicit_gemm(x, bias, y, ctx.pool());
    }
    return Status::ok();
  }

 private:
  WindowGeometry window() const {
    WindowGeometry g;
    g.in_h = s_.in_h;
    g.in_w = s_.in_w;
    g.out_h = s_.out_h;
    g.out_w = s_.out_w;
    g.k_h = s_.k_h;
    g.k_w = s_.k_w;
    g.stride_h = s_.stride_h;
    g.stride_w = s_.stride_w;
    g.dil_h = s_.dil_h;
    g.dil_w = s_.dil_w;
    g.pad_top = s_.pad_top;
    g.pad_left = s_.pad_left;
    return g;
  }

  // Depthwise: [kh][kw][c] for NHWC rows, [c][kh][kw] for NCHW planes. Otherwise, per group,
  // the packed B of the implicit GEMM: rows (kh, kw, i), columns o.
  void prepare_weights(const float* w, ThreadPool* pool) {
    const ConvShape& s = s_;
    float* out = weights_.data();
    if (depthwise_) {
      for (int64_t c = 0; c < s.in_c; ++c) {
        for (int64_t kh = 0; kh < s.k_h; ++kh) {
          for (int64_t kw = 0; kw < s.k_w; ++kw) {
            const int64_t tap = kh * s.k_w + kw;
            const float v = w[filter_.at(c, 0, kh, kw)];
            if (s.nhwc) {
              out[tap * s.in_c + c] = v;
            } else {
              out[c * s.taps() + tap] = v;
            }
          }
        }
      }
      return;
    }
    const int64_t k = s.taps() * s.group_in;
    parallel_chunks(pool, s.groups, 1, [&](int64_t g0, int64_t g1) {
      std::vector<float> dense(static_cast<size_t>(k * s.group_out));
      for (int64_t g = g0; g < g1; ++g) {
        for (int64_t o = 0; o < s.group_out; ++o) {
          for (int64_t kh = 0; kh < s.k_h; ++kh) {
            for (int64_t kw = 0; kw < s.k_w; ++kw) {
              for (int64_t i = 0; i < s.group_in; ++i) {
                const int64_t row = (kh * s.k_w + kw) * s.group_in + i;
                dense[row * s.group_out + o] = w[filter_.at(g * s.group_out + o, i, kh, kw)];
              }
            }
          }
        }
        pack_b(dense.data(), s.group_out, 1, k, s.group_out, tile_.nr, out + g * group_floats_);
      }
    });
  }

  void depthwise_nhwc(const float* x, const float* bias, float* y, ThreadPool* pool) {
    const ConvShape& s = s_;
    DepthwiseRowArgs a;
    a.in_h = s.in_h;
    a.in_w = s.in_w;
    a.channels = s.in_c;
    a.w = weights();
    a.bias = bias;
    a.k_h = s.k_h;
    a.k_w = s.k_w;
    a.stride_h = s.stride_h;
    a.stride_w = s.stride_w;
    a.dil_h = s.dil_h;
    a.dil_w = s.dil_w;
    a.pad_top = s.pad_top;
    a.pad_left = s.pad_left;
    a.out_w = s.out_w;
    a.act = activation_;
    // Work units are rows, or segments of rows when there are too few rows to keep every
    // thread busy (rec's 3 x 80 maps): results do not depend on the split.
    const int threads = pool ? pool->num_threads() : 1;
    const int64_t rows = s.batch * s.out_h;
    int64_t segments = 1;
    if (threads > 1 && rows < 4 * threads) {
      segments = std::min<int64_t>((4 * threads + rows - 1) / rows, (s.out_w + 7) / 8);
      segments = std::max<int64_t>(segments, 1);
    }
    const int64_t seg_w = (s.out_w + segments - 1) / segments;
    const int64_t unit_work = std::max<int64_t>(1, seg_w * s.in_c * s.taps());
    parallel_chunks(pool, rows * segments, std::max<int64_t>(1, 32768 / unit_work),
                    [&](int64_t begin, int64_t end) {
                      DepthwiseRowArgs r = a;
                      for (int64_t u = begin; u < end; ++u) {
                        const int64_t i = u / segments;
                        const int64_t n = i / s.out_h;
                        r.x = x + n * s.in_h * s.in_w * s.in_c;
                        r.oh = i % s.out_h;
                        r.y = y + i * s.out_w * s.in_c;
                        r.ow_begin = std::min(s.out_w, (u % segments) * seg_w);
                        r.ow_end = std::min(s.out_w, r.ow_begin + seg_w);
                        if (r.ow_begin == r.ow_end) continue;
                        simd_.depthwise_nhwc_row(r);
                        if (sink_) {
                          sink_->apply(y, (i * s.out_w + r.ow_begin) * s.in_c,
                                       (r.ow_end - r.ow_begin) * s.in_c);
                        }
                      }
                    });
  }

  void depthwise_nchw(const float* x, const float* bias, float* y, ThreadPool* pool) {
    const ConvShape& s = s_;
    const int threads = pool ? pool->num_threads() : 1;
    if (plane_scratch_.size() < static_cast<size_t>(threads)) plane_scratch_.resize(threads);
    for (auto& buf : plane_scratch_) buf.reserve(static_cast<size_t>(plane_.floats() + 16));
    const int64_t planes = s.batch * s.in_c;
    const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
    auto task = [&](int64_t i, int thread) {
      const int64_t c = i % s.in_c;
      float* buf = plane_scratch_[thread].data();
      plane_.fill(simd_, x + i * in_plane, 0.0f, buf);
      PlaneArgs a = plane_.args(buf);
      a.w = weights() + c * s.taps();
      a.bias = bias ? bias[c] : 0.0f;
      a.y = y + i * out_plane;
      simd_.plane(PlaneOp::kDepthwise, a);
    };
    if (pool) {
      pool->parallel_for(planes, task);
    } else {
      for (int64_t i = 0; i < planes; ++i) task(i, 0);
    }
  }

  // Pointers to the input pixel of each (output pixel, tap) of tile t (tile_.mr pixels):
  // dst[tap * tile_.mr + r]; taps in the padding and pixels past the end point at zeros.
  // Padded rows: one pointer per filter row, into x, a border patch or the zeros.
  void fill_tile(const float* x, int64_t t, const float** dst) const {
    fill_rows(x, t * tile_.mr, dst);
  }

  // The same for the tile_.mr output pixels from pixel m0 on (any m0: a fused expansion
  // stage's rows start where its band does).
  void fill_rows(const float* x, int64_t m0, const float** dst) const {
    // Everything in locals: dst's pointer stores could otherwise alias the members, which
    // the compiler would reload per tap (the table costs more than a few-channel GEMM).
    const int mr = tile_.mr;
    const int64_t in_h = s_.in_h, in_w = s_.in_w, in_c = s_.in_c, out_h = s_.out_h;
    const int64_t out_w = s_.out_w, k_h = s_.k_h, k_w = s_.k_w, dil_h = s_.dil_h;
    const int64_t dil_w = s_.dil_w, stride_h = s_.stride_h, stride_w = s_.stride_w;
    const int64_t pad_top = s_.pad_top, pad_left = s_.pad_left, m_end = m_;
    const float* const zero = zero_.data();
    const float* const patches = patches_.data();
    const int64_t* const border_index = border_index_.data();
    const int64_t borders = borders_, patch_floats = a_k_;
    // The tile's first pixel is located by division once; the others step along the row
    // (a division per pixel and tap costs more than the few-channel GEMM itself).
    const int64_t pixels = out_h * out_w;
    int64_t n = m0 / pixels, oh = m0 - n * pixels;
    int64_t ow = oh;
    oh /= out_w;
    ow -= oh * out_w;
    for (int r = 0; r < mr; ++r, ++ow) {
      if (ow == out_w) {
        ow = 0;
        if (++oh == out_h) oh = 0, ++n;
      }
      const bool in_range = m0 + r < m_end;
      const int64_t ih0 = oh * stride_h - pad_top;
      const int64_t iw0 = ow * stride_w - pad_left;
      if (padded_) {
        const int64_t b = border_index[ow];
        for (int64_t kh = 0; kh < k_h; ++kh) {
          const int64_t ih = ih0 + kh * dil_h;
          const float* q = zero;
          if (in_range && ih >= 0 && ih < in_h) {
            const int64_t row = n * in_h + ih;
            q = b >= 0 ? patches + (row * borders + b) * patch_floats
                       : x + (row * in_w + iw0) * in_c;
          }
          dst[kh * mr + r] = q;
        }
        continue;
      }
      for (int64_t kh = 0; kh < k_h; ++kh) {
        const int64_t ih = ih0 + kh * dil_h;
        const bool row_inside = in_range && ih >= 0 && ih < in_h;
        const float* row = row_inside ? x + (n * in_h + ih) * in_w * in_c : nullptr;
        for (int64_t kw = 0; kw < k_w; ++kw) {
          const int64_t iw = iw0 + kw * dil_w;
          const bool inside = row_inside && iw >= 0 && iw < in_w;
          dst[(kh * k_w + kw) * mr + r] = inside ? row + iw * in_c : zero;
        }
      }
    }
  }

  void build_table(const float* x) {
    const int64_t tiles = (m_ + tile_.mr - 1) / tile_.mr;
    const int64_t per_tile = a_taps_ * tile_.mr;
    table_.resize(static_cast<size_t>(tiles * per_tile));
    for (int64_t t = 0; t < tiles; ++t) fill_tile(x, t, table_.data() + t * per_tile);
    table_input_ = x;
  }

  // The border patches: for each input row and border column, the k_w pixels of its window
  // that are inside the image (the rest of the patch stays zero).
  void fill_patches(const float* x, ThreadPool* pool) {
    const ConvShape& s = s_;
    if (borders_ == 0) return;
    parallel_chunks(pool, s.batch * s.in_h, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float* row = x + i * s.in_w * s.in_c;
        for (const int64_t ow : border_columns_) {
          const int64_t b = border_index_[ow];
          const int64_t iw0 = ow * s.stride_w - s.pad_left;
          const int64_t lo = std::max<int64_t>(0, -iw0);
          const int64_t hi = std::min<int64_t>(s.k_w, s.in_w - iw0);
          if (lo >= hi) continue;
          std::memcpy(patches_.data() + (i * borders_ + b) * a_k_ + lo * s.in_c,
                      row + (iw0 + lo) * s.in_c,
                      static_cast<size_t>((hi - lo) * s.in_c) * sizeof(float));
        }
      }
    });
  }

  void implicit_gemm(const float* x, const float* bias, float* y, ThreadPool* pool) {
    const ConvShape& s = s_;
    if (!s.nhwc) {
      transpose_batch(simd_, x, s.batch, s.in_c, s.in_h * s.in_w, in_nhwc_.data(), pool);
      x = in_nhwc_.data();
    }
    if (padded_) fill_patches(x, pool);
    if (precompute_table_ && x != table_input_) build_table(x);
    float* out = s.nhwc ? y : out_nhwc_.data();
    jobs_.resize(static_cast<size_t>(s.groups));
    for (int64_t g = 0; g < s.groups; ++g) {
      GemmJob& job = jobs_[g];
      job.m = m_;
      job.n = s.group_out;
      job.taps = a_taps_;
      job.k_per_tap = a_k_;
      job.a_offset = g * s.group_in;
      job.zero = zero_.data();
      job.b_packed = weights() + g * group_floats_;
      job.c = out + g * s.group_out;
      job.ldc = s.out_c;
      job.col_bias = bias ? bias + g * s.group_out : nullptr;
    }
    struct TableCtx {
      const Conv2dKernel* self;
      const float* x;
    } tc{this, x};
    GemmAFn a_fn{[](const void* ctx, int64_t, int64_t m0, const float** scratch) {
                   const auto& c = *static_cast<const TableCtx*>(ctx);
                   const int mr = c.self->tile_.mr;
                   if (c.self->precompute_table_) {
                     return static_cast<const float* const*>(c.self->table_.data() +
                                                             (m0 / mr) * c.self->a_taps_ * mr);
                   }
                   c.self->fill_tile(c.x, m0 / mr, scratch);
                   return static_cast<const float* const*>(scratch);
                 },
                 &tc};
    GemmEpilogue ep;
    ep.act = activation_;
    struct SinkCtx {
      const OutputSink* sink;
      float* y;
    } sc{sink_, y};
    if (sink_ && s.nhwc) {
      ep.post = [](const void* ctx, float* c, int64_t ldc, int64_t rows, int64_t cols) {
        const auto& k = *static_cast<const SinkCtx*>(ctx);
        if (cols == ldc) return k.sink->apply(k.y, c - k.y, rows * cols);  // one run of rows
        for (int64_t r = 0; r < rows; ++r) k.sink->apply(k.y, (c - k.y) + r * ldc, cols);
      };
      ep.post_ctx = &sc;
    }
    run_gemm(simd_, jobs_, ep, a_fn, GemmBFn{}, scratch_, pool, &tile_);
    if (!s.nhwc) transpose_batch(simd_, out, s.batch, s.pixels(), s.out_c, y, pool);
  }

  // Node::depthwise_input (graph/passes/depthwise_pointwise.cc): this 1x1 NHWC conv reads the
  // value of a depthwise conv2d that no buffer holds; a kernel of its own computes it in bands.
  // Its first fused step runs in the row kernel's stores when that kernel takes it (relu, the
  // float32 hardSwish, as Kernel::take_activation would), the others on the band with the
  // stand-alone unary kernel's function, as the unfused graph computes them.
  bool init_depthwise_stage(const Node& node, const CompileContext& cc) {
    const ConvShape& s = s_;
    if (!s.nhwc || depthwise_ || s.groups != 1 || s.k_h != 1 || s.k_w != 1 || s.stride_h != 1 ||
        s.stride_w != 1 || s.pad_top != 0 || s.pad_left != 0) {
      return false;
    }
    const auto& pp = node.as<Conv2dParams>();
    if (pp.padding && ((*pp.padding)[1] != 0 || (*pp.padding)[3] != 0)) return false;
    dw_node_ = node.depthwise_input;
    dw_ = std::make_unique<Conv2dKernel>(simd_);
    if (!dw_->init(*dw_node_, cc, /*pack_constant_filter=*/true)) return false;
    if (!dw_->depthwise_ || !dw_->s_.nhwc || !dw_->filter_constant_) return false;
    const ConvShape& d = dw_->s_;
    if (d.batch != s.batch || d.out_h != s.in_h || d.out_w != s.in_w || d.out_c != s.in_c) {
      return false;
    }
    if (!stage_steps(*dw_node_, &dw_->activation_, &dw_steps_)) return false;
    // Bands of whole depthwise rows, ~64 KB: they stay in L2 (L1 for narrow maps) between the
    // row kernel's stores and the GEMM's reads.
    const int64_t row_floats = std::max<int64_t>(1, d.out_w * d.out_c);
    band_rows_ = std::clamp<int64_t>(kBandFloats / row_floats, 1, std::max<int64_t>(1, d.out_h));
    if (dw_node_->expansion_input && !init_expansion_stage(cc)) return false;
    return true;
  }

  // A fused stage's steps as the unfused node's kernel runs them (make_fused_kernel): a first
  // relu / float32 hardSwish in the stores (Kernel::take_activation), the others after, each
  // with the stand-alone unary kernel's function.
  bool stage_steps(const Node& stage, GemmActivation* act, std::vector<UnaryArgs>* steps) const {
    steps->clear();
    for (size_t k = 0; k < stage.epilogue.size(); ++k) {
      UnaryArgs args;
      if (!cpu_unary_args(stage.epilogue[k].op, &args)) return false;
      if (k == 0 && args.op == UnaryOpF::kRelu) {
        *act = GemmActivation::kRelu;
      } else if (k == 0 && args.webnn_hard_swish() && simd_.hard_swish_float32) {
        *act = GemmActivation::kHardSwish;
      } else {
        steps->push_back(args);
      }
    }
    return true;
  }

  // Node::expansion_input: the 1x1 conv whose value the depthwise stage reads is computed too,
  // band by band into a per-thread window of its rows (each band's rows plus the depthwise's
  // halo) with the unfused kernel's packed filter, GEMM tile and K order: the same bits.
  bool init_expansion_stage(const CompileContext& cc) {
    const Node& node = *dw_node_->expansion_input;
    ex_ = std::make_unique<Conv2dKernel>(simd_);
    if (!ex_->init(node, cc, /*pack_constant_filter=*/true)) return false;
    const ConvShape& e = ex_->s_;
    const ConvShape& d = dw_->s_;
    if (ex_->ex_) return false;  // one level of chaining (expansion_fusion.cc)
    if (!e.nhwc || ex_->depthwise_ || !ex_->filter_constant_ || e.groups != 1) return false;
    // A chained expansion is a 1x1 conv; any other (a stem's 3x3) reads its input through
    // the implicit GEMM's pointer tables.
    const bool pointwise = e.k_h == 1 && e.k_w == 1 && e.stride_h == 1 && e.stride_w == 1 &&
                           e.pad_top == 0 && e.pad_left == 0 && e.in_h == e.out_h &&
                           e.in_w == e.out_w && !ex_->padded_;
    if (ex_->dw_ && !pointwise) return false;
    ex_pointwise_ = pointwise;
    if (e.batch != d.batch || e.out_h != d.in_h || e.out_w != d.in_w || e.out_c != d.in_c) {
      return false;
    }
    if (!stage_steps(node, &ex_->activation_, &ex_steps_)) return false;
    // Bands small enough that the expansion rows they read fit ~128 KB too (a stride-2
    // depthwise reads twice its rows); the window holds twice that, so the halo rows shared
    // with the next band move to its front only now and then.
    const int64_t ex_row = std::max<int64_t>(1, e.out_w * e.out_c);
    while (band_rows_ > 1 && expansion_span(band_rows_) * ex_row > kExpansionFloats) --band_rows_;
    ex_window_rows_ = 2 * std::max<int64_t>(1, expansion_span(band_rows_));
    return true;
  }

  // Expansion rows that `rows` consecutive depthwise output rows read (ignoring the image's
  // edges).
  int64_t expansion_span(int64_t rows) const {
    const ConvShape& d = dw_->s_;
    return (rows - 1) * d.stride_h + (d.k_h - 1) * d.dil_h + 1;
  }

  // The depthwise stage's row arguments (x, oh and y set per row).
  DepthwiseRowArgs stage_row_args(const float* dbias) const {
    const ConvShape& d = dw_->s_;
    DepthwiseRowArgs a;
    a.in_h = d.in_h;
    a.in_w = d.in_w;
    a.channels = d.in_c;
    a.w = dw_->weights();
    a.bias = dbias;
    a.k_h = d.k_h;
    a.k_w = d.k_w;
    a.stride_h = d.stride_h;
    a.stride_w = d.stride_w;
    a.dil_h = d.dil_h;
    a.dil_w = d.dil_w;
    a.pad_top = d.pad_top;
    a.pad_left = d.pad_left;
    a.out_w = d.out_w;
    a.ow_begin = 0;
    a.ow_end = d.out_w;
    a.act = dw_->activation_;
    return a;
  }

  // Per-thread buffers of the fused stages, sized before the parallel region.
  void reserve_bands(int threads) {
    const int64_t row_floats = dw_->s_.out_w * dw_->s_.out_c;
    if (bands_.size() < static_cast<size_t>(threads)) {
      bands_.resize(threads);
      band_scratch_.resize(threads);
      band_jobs_.resize(threads);
    }
    for (int t = 0; t < threads; ++t) {
      bands_[t].reserve(static_cast<size_t>(band_rows_ * row_floats + 16));
      band_jobs_[t].resize(1);
    }
    if (!ex_) return;
    const int64_t ex_row = ex_->s_.out_w * ex_->s_.out_c;
    if (ex_windows_.size() < static_cast<size_t>(threads)) {
      ex_windows_.resize(threads);
      ex_scratch_.resize(threads);
      ex_jobs_.resize(threads);
    }
    for (int t = 0; t < threads; ++t) {
      ex_windows_[t].reserve(static_cast<size_t>(ex_window_rows_ * ex_row + 16));
      ex_jobs_[t].resize(1);
    }
    if (ex_->dw_) ex_->reserve_bands(threads);
  }

  // The 1x1 product (this node) of `m` rows of the depthwise stage at `band` into y at `c`.
  void project_band(const float* band, int64_t m, float* c, const float* bias,
                    const GemmEpilogue& ep, int thread) {
    const ConvShape& s = s_;
    GemmJob& job = band_jobs_[thread][0];
    job.m = m;
    job.n = s.out_c;
    job.taps = 1;
    job.k_per_tap = s.in_c;
    job.a_offset = 0;
    job.zero = zero_.data();
    job.b_packed = weights();
    job.c = c;
    job.ldc = s.out_c;
    job.col_bias = bias;
    run_rows_gemm(simd_, band_jobs_[thread], ep, band, m, s.in_c, tile_, band_scratch_[thread]);
  }

  // One single-threaded GEMM whose A is `m` contiguous rows of `k` floats at `a`.
  static void run_rows_gemm(const SimdKernels& simd, std::vector<GemmJob>& jobs,
                            const GemmEpilogue& ep, const float* a, int64_t m, int64_t k,
                            const GemmTile& tile, GemmScratch& scratch) {
    struct RowsA {
      const float* a;
      int64_t m, k;
      int mr;
    };
    const RowsA ra{a, m, k, tile.mr};
    GemmAFn a_fn{[](const void* ctx, int64_t, int64_t m0, const float** table) {
                   const auto& c = *static_cast<const RowsA*>(ctx);
                   for (int i = 0; i < c.mr; ++i) {
                     table[i] = c.a + std::min<int64_t>(m0 + i, c.m - 1) * c.k;
                   }
                   return static_cast<const float* const*>(table);
                 },
                 &ra};
    run_gemm(simd, jobs, ep, a_fn, GemmBFn{}, scratch, nullptr, &tile);
  }

  // This node's epilogue (activation, fused steps through the sink) for the projection.
  struct SinkCtx {
    const OutputSink* sink;
    float* y;
  };
  GemmEpilogue projection_epilogue(const SinkCtx* sc) const {
    GemmEpilogue ep;
    ep.act = activation_;
    if (sink_) {
      ep.post = [](const void* ctx, float* c, int64_t ldc, int64_t rows, int64_t cols) {
        const auto& k = *static_cast<const SinkCtx*>(ctx);
        if (cols == ldc) return k.sink->apply(k.y, c - k.y, rows * cols);
        for (int64_t r = 0; r < rows; ++r) k.sink->apply(k.y, (c - k.y) + r * ldc, cols);
      };
      ep.post_ctx = sc;
    }
    return ep;
  }

  void depthwise_pointwise(const float* dx, const float* dbias, const float* bias, float* y,
                           ThreadPool* pool) {
    const ConvShape& d = dw_->s_;
    const ConvShape& s = s_;
    const int threads = pool ? pool->num_threads() : 1;
    const int64_t row_floats = d.out_w * d.out_c;
    reserve_bands(threads);
    const DepthwiseRowArgs a = stage_row_args(dbias);
    const SinkCtx sc{sink_, y};
    const GemmEpilogue ep = projection_epilogue(&sc);
    const int64_t per_image = (d.out_h + band_rows_ - 1) / band_rows_;
    auto task = [&](int64_t b, int thread) {
      const int64_t n = b / per_image;
      const int64_t r0 = (b % per_image) * band_rows_;
      const int64_t r1 = std::min(d.out_h, r0 + band_rows_);
      float* band = bands_[thread].data();
      DepthwiseRowArgs r = a;
      r.x = dx + n * d.in_h * d.in_w * d.in_c;
      for (int64_t oh = r0; oh < r1; ++oh) {
        r.oh = oh;
        r.y = band + (oh - r0) * row_floats;
        simd_.depthwise_nhwc_row(r);
      }
      const int64_t m = (r1 - r0) * d.out_w;
      for (const UnaryArgs& st : dw_steps_) simd_.unary(st, band, band, m * d.out_c);
      project_band(band, m, y + (n * s.pixels() + r0 * s.out_w) * s.out_c, bias, ep, thread);
    };
    const int64_t tasks = s.batch * per_image;
    if (pool) {
      pool->parallel_for(tasks, task);
    } else {
      for (int64_t b = 0; b < tasks; ++b) task(b, 0);
    }
  }

  // Expansion, depthwise and projection (Node::expansion_input): a task is a run of bands of
  // one image; its thread keeps the expansion rows in a window, computing each row once per
  // task (a task's first band also computes the halo rows the previous task had).
  // The expansion stage's run-time operands: its input (the image of its own depthwise stage
  // when it has one) and biases.
  struct ExpansionInputs {
    const float* x = nullptr;
    const float* bias = nullptr;
    const float* dw_bias = nullptr;
  };

  // The expansion stage's product for `m` output pixels into `out` (rows of e.out_c floats):
  // its packed filter, `taps` x `k_per_tap` of reduction.
  void set_expansion_job(int thread, int64_t m, int64_t taps, int64_t k_per_tap, float* out,
                         const float* bias) {
    Conv2dKernel& k = *ex_;
    GemmJob& job = ex_jobs_[thread][0];
    job.m = m;
    job.n = k.s_.out_c;
    job.taps = taps;
    job.k_per_tap = k_per_tap;
    job.a_offset = 0;
    job.zero = k.zero_.data();
    job.b_packed = k.weights();
    job.c = out;
    job.ldc = k.s_.out_c;
    job.col_bias = bias;
  }

  // Rows [a, b) of image n of the expansion stage's value (before its steps) into `out`: a 1x1
  // product of the input rows, or (the expansion is itself a 1x1 conv with a depthwise stage,
  // an LCNet chain) its depthwise rows band by band and their product.
  void expansion_rows(const ExpansionInputs& in, int64_t n, int64_t a, int64_t b, float* out,
                      int thread) {
    Conv2dKernel& k = *ex_;
    const ConvShape& e = k.s_;
    GemmEpilogue ex_ep;
    ex_ep.act = k.activation_;
    if (!k.dw_ && !ex_pointwise_) {
      // Output pixels from row a of image n: the table of each tile from its first pixel.
      struct TableA {
        const Conv2dKernel* k;
        const float* x;
        int64_t m_base;
      } ta{&k, in.x, (n * e.out_h + a) * e.out_w};
      GemmAFn a_fn{[](const void* ctx, int64_t, int64_t m0, const float** scratch) {
                     const auto& c = *static_cast<const TableA*>(ctx);
                     c.k->fill_rows(c.x, c.m_base + m0, scratch);
                     return static_cast<const float* const*>(scratch);
                   },
                   &ta};
      set_expansion_job(thread, (b - a) * e.out_w, k.a_taps_, k.a_k_, out, in.bias);
      run_gemm(simd_, ex_jobs_[thread], ex_ep, a_fn, GemmBFn{}, ex_scratch_[thread], nullptr,
               &k.tile_);
      return;
    }
    if (!k.dw_) {
      const int64_t m = (b - a) * e.out_w;
      set_expansion_job(thread, m, 1, e.in_c, out, in.bias);
      run_rows_gemm(simd_, ex_jobs_[thread], ex_ep, in.x + (n * e.in_h + a) * e.in_w * e.in_c, m,
                    e.in_c, k.tile_, ex_scratch_[thread]);
      return;
    }
    const ConvShape& kd = k.dw_->s_;
    DepthwiseRowArgs r = k.stage_row_args(in.dw_bias);
    r.x = in.x + n * kd.in_h * kd.in_w * kd.in_c;
    float* band = k.bands_[thread].data();
    const int64_t row_floats = kd.out_w * kd.out_c;
    for (int64_t r0 = a; r0 < b; r0 += k.band_rows_) {
      const int64_t r1 = std::min(b, r0 + k.band_rows_);
      for (int64_t oh = r0; oh < r1; ++oh) {
        r.oh = oh;
        r.y = band + (oh - r0) * row_floats;
        simd_.depthwise_nhwc_row(r);
      }
      const int64_t m = (r1 - r0) * kd.out_w;
      for (const UnaryArgs& st : k.dw_steps_) simd_.unary(st, band, band, m * kd.out_c);
      k.project_band(band, m, out + (r0 - a) * e.out_w * e.out_c, in.bias, ex_ep, thread);
    }
  }

  void expansion_depthwise_pointwise(const ExpansionInputs& in, const float* dbias,
                                     const float* bias, float* y, ThreadPool* pool) {
    const ConvShape& e = ex_->s_;
    const ConvShape& d = dw_->s_;
    const ConvShape& s = s_;
    const int threads = pool ? pool->num_threads() : 1;
    const int64_t row_floats = d.out_w * d.out_c;
    const int64_t ex_row = e.out_w * e.out_c;
    reserve_bands(threads);
    // A few-channel expansion (a stem) reads its image's border columns from zero-padded
    // patches, refreshed per run as the stand-alone kernel does.
    if (ex_->padded_) ex_->fill_patches(in.x, pool);
    const DepthwiseRowArgs a = stage_row_args(dbias);
    const SinkCtx sc{sink_, y};
    const GemmEpilogue ep = projection_epilogue(&sc);
    const int64_t per_image = (d.out_h + band_rows_ - 1) / band_rows_;
    // Two runs of bands per thread and image (one with one thread): the split depends only
    // on the shapes and the thread count, and no split changes a value.
    const int64_t runs = threads == 1 ? 1
                                      : std::clamp<int64_t>((2 * threads + s.batch - 1) / s.batch,
                                                            1, std::max<int64_t>(1, per_image));
    auto task = [&](int64_t t, int thread) {
      const int64_t n = t / runs;
      const int64_t b0 = (t % runs) * per_image / runs, b1 = (t % runs + 1) * per_image / runs;
      float* window = ex_windows_[thread].data();
      float* band = bands_[thread].data();
      // window[0] is expansion row `first`; rows [lo, hi) are computed.
      int64_t first = 0, lo = 0, hi = 0;
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t r0 = b * band_rows_, r1 = std::min(d.out_h, r0 + band_rows_);
        const int64_t top = r0 * d.stride_h - d.pad_top;
        const int64_t need_lo = std::clamp<int64_t>(top, 0, d.in_h);
        const int64_t need_hi = std::clamp<int64_t>(top + expansion_span(r1 - r0), need_lo, d.in_h);
        if (need_lo >= hi || need_lo < lo) {
          first = lo = hi = need_lo;  // nothing to keep
        } else if (need_hi - first > ex_window_rows_) {
          // The rows still needed move to the front of the window.
          std::memmove(window, window + (need_lo - first) * ex_row,
                       static_cast<size_t>((hi - need_lo) * ex_row) * sizeof(float));
          first = lo = need_lo;
        } else {
          lo = need_lo;
        }
        if (need_hi > hi) {
          float* out = window + (hi - first) * ex_row;
          const int64_t m = (need_hi - hi) * e.out_w;
          expansion_rows(in, n, hi, need_hi, out, thread);
          for (const UnaryArgs& st : ex_steps_) simd_.unary(st, out, out, m * e.out_c);
          hi = need_hi;
        }
        // The depthwise rows read the window as an image of rows [first, hi): the rows
        // outside it that the band reads are the padding's, as in the whole image.
        DepthwiseRowArgs r = a;
        r.x = window;
        r.in_h = hi - first;
        r.pad_top = d.pad_top + first;
        for (int64_t oh = r0; oh < r1; ++oh) {
          r.oh = oh;
          r.y = band + (oh - r0) * row_floats;
          simd_.depthwise_nhwc_row(r);
        }
        const int64_t m = (r1 - r0) * d.out_w;
        for (const UnaryArgs& st : dw_steps_) simd_.unary(st, band, band, m * d.out_c);
        project_band(band, m, y + (n * s.pixels() + r0 * s.out_w) * s.out_c, bias, ep, thread);
      }
    };
    const int64_t tasks = s.batch * runs;
    if (pool) {
      pool->parallel_for(tasks, task);
    } else {
      for (int64_t t = 0; t < tasks; ++t) task(t, 0);
    }
  }

  const float* weights() const { return shared_ ? shared_->data() : weights_.data(); }

  const SimdKernels& simd_;
  const OutputSink* sink_ = nullptr;
  std::shared_ptr<const AlignedFloats> shared_;  // packed constant filter, shared by plans
  ConvShape s_;
  FilterLayout filter_{"oihw", {0, 0, 0, 0}};
  bool depthwise_ = false, filter_constant_ = false;
  GemmActivation activation_ = GemmActivation::kNone;  // take_activation
  bool activation_allowed_ = true;
  AlignedFloats weights_;
  size_t weight_floats_ = 0;  // of the packed filter
  bool packed_ = false;       // a constant filter's packing is in weights_ or shared_
  size_t group_floats_ = 0;
  // Implicit GEMM.
  int64_t m_ = 0;
  AlignedFloats zero_, in_nhwc_, out_nhwc_;
  bool precompute_table_ = true;
  bool padded_ = false;                  // A taps are filter rows (few channels)
  int64_t a_taps_ = 0, a_k_ = 0;         // A's taps and floats per tap
  std::vector<int64_t> border_index_;    // per output column: its patch, or -1 (inside)
  std::vector<int64_t> border_columns_;  // the output columns that have a patch
  int64_t borders_ = 0;
  AlignedFloats patches_;
  std::vector<const float*> table_;
  const float* table_input_ = nullptr;
  std::vector<GemmJob> jobs_;
  GemmScratch scratch_;
  GemmTile tile_{0, 0, nullptr};
  // A fused depthwise stage (Node::depthwise_input).
  static constexpr int64_t kBandFloats = 16 * 1024;
  std::shared_ptr<const Node> dw_node_;
  std::unique_ptr<Conv2dKernel> dw_;
  std::vector<UnaryArgs> dw_steps_;
  int64_t band_rows_ = 1;
  std::vector<AlignedFloats> bands_;
  std::vector<GemmScratch> band_scratch_;
  std::vector<std::vector<GemmJob>> band_jobs_;
  // Its fused expansion stage (Node::expansion_input): per thread a window of
  // ex_window_rows_ expansion rows.
  static constexpr int64_t kExpansionFloats = 32 * 1024;
  std::unique_ptr<Conv2dKernel> ex_;
  std::vector<UnaryArgs> ex_steps_;
  int64_t ex_window_rows_ = 1;
  bool ex_pointwise_ = true;  // a 1x1 stride-1 expansion: A is its input rows in place
  std::vector<AlignedFloats> ex_windows_;
  std::vector<GemmScratch> ex_scratch_;
  std::vector<std::vector<GemmJob>> ex_jobs_;
  // Planar depthwise.
  PaddedPlane plane_{WindowGeometry{}};
  std::vector<AlignedFloats> plane_scratch_;
};

}  // namespace

std::unique_ptr<Kernel> make_conv2d_kernel(const Node& node, const CompileContext& cc,
                                           const SimdKernels& simd) {
  // The Winograd kernel keeps a direct kernel for its runs with infs or NaNs, which packs its
  // filter only if one comes; a node Winograd does not take gets a direct kernel packed now.
  if (node.depthwise_input) {  // a 1x1 conv with its depthwise stage: no Winograd
    auto k = std::make_unique<Conv2dKernel>(simd);
    if (!k->init(node, cc, /*pack_constant_filter=*/true)) return nullptr;
    return k;
  }
  auto unpacked = std::make_unique<Conv2dKernel>(simd);
  if (!unpacked->init(node, cc, /*pack_constant_filter=*/false)) return nullptr;
  Conv2dKernel* direct = unpacked.get();
  direct->refuse_activations();
  auto k = make_winograd_conv2d_kernel(node, cc, simd, std::move(unpacked));
  if (k.get() != direct) return k;
  auto packed = std::make_unique<Conv2dKernel>(simd);
  if (!packed->init(node, cc, /*pack_constant_filter=*/true)) return nullptr;
  return packed;
}

}  // namespace webnn
