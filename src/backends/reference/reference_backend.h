// The reference backend: every op and data type, obviously correct (the oracle of the tests
// and the fallback of the other backends).
#pragma once

#include "backends/backend.h"

namespace webnn {

// The reference kernel table (every op, every data type of its schema).
const KernelTable& reference_kernels();
const Backend& reference_backend();

}  // namespace webnn
