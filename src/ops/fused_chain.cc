#include "ops/fused_chain.h"

#include <algorithm>

namespace webnn {

std::vector<OperandId> chain_values(const Node& node) {
  std::vector<OperandId> values;
  if (node.epilogue.empty()) return values;
  values.push_back(node.epilogue[0].chain);
  for (const Node::Step& step : node.epilogue) values.push_back(step.op.outputs[0]);
  return values;
}

bool assign_chain_registers(const Node& node, std::vector<int>* reg) {
  const std::vector<OperandId> values = chain_values(node);
  const size_t steps = node.epilogue.size();
  auto index_of = [&](OperandId id) -> int {
    auto it = std::find(values.begin(), values.end(), id);
    return it == values.end() ? -1 : static_cast<int>(it - values.begin());
  };
  // The last step reading each value (-1: none after its definition).
  std::vector<int> last(values.size(), -1);
  for (size_t k = 0; k < steps; ++k) {
    for (OperandId id : node.epilogue[k].op.inputs()) {
      const int v = index_of(id);
      if (v >= 0) last[v] = static_cast<int>(k);
    }
  }
  reg->assign(values.size(), -1);
  std::vector<bool> busy(kMaxChainSlots + 1, false);
  (*reg)[0] = 0;
  busy[0] = true;
  for (size_t k = 0; k < steps; ++k) {
    for (OperandId id : node.epilogue[k].op.inputs()) {
      const int v = index_of(id);
      if (v >= 0 && last[v] == static_cast<int>(k)) busy[(*reg)[v]] = false;
    }
    int r = 0;
    if (k + 1 < steps) {
      while (r <= kMaxChainSlots && busy[r]) ++r;
      if (r > kMaxChainSlots) return false;
    } else if (busy[0]) {
      return false;  // a value outlives the chain: not a chain
    }
    (*reg)[k + 1] = r;
    busy[r] = last[k + 1] > static_cast<int>(k);
  }
  return true;
}

}  // namespace webnn
