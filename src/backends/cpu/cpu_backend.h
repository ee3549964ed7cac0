// The default CPU backend: fast float32 kernels, the reference kernels for the rest.
#pragma once

#include "backends/backend.h"

namespace webnn {

const Backend& cpu_backend();

}  // namespace webnn
