// The reference backend: every op and data type, obviously correct (the oracle of the tests
// and the fallback of the other backends).
#pragma once

#include "backends/backend.h"

namespace webnn {

// The reference kernel table (every op, every data type of its schema).
const KernelTable& reference_kernels();
const Backend& reference_backend();
// The double formula of an option-less float element-wise op (cos, sin, log, softplus, ...),
// before rounding to the output type: the cpu backend evaluates the same function.
double reference_unary(OpKind kind, double x);

}  // namespace webnn
