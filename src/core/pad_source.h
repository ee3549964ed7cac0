// pad's index rule, shared by the reference and cpu backends so both read the same element.
#pragma once

#include <cstdint>
#include <string_view>

namespace webnn {

// Maps an output coordinate i of a padded axis (i < 0 in the leading padding) to the input
// coordinate it copies, or -1 for the constant fill value. Reflection excludes the edge
// element, symmetric repeats it; pads never exceed one period (checked by Infer), so one fold
// suffices.
inline int64_t pad_source(int64_t i, int64_t size, std::string_view mode) {
  if (i >= 0 && i < size) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : size - 1;
  const bool reflect = mode == "reflection";
  if (i < 0) return reflect ? -i : -i - 1;
  return reflect ? 2 * (size - 1) - i : 2 * size - 1 - i;
}

}  // namespace webnn
