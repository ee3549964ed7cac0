// A parsed graph file before it is built: what the text and JSON forms have in common
// (format.md §3–§5, §8). The loader turns it into a Graph through GraphBuilder.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "format/value.h"
#include "webnn/types.h"

namespace webnn::format {

struct ConstInit {
  enum class Kind { kWeights, kScalar, kBytes };
  Kind kind = Kind::kWeights;
  std::string key;             // kWeights
  Value scalar;                // kScalar: an integer or double
  std::vector<uint8_t> bytes;  // kBytes
  Loc loc;
};

struct DeclDoc {
  std::string name;
  DataType data_type = DataType::kFloat32;
  Shape shape;
  ConstInit init;  // constants only
  Loc loc;
};

struct ArgDoc {
  std::string key;  // empty for a positional argument
  Value value;
  Loc loc;
};

struct StmtDoc {
  std::vector<std::string> outputs;
  std::string op;
  std::vector<ArgDoc> args;
  Loc loc;     // the statement
  Loc op_loc;  // the operation name
};

struct OutputDoc {
  std::string name;   // graph output name
  std::string value;  // value it exposes (equal to name in the text form)
  Loc loc;
};

struct GraphDoc {
  std::string source;  // file name for messages
  std::string name = "graph";
  bool quantized = false;
  std::vector<DeclDoc> inputs;
  std::vector<DeclDoc> consts;
  std::vector<StmtDoc> nodes;
  std::vector<OutputDoc> outputs;
};

// Parses the text form (format.md §2–§5). `text` must not start with a BOM.
Expected<GraphDoc> parse_text(std::string_view text, const std::string& source);
// Parses the JSON form (format.md §8).
Expected<GraphDoc> parse_json_graph(std::string_view text, const std::string& source);

// Dtype keywords of the text form ("f32") and the long names ("float32").
std::optional<DataType> short_type_name(std::string_view word);
const char* short_type_name(DataType t);

}  // namespace webnn::format
