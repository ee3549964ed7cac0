// conv2d / convTranspose2d whose filter holds a NaN or an infinity (docs/reliability.md).
//
// The definition (spec/ops.md, the reference backend) sums x * w over the taps that land on
// the image: padded positions and missing transposed-conv taps contribute nothing, not
// 0 * w. The fast kernels multiply zeros there instead (im2col-style pointer tables into a
// zero row, zero-padded copies and planes, phase GEMM rows past the image), which equals the
// definition exactly when every filter value is finite, but gives 0 * inf = NaN otherwise. So
// a filter with a non-finite value takes the reference kernel's direct sum: a constant filter
// is checked once here at compile time, any other one by a scan per run (a filter is far
// smaller than the work of the convolution it feeds).
#include <cstdint>
#include <cstring>
#include <memory>

#include "backends/cpu/cpu_kernels.h"
#include "backends/reference/reference_backend.h"

namespace webnn {

namespace {

bool has_non_finite(const float* w, uint64_t n) {
  uint32_t any = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, w + i, sizeof bits);
    any |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);  // inf or NaN
  }
  return any != 0;
}

class NonFiniteFilterGuard final : public Kernel {
 public:
  NonFiniteFilterGuard(std::unique_ptr<Kernel> fast, OperandRef filter, KernelFn direct)
      : fast_(std::move(fast)), filter_(filter), direct_(direct) {}

  Status run(KernelContext& ctx) override {
    const TensorView& w = ctx.in(filter_);
    if (!has_non_finite(w.as<float>(), w.count)) return fast_->run(ctx);
    WEBNN_RETURN_IF_ERROR(direct_(ctx));
    // The fast kernel would have passed its output through the fused epilogue.
    if (sink_) sink_->apply(ctx.out().as<float>(), 0, static_cast<int64_t>(ctx.out().count));
    return Status::ok();
  }

  bool set_output_sink(const OutputSink* sink) override {
    if (!fast_->set_output_sink(sink)) return false;
    sink_ = sink;
    return true;
  }

 private:
  std::unique_ptr<Kernel> fast_;
  OperandRef filter_;
  KernelFn direct_;
  const OutputSink* sink_ = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> guard_non_finite_filter(std::unique_ptr<Kernel> fast, const Node& node,
                                                OperandRef filter, const CompileContext& cc) {
  if (!fast) return nullptr;
  const KernelFn direct = reference_kernels()[static_cast<int>(node.kind)];
  const TensorView& w = cc.view(filter);
  if (cc.is_constant(filter) && w.data) {
    // Known now: the fast kernel (its packed filter) is kept only when it computes the
    // definition.
    if (has_non_finite(w.as<float>(), w.count)) return std::make_unique<FunctionKernel>(direct);
    return fast;
  }
  return std::make_unique<NonFiniteFilterGuard>(std::move(fast), filter, direct);
}

}  // namespace webnn
