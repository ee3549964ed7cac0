// Instruction-set selection for the cpu backend's SIMD kernels, decided once per process from
// what the CPU and OS support (capped by WEBNN_CPU_ISA for testing the fallbacks).
#pragma once

namespace webnn {

enum class CpuIsa { kGeneric, kAvx2, kAvx512 };

// The best ISA this build has kernels for and this machine runs; WEBNN_CPU_ISA=generic|avx2|
// avx512 lowers it (never raises it).
CpuIsa cpu_isa();
// Whether kernels for `isa` were compiled in and this machine can run them.
bool cpu_isa_usable(CpuIsa isa);
const char* cpu_isa_name(CpuIsa isa);

}  // namespace webnn
