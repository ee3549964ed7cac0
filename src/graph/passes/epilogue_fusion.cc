// Epilogue and element-wise chain fusion, for the cpu backend: a chain of float32 element-wise
// nodes (unary activations, binary arithmetic whose other operand broadcasts into the value,
// e.g. a residual add or a per-channel constant) is moved into the node that produces the
// chain's first value — a conv2d, convTranspose2d, gemm, matmul or another element-wise node —
// as its epilogue (Node::epilogue). The cpu backend applies the steps with the same SIMD
// functions as the stand-alone kernels, in the same order, so results are bit-identical to
// the unfused graph; intermediate buffers and passes over memory disappear.
#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

bool is_head(OpKind k) {
  return k == OpKind::kConv2d || k == OpKind::kConvTranspose2d || k == OpKind::kGemm ||
         k == OpKind::kMatmul || is_cpu_vector_binary(k) || is_cpu_vector_unary(k);
}

bool static_f32(const OperandDesc& d) {
  return d.data_type == DataType::kFloat32 && is_static_shape(d.shape);
}

}  // namespace

// `other` broadcasts into `out` as one contiguous block of axes (equal to the output's) with
// size-1 axes around it: the executor then reads it as runs of a repeated or contiguous value.
bool broadcasts_as_block(const Shape& other, const Shape& out) {
  if (other.size() > out.size()) return false;
  const size_t lead = out.size() - other.size();
  int state = 0;  // 0: before the block, 1: inside, 2: after
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t o = i < lead ? 1 : other[i - lead].value;
    const bool is_one = o == 1;
    const bool equal = o == out[i].value;
    if (out[i].value == 1) continue;  // both 1: belongs to any part
    if (equal && !is_one) {
      if (state == 2) return false;
      state = 1;
    } else if (is_one) {
      if (state == 1) state = 2;
    } else {
      return false;
    }
  }
  return true;
}

Expected<int64_t> fuse_epilogues(Graph& graph) {
  std::vector<int> uses = use_counts(graph);
  // Consumer node of each operand (valid where uses == 1).
  std::vector<int32_t> consumer(graph.operands.size(), -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (OperandId id : node_reads(graph, graph.nodes[i])) consumer[id] = static_cast<int32_t>(i);
  }
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t fused = 0;
  for (size_t hi = 0; hi < graph.nodes.size(); ++hi) {
    if (dead[hi]) continue;
    Node& head = graph.nodes[hi];
    if (!is_head(head.kind) || head.outputs.size() != 1) continue;
    if (!static_f32(graph.desc(head.outputs[0]))) continue;
    const OperandId v = head.outputs[0];
    if (uses[v] != 1 || is_graph_output(graph, v)) continue;
    const int32_t ci = consumer[v];
    if (ci <= static_cast<int32_t>(hi) || dead[ci]) continue;
    Node& step = graph.nodes[ci];
    if (!step.epilogue.empty() || step.outputs.size() != 1) continue;
    const OperandDesc& out = graph.desc(step.outputs[0]);
    if (!(out == graph.desc(v))) continue;  // the value keeps its shape and type
    bool ok = is_cpu_vector_unary(step.kind);
    if (is_cpu_vector_binary(step.kind)) {
      const auto& p = step.as<BinaryParams>();
      const OperandId other = p.a.id == v ? p.b.id : p.a.id;
      const OperandDesc& od = graph.desc(other);
      ok = (other == v || static_f32(od)) && broadcasts_as_block(od.shape, out.shape);
    }
    if (!ok) continue;
    // The fused node runs where the step ran: the step's other operand exists there, and
    // running the head later is safe since the step was the only reader of its value. The loop
    // reaches that position later and extends the chain from there.
    Node::Step s{std::move(step), v};
    const OperandId result = s.op.outputs[0];
    Node moved = std::move(head);
    moved.epilogue.push_back(std::move(s));
    moved.outputs[0] = result;
    graph.nodes[ci] = std::move(moved);
    graph.operands[result].producer = ci;
    dead[hi] = true;
    ++fused;
  }
  if (fused) erase_nodes(graph, dead);
  return fused;
}

}  // namespace webnn
