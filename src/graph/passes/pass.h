// Graph rewrites run between build() and planning (DESIGN.md §1, §2). Each pass is one file,
// states the backends it applies to, and returns how many rewrites it made; optimize() runs
// them in one fixed order. Passes keep operand ids stable (new operands are appended, dead ones
// stay unused), so graph inputs and outputs keep their ids and names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "webnn/graph.h"
#include "webnn/status.h"

namespace webnn {

struct Pass {
  const char* name;
  // Whether this pass rewrites graphs compiled for the backend named `backend`.
  bool (*applies_to)(std::string_view backend);
  Expected<int64_t> (*run)(Graph& graph);
};

struct PassCount {
  std::string pass;
  int64_t rewrites = 0;
};

struct OptimizeReport {
  int64_t nodes_before = 0, nodes_after = 0;
  std::vector<PassCount> passes;  // in the order they ran
};

// The passes in the order optimize() runs them.
const std::vector<Pass>& all_passes();

// Which passes run: "all" (default), "none", or a comma-separated list of pass names
// (dead_code is always included: it only removes nodes no output depends on). Read by
// Context::compile from the environment variable WEBNN_PASSES.
Expected<std::vector<const Pass*>> select_passes(std::string_view spec);

// Runs the selected passes that apply to `backend` on `graph`, in the fixed order.
Expected<OptimizeReport> optimize(Graph& graph, std::string_view backend,
                                  std::string_view spec = "all");

// Backend predicates for Pass::applies_to.
inline bool every_backend(std::string_view) { return true; }
// The reference backend is the oracle: only semantics-free rewrites run for it.
inline bool fast_backends(std::string_view backend) { return backend != "reference"; }

// The passes (one per file).
Expected<int64_t> remove_dead_code(Graph& graph);
Expected<int64_t> promote_float16(Graph& graph);
Expected<int64_t> canonicalize(Graph& graph);
Expected<int64_t> fold_constants(Graph& graph);
Expected<int64_t> fold_batch_norm(Graph& graph);
Expected<int64_t> assign_layouts(Graph& graph);
Expected<int64_t> fuse_epilogues(Graph& graph);
Expected<int64_t> fuse_qdq(Graph& graph);
Expected<int64_t> fold_quantized_tables(Graph& graph);
Expected<int64_t> index_gathers_by_bytes(Graph& graph);
Expected<int64_t> fuse_integer_matmuls(Graph& graph);
Expected<int64_t> fuse_fake_quantize(Graph& graph);
Expected<int64_t> fold_matmul_transposes(Graph& graph);
Expected<int64_t> fuse_dynamic_quant_lstms(Graph& graph);
Expected<int64_t> merge_shared_weight_products(Graph& graph);
Expected<int64_t> fuse_depthwise_pointwise(Graph& graph);
Expected<int64_t> fuse_expansions(Graph& graph);
Expected<int64_t> reshape_unit_axis_transposes(Graph& graph);

// Whether `other` broadcasts into `out` as one block of equal axes amid size-1 axes (the
// shapes an epilogue step can read as runs), for static shapes.
bool broadcasts_as_block(const Shape& other, const Shape& out);

}  // namespace webnn
