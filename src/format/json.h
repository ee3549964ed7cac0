// A strict JSON reader (RFC 8259) producing Values with source positions, used for the
// graph JSON form, weights manifests and SafeTensors headers. Input is hostile: nesting
// depth is bounded, integers are kept exact or rejected, errors name source:line:col.
#pragma once

#include <string>
#include <string_view>

#include "format/value.h"

namespace webnn::format {

inline constexpr int kMaxJsonDepth = 256;

// Parses one JSON document (surrounding whitespace allowed). Integers without fraction or
// exponent become kInt/kUint (exact) and are rejected beyond uint64; duplicate object keys
// are rejected. Errors are kIo "source:line:col: ...".
Expected<Value> parse_json(std::string_view text, const std::string& source);

}  // namespace webnn::format
