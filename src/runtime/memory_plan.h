// The static memory plan: every intermediate value of a plan gets an offset in one arena, and
// values whose lifetimes overlap never share bytes, except for the values that hold the same
// bytes by definition: a reshape's (squeeze's, unsqueeze's) output is its input's buffer — the
// input's arena slot, or, for a reshape of a graph input or constant, an alias of that
// operand's own buffer (dispatch points it at the bound input tensor). An element-wise node
// may write its output over an input (in place) only when every value sharing that input's
// bytes dies there and the bytes are in the arena (never over a graph input or constant).
// Greedy by size: the largest buffers are placed first, each at the lowest offset free over
// its whole lifetime.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "webnn/graph.h"

namespace webnn {

struct MemoryPlan {
  std::vector<int64_t> offset;  // by operand id; -1: not in the arena
  // By operand id: the graph input or constant whose buffer the value is (a reshape of it,
  // not a graph output, on the cpu backend), else -1. Such values are not in the arena.
  std::vector<OperandId> alias;
  uint64_t arena_bytes = 0;
  uint64_t unshared_bytes = 0;  // sum of the arena values' sizes (no sharing)
};

// `bytes[id]`: the buffer size of operand id (0: not needed). Values in the arena are the
// nodes' outputs that are not graph outputs (nor aliases). Aliases and in-place reuse only for
// backends whose kernels allow them (`backend` "cpu": element-wise kernels read and write the
// same index, the copy kernel skips a copy onto itself).
MemoryPlan plan_memory(const Graph& graph, const std::vector<OperandDesc>& descs,
                       const std::vector<uint64_t>& bytes, std::string_view backend);

}  // namespace webnn
