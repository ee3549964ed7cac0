// float16 <-> float32 conversion loops of the cpu backend (float16.cc): F16C when the CPU has
// it (checked once at run time), else the compiler's scalar conversion. Both round to nearest
// even and are exact inverses on float16 values, so they never change a value a kernel copies.
#pragma once

#include <cstdint>

#include "webnn/types.h"

namespace webnn {

void widen_f16(const float16* src, float* dst, int64_t n);
void narrow_f16(const float* src, float16* dst, int64_t n);
// Whether widen_f16 / narrow_f16 run on F16C here.
bool cpu_has_f16c();

}  // namespace webnn
