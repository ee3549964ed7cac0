// The Winograd F(4x4, 3x3) conv2d kernel (conv_winograd.cc).
#pragma once

#include <memory>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

// The Winograd kernel for a conv2d node it suits (3x3, stride 1, NHWC, ...: see the .cc),
// computing through `direct` instead for runs whose result is not finite everywhere (the
// transforms would spread an inf or NaN over neighbouring outputs). Returns `direct` itself
// when the node does not suit, or when WEBNN_CONV_WINOGRAD=0.
std::unique_ptr<Kernel> make_winograd_conv2d_kernel(const Node& node, const CompileContext& cc,
                                                    const SimdKernels& simd,
                                                    std::unique_ptr<Kernel> direct);

}  // namespace webnn
