// Depthwise + pointwise fusion, for the cpu backend: a float32 NHWC depthwise conv2d (with its
// fused unary steps, e.g. hardSwish) whose value is read only by a 1x1 conv2d becomes part of
// that conv2d (Node::depthwise_input). The cpu kernel computes the depthwise rows band by band
// into a buffer that stays in cache and runs the 1x1 product on each band at once, so the
// depthwise value (det's and LCNet's 48-channel 192x192 maps: 14 MB per layer) is never
// written to memory and read back. Every value is computed by the same row kernel, activation
// and GEMM tiles as the two nodes apart, so results are bit-identical.
// The 1x1 expansion before the depthwise joins in the next pass (expansion_fusion.cc).
//
// Both filters must be finite constants: the cpu kernels compute a filter with a NaN or an
// infinity on the reference kernel (cpu/conv_nonfinite_filter.cc), which could not read a
// depthwise value that is never stored.
#include "graph/passes/conv_patterns.h"
#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

Expected<int64_t> fuse_depthwise_pointwise(Graph& graph) {
  std::vector<int> uses = use_counts(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& pw = graph.nodes[i];
    if (!is_fusable_pointwise(graph, pw)) continue;
    const OperandId v = pw.as<Conv2dParams>().input.id;
    const int32_t d = sole_producer(graph, uses, dead, v, i);
    if (d < 0) continue;
    Node& dw = graph.nodes[d];
    if (!is_fusable_depthwise(graph, dw) || dw.outputs[0] != v) continue;
    pw.depthwise_input = std::make_shared<const Node>(std::move(dw));
    dead[d] = true;
    ++fused;
  }
  if (fused) erase_nodes(graph, dead);
  return fused;
}

}  // namespace webnn
