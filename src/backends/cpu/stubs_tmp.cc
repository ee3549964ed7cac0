#include "backends/cpu/cpu_kernels.h"
namespace webnn {
std::unique_ptr<Kernel> make_conv2d_kernel(const Node&, const CompileContext&, const SimdKernels&) {
  return nullptr;
}
std::unique_ptr<Kernel> make_elementwise_kernel(const Node&, const CompileContext&,
                                                const SimdKernels&) {
  return nullptr;
}
std::unique_ptr<Kernel> make_softmax_kernel(const Node&, const CompileContext&,
                                            const SimdKernels&) {
  return nullptr;
}
std::unique_ptr<Kernel> make_pool_kernel(const Node&, const CompileContext&, const SimdKernels&) {
  return nullptr;
}
}  // namespace webnn
