// The SIMD kernels built for AVX-512 (CMakeLists.txt compiles this file with -mavx512f etc.;
// they run only where cpu_isa() finds AVX-512).
#include <limits>
#include <type_traits>

#include "backends/cpu/simd_kernels.h"

#if defined(__AVX512F__)
#include <immintrin.h>

namespace webnn {
namespace avx512 {
constexpr const char* kIsaName = "avx512";
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
}  // namespace avx512

const SimdKernels* simd_kernels_avx512() { return &avx512::kKernels; }

}  // namespace webnn
#else
namespace webnn {
const SimdKernels* simd_kernels_avx512() { return nullptr; }
}  // namespace webnn
#endif
