// prelu (float32): y = x >= 0 ? x : slope * x, slope broadcast to the input's shape. The
// product of two floats is exact in double, so the reference's double arithmetic rounded once
// equals the float32 product: bit-identical. Axes along which the slope's walk stays regular
// are merged, so the innermost run is one loop with the slope contiguous or repeated.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

// y = x >= 0 ? x : s * x over n floats (s[i], or s[0] for all when kOneSlope), four at a
// time with a mask (the compiler turned the scalar form back into a branch on the sign,
// mispredicted half the time on activations).
template <bool kOneSlope>
void select_rows(const float* x, const float* s, float* y, int64_t n) {
  typedef float F4 __attribute__((vector_size(16)));
  const float s0 = kOneSlope ? s[0] : 0.0f;
  const F4 one = {s0, s0, s0, s0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    F4 v, w = one;
    std::memcpy(&v, x + i, sizeof(v));
    if constexpr (!kOneSlope) std::memcpy(&w, s + i, sizeof(w));
    const F4 r = v >= 0.0f ? v : w * v;
    std::memcpy(y + i, &r, sizeof(r));
  }
  for (; i < n; ++i) y[i] = x[i] >= 0 ? x[i] : s[kOneSlope ? 0 : i] * x[i];
}

class PreluKernel final : public Kernel {
 public:
  PreluKernel(OperandRef x, OperandRef slope, std::vector<int64_t> shape,
              std::vector<int64_t> slope_stride)
      : x_(x), slope_(slope) {
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 1) continue;
      if (!shape_.empty() && stride_.back() == slope_stride[k] * shape[k]) {
        shape_.back() *= shape[k];
        stride_.back() = slope_stride[k];
        continue;
      }
      shape_.push_back(shape[k]);
      stride_.push_back(slope_stride[k]);
    }
    if (shape_.empty()) {
      shape_.push_back(1);
      stride_.push_back(0);
    }
  }

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(x_).as<float>();
    const float* slope = ctx.in(slope_).as<float>();
    float* y = ctx.out().as<float>();
    const int r = static_cast<int>(shape_.size());
    const int64_t inner = shape_[r - 1], step = stride_[r - 1];
    int64_t rows = 1;
    for (int k = 0; k + 1 < r; ++k) rows *= shape_[k];
    // A short per-channel slope repeated over rows (NHWC activations: 28 channels per pixel):
    // the slope tiled over a block once per run, then long flat loops instead of a short one
    // per pixel with its index arithmetic.
    if (r == 2 && stride_[0] == 0 && step == 1 && inner < kTileFloats / 2) {
      const int64_t period = inner;
      const int64_t tile_len = (kTileFloats / period) * period;
      tile_.resize(static_cast<size_t>(tile_len));
      for (int64_t i = 0; i < tile_len; i += period) {
        std::copy(slope, slope + period, tile_.begin() + i);
      }
      const float* tile = tile_.data();
      const int64_t total = rows * inner, blocks = (total + tile_len - 1) / tile_len;
      parallel_chunks(ctx.pool(), blocks, std::max<int64_t>(1, 16384 / tile_len),
                      [&](int64_t b, int64_t e) {
                        for (int64_t blk = b; blk < e; ++blk) {
                          const int64_t begin = blk * tile_len;
                          const int64_t n = std::min(tile_len, total - begin);
                          const float* xs = x + begin;
                          float* ys = y + begin;
                          select_rows<false>(xs, tile, ys, n);
                        }
                      });
      return Status::ok();
    }
    parallel_chunks(ctx.pool(), rows, std::max<int64_t>(1, 16384 / inner),
                    [&](int64_t b, int64_t e) {
                      for (int64_t row = b; row < e; ++row) {
                        int64_t off = 0, rest = row;
                        for (int k = r - 2; k >= 0; --k) {
                          off += (rest % shape_[k]) * stride_[k];
                          rest /= shape_[k];
                        }
                        const float* xs = x + row * inner;
                        const float* s = slope + off;
                        float* ys = y + row * inner;
                        if (step == 0) {
                          select_rows<true>(xs, s, ys, inner);
                        } else if (step == 1) {
                          select_rows<false>(xs, s, ys, inner);
                        } else {
                          for (int64_t i = 0; i < inner; ++i) {
                            ys[i] = xs[i] >= 0 ? xs[i] : s[i * step] * xs[i];
                          }
                        }
                      }
                    });
    return Status::ok();
  }

 private:
  static constexpr int64_t kTileFloats = 2048;
  OperandRef x_, slope_;
  std::vector<int64_t> shape_, stride_;
  std::vector<float> tile_;  // the slope repeated (per-channel slopes of short rows)
};

}  // namespace

std::unique_ptr<Kernel> make_prelu_kernel(const Node& node, const CompileContext& cc,
                                          const SimdKernels& simd) {
  (void)simd;
  const auto& p = node.as<PreluParams>();
  const TensorView& x = cc.view(p.input);
  const TensorView& s = cc.view(p.slope);
  const TensorView& y = cc.view(OperandRef{node.outputs[0]});
  if (x.data_type != DataType::kFloat32 || s.data_type != DataType::kFloat32) return nullptr;
  if (y.shape != x.shape || s.rank() > x.rank() || x.count == 0) return nullptr;
  // Right-aligned broadcast: missing and size-1 slope axes repeat (stride 0).
  const size_t r = x.rank(), offset = r - s.rank();
  std::vector<int64_t> stride(r, 0);
  int64_t running = 1;
  for (size_t k = r; k-- > offset;) {
    const int64_t d = s.shape[k - offset];
    if (d != 1 && d != x.shape[k]) return nullptr;
    stride[k] = d == 1 ? 0 : running;
    running *= d;
  }
  return std::make_unique<PreluKernel>(p.input, p.slope, x.shape, stride);
}

}  // namespace webnn
