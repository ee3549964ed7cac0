// The float32 NCHW <-> NHWC transposes that layout assignment (graph/passes/
// layout_assignment.cc) leaves where a graph's layout is observed: per image, one matrix
// transpose (C x HW <-> HW x C) on the cache-blocked SIMD kernel, rows split across threads.
#include <algorithm>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/transpose_batch.h"

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
    transpose_batch(simd_, a, count_, rows_, cols_, out, ctx.pool());
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
