// The values of a node's fused element-wise steps (Node::epilogue) and where they live while a
// block of the output runs through them: shared by the fusion pass (graph/passes/
// epilogue_fusion.cc), which only fuses what fits, and the cpu kernel (cpu/epilogue.cc).
#pragma once

#include <vector>

#include "webnn/graph.h"

namespace webnn {

// The values of a fused node's chain (Node::epilogue): [0] the head's own result, then each
// step's result in order; the last one is node.outputs[0]. Empty without an epilogue.
std::vector<OperandId> chain_values(const Node& node);

// Scratch blocks a fused chain may use besides its output block (cpu/epilogue.cc keeps them on
// the stack, one per value that must outlive the next step: x in x * clamp(x + 3, 0, 6)).
constexpr int kMaxChainSlots = 4;

// Where each chain value lives while a block runs through the chain: register 0 is the node's
// output block (the head writes its result there, the last step too), 1..kMaxChainSlots are
// scratch blocks. A greedy allocation in step order; a step may write over an operand that
// dies there (element-wise, same index). reg[i] is for chain_values(node)[i]. False when it
// needs more than kMaxChainSlots scratch blocks.
bool assign_chain_registers(const Node& node, std::vector<int>* reg);

}  // namespace webnn
