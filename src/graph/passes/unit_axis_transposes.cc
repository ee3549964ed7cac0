// Unit-axis transposes as reshapes, for the cpu backend: a `transpose` whose permutation keeps
// the relative order of the input's axes that are not of size 1 moves no byte (the elements
// stay in the same order in memory; only size-1 axes change place), yet its kernel copies the
// tensor with strides. It becomes a `reshape` to the same output shape, which the memory plan
// makes free: the output shares its input's arena slot, or is an alias of a graph input's or
// constant's buffer (runtime/memory_plan.cc). Runs after layout assignment, whose transposes of
// one-channel images (a gray input [n,1,h,w] -> NHWC [n,h,w,1]) and of one-row feature maps are
// such transposes, and after matmul_transposes (which folds such a transpose into its matmul
// as well). Same bytes: bit-identical. A dynamic axis counts as not of size 1.
#include <numeric>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

// Whether transpose(x, perm) lists the axes of x that are not static size-1 in their order.
bool moves_only_unit_axes(const Shape& in, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t a : perm) {
    if (in[a].is_static() && in[a].value == 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

}  // namespace

Expected<int64_t> reshape_unit_axis_transposes(Graph& graph) {
  int64_t rewrites = 0;
  for (Node& node : graph.nodes) {
    if (node.kind != OpKind::kTranspose || !node.epilogue.empty() || node.quantized ||
        node.permuted || node.outputs.size() != 1) {
      continue;
    }
    const auto& p = node.as<TransposeParams>();
    const Shape& in = graph.desc(p.input.id).shape;
    std::vector<int64_t> perm(in.size());
    if (p.permutation) {
      perm = *p.permutation;
    } else {
      std::iota(perm.rbegin(), perm.rend(), 0);  // the default reverses the axes
    }
    if (perm.size() != in.size() || !moves_only_unit_axes(in, perm)) continue;
    const OperandRef input = p.input;
    node.kind = OpKind::kReshape;
    node.params = NewShapeParams{input, graph.desc(node.outputs[0]).shape};
    ++rewrites;
  }
  return rewrites;
}

}  // namespace webnn
