// prelu (float32): y = x >= 0 ? x : slope * x, slope broadcast to the input's shape. The
// product of two floats is exact in double, so the reference's double arithmetic rounded once
// equals the float32 product: bit-identical. Axes along which the slope's walk stays regular
// are merged, so the innermost run is one loop with the slope contiguous or repeated.
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

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
                          const float sv = s[0];
                          for (int64_t i = 0; i < inner; ++i)
                            ys[i] = xs[i] >= 0 ? xs[i] : sv * xs[i];
                        } else {
                          for (int64_t i = 0; i < inner; ++i)
                            ys[i] = xs[i] >= 0 ? xs[i] : s[i] * xs[i];
                        }
                      }
                    });
    return Status::ok();
  }

 private:
  OperandRef x_, slope_;
  std::vector<int64_t> shape_, stride_;
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
