// Dead-code removal, for every backend: drops nodes none of whose outputs reaches a graph
// output. Graph inputs stay declared (input_descriptors keeps its meaning) even when unused.
#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

Expected<int64_t> remove_dead_code(Graph& graph) {
  std::vector<bool> live(graph.operands.size(), false);
  for (const NamedOperand& o : graph.outputs) live[o.id] = true;
  std::vector<bool> dead(graph.nodes.size(), true);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    bool needed = false;
    for (OperandId id : node.outputs) needed = needed || live[id];
    if (!needed) continue;
    dead[i] = false;
    for (OperandId id : node_reads(graph, node)) live[id] = true;
  }
  int64_t removed = 0;
  for (bool d : dead) removed += d;
  if (removed) erase_nodes(graph, dead);
  return removed;
}

}  // namespace webnn
