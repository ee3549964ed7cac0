// Operation arguments <-> params structs, generic over the op table: every field is reached
// through the params' visit(), its file key is the camelCase of the field name (format.md
// §5.3). Shared by the text and JSON readers (apply_args) and the printer (format_args).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "format/document.h"
#include "webnn/graph.h"

namespace webnn::format {

// The key a field is written under: camelCase of the snake_case field name, except the
// exceptions format.md §5.3 lists (cast's data type is `to`).
std::string file_key(std::string_view field_name);

using NameResolver = std::function<std::optional<OperandId>(const std::string&)>;

// Applies a statement's arguments to `params` (which must hold default_params(kind)):
// positional operand names fill the operand fields in order, named arguments set the field
// with that key; legacy forms of format.md §5.3/§10 are accepted. Errors are kIo naming
// source:line:col.
Status apply_args(OpKind kind, const std::vector<ArgDoc>& args, const NameResolver& resolve,
                  const std::string& source, const Loc& stmt_loc, OpParams& params,
                  std::string& label);

// The canonical argument list of `node` (format.md §6.5), each ready to print: "x",
// "axis=1", "label=\"act\"". Errors (kValue): a value that cannot be written (NaN, an
// infinity other than an unbounded clamp limit).
Expected<std::vector<std::string>> format_args(
    const Node& node, const std::function<std::string(OperandId)>& name_of);

// Text-format literal of a value (strings escape only '"' and '\').
std::string format_value(const Value& v);
std::string quote_text_string(std::string_view s);

}  // namespace webnn::format
