// MLGraph._describe(): the graph's structure and summary numbers for tools (webnn CLI).
#pragma once

#include <nanobind/nanobind.h>

#include "objects.h"

namespace webnn::py {

void bind_introspection(nanobind::class_<GraphHandle>& cls);

}  // namespace webnn::py
