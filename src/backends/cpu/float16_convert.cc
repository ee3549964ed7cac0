// float16 <-> float32 conversion loops (float16_convert.h). The F16C forms are compiled with
// their own target attribute, so the rest of the library needs no -mf16c; the scalar forms run
// where the CPU lacks F16C or WEBNN_CPU_ISA=generic asks for the portable kernels.
#include "backends/cpu/float16_convert.h"

#include <cpuid.h>
#include <immintrin.h>

#include "backends/cpu/isa.h"

namespace webnn {

namespace {

__attribute__((target("avx,f16c"))) void widen_f16c(const float16* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

__attribute__((target("avx,f16c"))) void narrow_f16c(const float* s, float16* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
  for (; i < n; ++i) d[i] = static_cast<float16>(s[i]);
}

}  // namespace

bool cpu_has_f16c() {
  // cpuid leaf 1, ECX: clang 16's __builtin_cpu_supports does not know "f16c" (GCC's does).
  // The generic ISA (WEBNN_CPU_ISA=generic) also takes the scalar loops, so tests reach them.
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0 && __builtin_cpu_supports("avx") &&
           cpu_isa() != CpuIsa::kGeneric;
  }();
  return yes;
}

void widen_f16(const float16* s, float* d, int64_t n) {
  if (cpu_has_f16c()) return widen_f16c(s, d, n);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

void narrow_f16(const float* s, float16* d, int64_t n) {
  if (cpu_has_f16c()) return narrow_f16c(s, d, n);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float16>(s[i]);
}

}  // namespace webnn
