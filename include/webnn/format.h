// Graph files (spec/format.md): the `.webnn` text format, its JSON form, and the weights
// containers next to them (SafeTensors sidecar, `manifest.json` + `.weights` blob).
//
// Loading goes through GraphBuilder, so a file is validated by exactly the code that
// validates Python calls; saving writes the canonical text (format.md §6) and a SafeTensors
// sidecar atomically (temp file in the same directory + rename).
#pragma once

#include <string>
#include <string_view>

#include "webnn/graph.h"
#include "webnn/status.h"

namespace webnn {

// Header fields of a graph file that are not part of the Graph IR.
struct GraphFileInfo {
  std::string name = "graph";  // webnn_graph "<name>"
  bool quantized = false;      // @quantized: informational only (format.md §6.1)
};

// Canonical text of `graph` (format.md §6). Graph outputs get their output names, inputs and
// named constants/values keep theirs, everything else is `operand_<id>`. Constants are
// declared `@weights("<name>")` (4-bit ones inline as `@bytes`). Errors (kValue): a name
// that is not a text identifier, an output named like an input or constant, a NaN or
// non-representable infinite option value.
Expected<std::string> format_graph(const Graph& graph, const GraphFileInfo& info = {});

// Writes `path` (the canonical text) and, when a constant needs one, `<dir>/<stem>.safetensors`
// holding one tensor per `@weights` constant. Both are written to temporary files first and
// renamed into place, so a failed save leaves no partial or stray file.
// Errors: kValue (as format_graph), kNotFound (parent directory missing), kIo (other I/O).
Status save_graph(const Graph& graph, const std::string& path, const GraphFileInfo& info = {});

// Reads a `.webnn` text or `webnn-graph-json` file (format detected from the first
// non-whitespace character), resolves `@weights` next to it (format.md §9.4; large tensors
// are memory-mapped, not copied) and rebuilds it through GraphBuilder. Every value of the
// returned graph carries its file name in Operand::name. `info` receives the header fields.
// Errors: kNotFound (no such file), kIo (everything else, naming file:line:col or the
// weight key; validation failures of ops.md included, as api.md §7 prescribes OSError).
Expected<Graph> load_graph_file(const std::string& path, GraphFileInfo* info = nullptr);

// Same as load_graph_file for an in-memory `source`; `path` names it in error messages and
// locates the weights files (the file itself need not exist).
Expected<Graph> load_graph_source(std::string_view source, const std::string& path,
                                  GraphFileInfo* info = nullptr);

}  // namespace webnn
