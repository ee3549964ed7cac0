// softmax (float32) along any axis: rows when the axis is innermost, else columns of up to a
// vector's width at a time (simd_kernels.h).
#include <algorithm>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(const SimdKernels& simd, int64_t outer, int64_t len, int64_t inner)
      : simd_(simd), outer_(outer), len_(len), inner_(inner) {}

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(ctx.params<SoftmaxParams>().input).as<float>();
    float* y = ctx.out().as<float>();
    const int64_t block = len_ * inner_;
    if (inner_ == 1) {
      parallel_chunks(ctx.pool(), outer_, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, len_)),
                      [&](int64_t begin, int64_t end) {
                        simd_.softmax(x + begin * len_, y + begin * len_, len_, 1, end - begin);
                      });
      return Status::ok();
    }
    // Tasks: (outer index, column chunk of 64).
    constexpr int64_t kCols = 64;
    const int64_t chunks = (inner_ + kCols - 1) / kCols;
    parallel_chunks(ctx.pool(), outer_ * chunks,
                    std::max<int64_t>(1, 8192 / std::max<int64_t>(1, len_ * kCols)),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t t = begin; t < end; ++t) {
                        const int64_t o = t / chunks, c = (t % chunks) * kCols;
                        const int64_t offset = o * block + c;
                        simd_.softmax(x + offset, y + offset, len_, inner_,
                                      std::min(kCols, inner_ - c));
                      }
                    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  int64_t outer_, len_, inner_;
};

}  // namespace

std::unique_ptr<Kernel> make_softmax_kernel(const Node& node, const CompileContext& cc,
                                            const SimdKernels& simd) {
  const auto& p = node.as<SoftmaxParams>();
  const TensorView& x = cc.view(p.input);
  if (x.data_type != DataType::kFloat32 || p.axis < 0 || static_cast<size_t>(p.axis) >= x.rank()) {
    return nullptr;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < p.axis; ++i) outer *= x.shape[i];
  for (size_t i = p.axis + 1; i < x.rank(); ++i) inner *= x.shape[i];
  return std::make_unique<SoftmaxKernel>(simd, outer, x.shape[p.axis], inner);
}

}  // namespace webnn
