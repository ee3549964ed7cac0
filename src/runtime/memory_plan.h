// The static memory plan: every intermediate value of a plan gets an offset in one arena,
// values whose lifetimes overlap never share bytes, and an element-wise node may write its
// output over an input that dies there (in place), as a reshape's output is its dying input's
// bytes. Greedy by size: the largest buffers are placed first, each at the lowest offset free
// over its whole lifetime.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "webnn/graph.h"

namespace webnn {

struct MemoryPlan {
  std::vector<int64_t> offset;  // by operand id; -1: not in the arena
  uint64_t arena_bytes = 0;
  uint64_t unshared_bytes = 0;  // sum of the arena values' sizes (no sharing)
};

// `bytes[id]`: the buffer size of operand id (0: not needed). Values in the arena are the
// nodes' outputs that are not graph outputs. In-place reuse only for backends whose element-wise
// kernels allow it (`backend` "cpu").
MemoryPlan plan_memory(const Graph& graph, const std::vector<OperandDesc>& descs,
                       const std::vector<uint64_t>& bytes, std::string_view backend);

}  // namespace webnn
