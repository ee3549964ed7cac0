// An execution plan: a graph with every shape concrete, buffers allocated and kernels
// compiled by one backend. Built once per binding of dynamic dimensions.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "webnn/context.h"
#include "webnn/graph.h"

namespace webnn {

struct Plan {
  std::vector<OperandDesc> descs;     // concrete descriptors, by operand id
  std::vector<AlignedBytes> storage;  // cache-line aligned, like tensors
  AlignedBytes arena;                 // intermediates, placed by lifetime
  uint64_t unshared_bytes = 0;        // intermediates' bytes without sharing
  std::vector<TensorView> views;      // by operand id; unused operands have no data
  // (value, graph input or constant): the value's view is that operand's buffer (a reshape of
  // it, runtime/memory_plan.h); dispatch re-points it when it binds the input's tensor.
  std::vector<std::pair<OperandId, OperandId>> aliases;
  std::vector<std::unique_ptr<Kernel>> kernels;  // by node index
  // Per-node wall time summed over profiled runs (empty unless profiling is on).
  std::vector<uint64_t> node_ns;
  uint64_t profiled_runs = 0;
};

// Dynamic dimension bindings: name -> bound size.
using DimBindings = std::map<std::string, int64_t>;

// Concrete descriptors of every operand with `bindings` substituted (re-runs Infer).
Expected<std::vector<OperandDesc>> infer_concrete(const Graph& graph, const DimBindings& bindings);
// With `memory_plan`, intermediates (values that are neither graph inputs, outputs nor
// constants) share one arena by lifetime (runtime/memory_plan.h); without it each has its own
// buffer. `cache` (may be null) holds the compiled graph's packed constants, shared by its plans.
Expected<std::unique_ptr<Plan>> build_plan(const Graph& graph, const Backend& backend,
                                           std::vector<OperandDesc> descs, bool memory_plan = true,
                                           ConstantCache* cache = nullptr);
// Runs the plan's kernels in order; `pool` (may be null) is handed to every kernel. With
// `profile`, each kernel's wall time is added to plan.node_ns.
Status run_plan(Plan& plan, const Graph& graph, ThreadPool* pool, bool profile = false);

}  // namespace webnn
