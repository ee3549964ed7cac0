// resample2d (float32, nearest-neighbor and linear) over two adjacent axes: the tensor is
// viewed as [outer, H, W, inner] (NCHW: inner = 1; NHWC: inner = channels). The source rows,
// columns and weights of every output row and column are computed once at compile time with
// the reference's formula (in double), so nearest-neighbour output is bit-identical to the
// reference. Output rows that read the same source rows as the row above are copies of it.
// Linear rows blend their two source rows first (a vector pass over the row), then the two
// source columns of each output column; float32 throughout, well within the WPT tolerance.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/aligned_buffer.h"
#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

// The reference's sampling coordinate (backends/reference/pool.cc): scale = out / in, then
// clamp((o + 0.5) / scale - 0.5, 0, in - 1), in double.
double source_coordinate(int64_t o, int64_t in_size, int64_t out_size) {
  const double scale = static_cast<double>(out_size) / static_cast<double>(in_size);
  const double c = (static_cast<double>(o) + 0.5) / scale - 0.5;
  return std::clamp(c, 0.0, static_cast<double>(in_size - 1));
}

// Source indices and weights of each output index along one axis.
struct AxisMap {
  std::vector<int32_t> lo, hi;  // nearest: lo only
  std::vector<float> wlo, whi;

  void build(int64_t in, int64_t out, bool linear) {
    lo.resize(out);
    hi.resize(out);
    wlo.resize(out);
    whi.resize(out);
    for (int64_t o = 0; o < out; ++o) {
      const double c = source_coordinate(o, in, out);
      if (!linear) {
        lo[o] = hi[o] = static_cast<int32_t>(std::ceil(c - 0.5));
        wlo[o] = 1.0f;
        whi[o] = 0.0f;
        continue;
      }
      const double f = std::floor(c);
      lo[o] = static_cast<int32_t>(f);
      hi[o] = static_cast<int32_t>(std::ceil(c));
      wlo[o] = static_cast<float>(1.0 - (c - f));
      whi[o] = static_cast<float>(c - f);
    }
  }
  bool same(int64_t a, int64_t b) const {
    return lo[a] == lo[b] && hi[a] == hi[b] && wlo[a] == wlo[b] && whi[a] == whi[b];
  }
  // The integral upsampling factor when output index o reads input o / factor, else 0.
  int64_t repeat_factor(int64_t in) const {
    const int64_t out = static_cast<int64_t>(lo.size());
    if (in == 0 || out % in != 0) return 0;
    const int64_t factor = out / in;
    for (int64_t o = 0; o < out; ++o) {
      if (lo[o] != o / factor) return 0;
    }
    return factor;
  }
};

class Resample2dKernel final : public Kernel {
 public:
  explicit Resample2dKernel(const SimdKernels& simd) : simd_(simd) {}

  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<Resample2dParams>();
    const TensorView& x = cc.view(p.input);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (x.data_type != DataType::kFloat32 || x.rank() != 4 || y.rank() != 4) return false;
    if (x.count == 0 || y.count == 0) return false;
    if (p.mode != "linear" && p.mode != "nearest-neighbor") return false;
    linear_ = p.mode == "linear";
    const IntList axes = p.axes.value_or(IntList{2, 3});
    if (axes.size() != 2) return false;
    const int64_t a0 = std::min(axes[0], axes[1]), a1 = std::max(axes[0], axes[1]);
    if (a0 < 0 || a1 != a0 + 1 || a1 > 3) return false;
    outer_ = 1;
    inner_ = 1;
    for (int64_t i = 0; i < a0; ++i) outer_ *= x.shape[i];
    for (int64_t i = a1 + 1; i < 4; ++i) inner_ *= x.shape[i];
    in_h_ = x.shape[a0];
    in_w_ = x.shape[a1];
    out_h_ = y.shape[a0];
    out_w_ = y.shape[a1];
    if (in_h_ * in_w_ > (int64_t{1} << 30) / std::max<int64_t>(1, inner_)) return false;
    rows_.build(in_h_, out_h_, linear_);
    cols_.build(in_w_, out_w_, linear_);
    repeat_ = linear_ || inner_ != 1 ? 0 : cols_.repeat_factor(in_w_);
    return true;
  }

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(ctx.params<Resample2dParams>().input).as<float>();
    float* y = ctx.out().as<float>();
    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->num_threads() : 1;
    const int64_t total = outer_ * out_h_;
    const int64_t row_floats = out_w_ * inner_;
    // Chunks of whole output rows, about 16K floats each, a few per thread at most.
    int64_t chunks = std::max<int64_t>(1, total * row_floats / 16384);
    chunks = std::min<int64_t>({chunks, total, int64_t{threads} * 4});
    if (!pool) chunks = 1;
    const int64_t step = (total + chunks - 1) / chunks;
    if (linear_ && scratch_.size() < static_cast<size_t>(threads)) scratch_.resize(threads);
    if (linear_) {
      for (auto& s : scratch_) s.reserve(static_cast<size_t>(in_w_ * inner_));
    }
    auto task = [&](int64_t c, int thread) {
      const int64_t begin = c * step, end = std::min(total, begin + step);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t oh = i % out_h_;
        float* dst = y + i * row_floats;
        if (i > begin && oh > 0 && rows_.same(oh, oh - 1)) {
          std::memcpy(dst, dst - row_floats, static_cast<size_t>(row_floats) * sizeof(float));
          continue;
        }
        const float* plane = x + (i / out_h_) * in_h_ * in_w_ * inner_;
        if (linear_) {
          linear_row(plane, oh, dst, scratch_[thread].data());
        } else {
          nearest_row(plane + rows_.lo[oh] * in_w_ * inner_, dst);
        }
      }
    };
    if (chunks <= 1) {
      task(0, 0);
    } else {
      pool->parallel_for(chunks, task);
    }
    return Status::ok();
  }

 private:
  void nearest_row(const float* src, float* dst) const {
    if (inner_ == 1) {
      if (repeat_) {
        simd_.repeat_row(src, in_w_, repeat_, dst);
      } else {
        simd_.gather_row(src, cols_.lo.data(), dst, out_w_);
      }
      return;
    }
    const size_t bytes = static_cast<size_t>(inner_) * sizeof(float);
    for (int64_t ow = 0; ow < out_w_; ++ow) {
      std::memcpy(dst + ow * inner_, src + cols_.lo[ow] * inner_, bytes);
    }
  }

  void linear_row(const float* plane, int64_t oh, float* dst, float* t) const {
    const int64_t row = in_w_ * inner_;
    simd_.lerp_rows(plane + rows_.lo[oh] * row, plane + rows_.hi[oh] * row, rows_.wlo[oh],
                    rows_.whi[oh], t, row);
    if (inner_ == 1) {
      simd_.lerp_gather(t, cols_.lo.data(), cols_.hi.data(), cols_.wlo.data(), cols_.whi.data(),
                        dst, out_w_);
      return;
    }
    for (int64_t ow = 0; ow < out_w_; ++ow) {
      simd_.lerp_rows(t + cols_.lo[ow] * inner_, t + cols_.hi[ow] * inner_, cols_.wlo[ow],
                      cols_.whi[ow], dst + ow * inner_, inner_);
    }
  }

  const SimdKernels& simd_;
  bool linear_ = false;
  int64_t outer_ = 1, inner_ = 1, in_h_ = 0, in_w_ = 0, out_h_ = 0, out_w_ = 0;
  int64_t repeat_ = 0;
  AxisMap rows_, cols_;
  std::vector<AlignedFloats> scratch_;
};

}  // namespace

std::unique_ptr<Kernel> make_resample2d_kernel(const Node& node, const CompileContext& cc,
                                               const SimdKernels& simd) {
  auto k = std::make_unique<Resample2dKernel>(simd);
  if (!k->init(node, cc)) return nullptr;
  return k;
}

}  // namespace webnn
