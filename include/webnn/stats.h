// Summary numbers of a graph for tooling (`webnn info`): operation histogram, parameter
// counts and a FLOP estimate.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "webnn/graph.h"

namespace webnn {

struct GraphStats {
  std::map<std::string, int64_t> op_histogram;  // spec name -> count
  uint64_t parameter_count = 0;                 // elements of all constants
  uint64_t parameter_bytes = 0;                 // their storage bytes (4-bit packed)
  // Multiply-adds count as 2; element-wise ops as 1 per output element. Dynamic dimensions
  // count at their maxSize. An estimate for comparing graphs, not a measurement.
  double flops = 0;
};

GraphStats graph_stats(const Graph& graph);

// FLOP estimate of one node given the graph's operand descriptors.
double node_flops(const Graph& graph, const Node& node);

}  // namespace webnn
