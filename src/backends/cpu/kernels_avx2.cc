// The SIMD kernels built for AVX2 + FMA (CMakeLists.txt compiles this file with -mavx2 -mfma;
// they run only where cpu_isa() finds AVX2).
#include <limits>
#include <type_traits>

#include "backends/cpu/simd_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>

namespace webnn {
namespace avx2 {
constexpr const char* kIsaName = "avx2";
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
}  // namespace avx2

const SimdKernels* simd_kernels_avx2() { return &avx2::kKernels; }

}  // namespace webnn
#else
namespace webnn {
const SimdKernels* simd_kernels_avx2() { return nullptr; }
}  // namespace webnn
#endif
