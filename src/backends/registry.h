// The backends compiled into this build. The registry is the one place that knows every
// backend; the runtime chooses among them through it and sees only the Backend interface.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.h"

namespace webnn {

// Backends compiled into this build, in preference order. Immutable.
const std::vector<const Backend*>& registered_backends();
// The registered backend called `name`, or null.
const Backend* find_backend(const std::string& name);

}  // namespace webnn
