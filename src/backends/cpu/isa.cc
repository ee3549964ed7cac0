#include "backends/cpu/isa.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "backends/cpu/simd_kernels.h"

namespace webnn {

namespace {

bool machine_supports(CpuIsa isa) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  // __builtin_cpu_supports also checks that the OS saves the wider registers (XGETBV).
  switch (isa) {
    case CpuIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("fma");
    case CpuIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuIsa::kGeneric:
      return true;
  }
  return false;
#else
  return isa == CpuIsa::kGeneric;
#endif
}

CpuIsa detect() {
  CpuIsa cap = CpuIsa::kAvx512;
  if (const char* env = std::getenv("WEBNN_CPU_ISA")) {
    if (std::strcmp(env, "generic") == 0) cap = CpuIsa::kGeneric;
    if (std::strcmp(env, "avx2") == 0) cap = CpuIsa::kAvx2;
  }
  for (CpuIsa isa : {CpuIsa::kAvx512, CpuIsa::kAvx2}) {
    if (static_cast<int>(isa) <= static_cast<int>(cap) && cpu_isa_usable(isa)) return isa;
  }
  return CpuIsa::kGeneric;
}

}  // namespace

bool cpu_isa_usable(CpuIsa isa) { return simd_kernels_for(isa) != nullptr; }

CpuIsa cpu_isa() {
  static const CpuIsa isa = detect();
  return isa;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kGeneric:
      return "generic";
  }
  return "generic";
}

const SimdKernels* simd_kernels_for(CpuIsa isa) {
  const SimdKernels* k = nullptr;
  switch (isa) {
    case CpuIsa::kAvx512:
      k = simd_kernels_avx512();
      break;
    case CpuIsa::kAvx2:
      k = simd_kernels_avx2();
      break;
    case CpuIsa::kGeneric:
      k = simd_kernels_generic();
      break;
  }
  return k && machine_supports(isa) ? k : nullptr;
}

const SimdKernels& simd_kernels() {
  static const SimdKernels& k = *simd_kernels_for(cpu_isa());
  return k;
}

}  // namespace webnn
