// pow (float32) with a constant scalar exponent that has an exact float32 form: 2 (x * x:
// the square of a float is exact in double, so the reference's rounded pow(x, 2) is the
// correctly rounded float product), 1 (a copy) and 0.5 (sqrtf, correctly rounded like the
// reference's sqrt in double; pow's special cases pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf
// kept). Bit-identical to the reference; other exponents run on the reference kernel.
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

class PowKernel final : public Kernel {
 public:
  PowKernel(OperandRef a, float exponent, int64_t count) : a_(a), e_(exponent), count_(count) {}

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(a_).as<float>();
    float* y = ctx.out().as<float>();
    parallel_chunks(ctx.pool(), count_, 16384, [&](int64_t b, int64_t e) {
      if (e_ == 2.0f) {
        for (int64_t i = b; i < e; ++i) y[i] = x[i] * x[i];
      } else if (e_ == 1.0f) {
        std::memcpy(y + b, x + b, static_cast<size_t>(e - b) * sizeof(float));
      } else {  // 0.5
        const float inf = std::numeric_limits<float>::infinity();
        for (int64_t i = b; i < e; ++i) y[i] = x[i] == -inf ? inf : std::sqrt(x[i]) + 0.0f;
      }
    });
    return Status::ok();
  }

 private:
  OperandRef a_;
  float e_;
  int64_t count_;
};

}  // namespace

std::unique_ptr<Kernel> make_pow_kernel(const Node& node, const CompileContext& cc,
                                        const SimdKernels& simd) {
  (void)simd;
  const auto& p = node.as<BinaryParams>();
  const TensorView& a = cc.view(p.a);
  const TensorView& b = cc.view(p.b);
  const TensorView& y = cc.view(OperandRef{node.outputs[0]});
  if (a.data_type != DataType::kFloat32 || b.data_type != DataType::kFloat32) return nullptr;
  if (!cc.is_constant(p.b) || b.count != 1 || a.count != y.count || !b.data) return nullptr;
  const float e = b.as<float>()[0];
  if (e != 2.0f && e != 1.0f && e != 0.5f) return nullptr;
  return std::make_unique<PowKernel>(p.a, e, static_cast<int64_t>(y.count));
}

}  // namespace webnn
