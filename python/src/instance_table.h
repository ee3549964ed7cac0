// Room in nanobind's table of live Python objects before one is made (instance_table.cc).
#pragma once

#include <cstddef>

namespace webnn::py {

// Grows nanobind's C++-pointer -> Python-object table now if making `count` more objects could
// grow it, and raises MemoryError naming `what` when that allocation fails.
void reserve_python_objects(const char* what, size_t count = 1);

}  // namespace webnn::py
