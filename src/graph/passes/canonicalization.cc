// Canonicalisation, for every backend but the reference one (the oracle runs the graph as
// built): the options of conv2d, convTranspose2d and the 2-D pools that were left to their
// defaults are written into the node once (strides and dilations 1, padding 0, output padding
// 0, a pool's window the whole spatial extent of a static input), so later passes and kernels
// read one form. Results are unchanged: these are the values the defaults stand for.
#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

// Sets `opt` to `value` when absent; counts the rewrite.
bool fill(OptIntList& opt, IntList value) {
  if (opt) return false;
  opt = std::move(value);
  return true;
}

bool is_pool2d(OpKind k) {
  return k == OpKind::kAveragePool2d || k == OpKind::kMaxPool2d || k == OpKind::kL2Pool2d;
}

}  // namespace

Expected<int64_t> canonicalize(Graph& graph) {
  int64_t rewrites = 0;
  for (Node& node : graph.nodes) {
    bool changed = false;
    if (node.kind == OpKind::kConv2d) {
      auto& p = std::get<Conv2dParams>(node.params);
      changed |= fill(p.strides, {1, 1});
      changed |= fill(p.dilations, {1, 1});
      changed |= fill(p.padding, {0, 0, 0, 0});
    } else if (node.kind == OpKind::kConvTranspose2d) {
      auto& p = std::get<ConvTranspose2dParams>(node.params);
      changed |= fill(p.strides, {1, 1});
      changed |= fill(p.dilations, {1, 1});
      changed |= fill(p.padding, {0, 0, 0, 0});
      // output_sizes, when given, decides the output size; output_padding is then unused.
      if (!p.output_sizes) changed |= fill(p.output_padding, {0, 0});
    } else if (is_pool2d(node.kind)) {
      auto& p = std::get<Pool2dParams>(node.params);
      changed |= fill(p.strides, {1, 1});
      changed |= fill(p.dilations, {1, 1});
      changed |= fill(p.padding, {0, 0, 0, 0});
      const Shape& s = graph.desc(p.input.id).shape;
      if (!p.window_dimensions && s.size() == 4 && is_static_shape(s)) {
        const bool nhwc = p.layout == "nhwc";
        p.window_dimensions = IntList{s[nhwc ? 1 : 2].value, s[nhwc ? 2 : 3].value};
        changed = true;
      }
    }
    rewrites += changed;
  }
  return rewrites;
}

}  // namespace webnn
