// The float32 NCHW <-> NHWC transposes that layout assignment (graph/passes/
// layout_assignment.cc) leaves where a graph's layout is observed: per image, one matrix
// transpose (C x HW <-> HW x C) on the cache-blocked SIMD kernel, rows split across threads.
#include <algorithm>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

class LayoutTransposeKernel final : public Kernel {
 public:
  LayoutTransposeKernel(const SimdKernels& simd, int64_t count, int64_t rows, int64_t cols)
      : simd_(simd), count_(count), rows_(rows), cols_(cols) {}

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<TransposeParams>();
    const float* a = ctx.in(p.input).as<float>();
    float* out = ctx.out().as<float>();
    const int64_t rows = rows_, cols = cols_;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cols));
    parallel_chunks(ctx.pool(), count_ * rows, grain, [&](int64_t begin, int64_t end) {
      while (begin < end) {
        const int64_t m = begin / rows, r0 = begin % rows;
        const int64_t r1 = std::min(rows, r0 + (end - begin));
        simd_.transpose(a + m * rows * cols, rows, cols, r0, r1, out + m * rows * cols);
        begin += r1 - r0;
      }
    });
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  int64_t count_, rows_, cols_;
};

}  // namespace

std::unique_ptr<Kernel> make_layout_transpose_kernel(const Node& node, const CompileContext& cc,
                                                     const SimdKernels& simd) {
  const auto& p = node.as<TransposeParams>();
  const TensorView& x = cc.view(p.input);
  if (x.data_type != DataType::kFloat32 || x.rank() != 4 || !p.permutation) return nullptr;
  const std::vector<int64_t>& perm = *p.permutation;
  const auto& s = x.shape;
  if (perm == std::vector<int64_t>{0, 2, 3, 1}) {  // NCHW -> NHWC: C x HW per image
    return std::make_unique<LayoutTransposeKernel>(simd, s[0], s[1], s[2] * s[3]);
  }
  if (perm == std::vector<int64_t>{0, 3, 1, 2}) {  // NHWC -> NCHW: HW x C per image
    return std::make_unique<LayoutTransposeKernel>(simd, s[0], s[1] * s[2], s[3]);
  }
  return nullptr;
}

}  // namespace webnn
