// The SIMD kernels built for the baseline ISA of the target (4-lane vectors), the fallback
// for machines without AVX2.
#include <limits>
#include <type_traits>

#include "backends/cpu/simd_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace webnn {
namespace generic {
constexpr const char* kIsaName = "generic";
#include "backends/cpu/simd.inc"
//
#include "backends/cpu/transcendental.inc"
//
#include "backends/cpu/elementary.inc"
//
#include "backends/cpu/trig.inc"
//
#include "backends/cpu/gemm_ukernel.inc"
//
#include "backends/cpu/elementwise.inc"
//
#include "backends/cpu/chain.inc"
//
#include "backends/cpu/transpose.inc"
//
#include "backends/cpu/window.inc"
//
#include "backends/cpu/conv_depthwise.inc"
//
#include "backends/cpu/resample.inc"
//
#include "backends/cpu/normalization.inc"
//
#include "backends/cpu/recurrent.inc"
//
#include "backends/cpu/winograd.inc"
//
#include "backends/cpu/cast.inc"
//
#include "backends/cpu/predicate.inc"
//
#include "backends/cpu/lstm_cell.inc"
//
#include "backends/cpu/kernels_table.inc"
}  // namespace generic

const SimdKernels* simd_kernels_generic() { return &generic::kKernels; }

}  // namespace webnn
