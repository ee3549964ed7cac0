// Transposes around a matmul folded into its operand strides, for the cpu backend.
//
// Transformer exports split and merge attention heads with transposes around the batched
// matmuls: [b, s, h, d] -> [b, h, s, d] before Q K^T (Q) and P V (V), [b, s, h, d] ->
// [b, h, d, s] for K^T, [b, h, s, d] -> [b, s, h, d] after P V. Each one copies a tensor that
// the matmul then reads once (the GEMM packs B anyway, and reads A through row pointers with
// any row stride), and each costs a parallel region. This pass points the matmul at the
// transpose's input and records the permutation (Node::Permuted): the cpu matmul kernel
// (cpu/linalg.cc) reads A rows at the permuted strides, packs B from the permuted strides (K^T
// by a gather down its contiguous columns), and stores C rows where the transposed output keeps
// them. The products, their order of summation and the stored values are those of the unfused
// graph: the result is bit-identical.
//
// Conditions: float32, static shapes (plans of dynamic graphs re-infer every node from its
// stored operands), a transpose whose value only this matmul reads (else it is computed
// anyway); A's and the output's last axis stays last, so their rows stay contiguous; an output
// transpose only when the matmul has no fused epilogue (the epilogue runs on contiguous chunks
// of the result).
#include <numeric>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

std::vector<int64_t> permutation_of(const Graph& g, const Node& t) {
  const auto& p = t.as<TransposeParams>();
  if (p.permutation) return *p.permutation;
  std::vector<int64_t> perm(g.desc(p.input.id).shape.size());
  std::iota(perm.rbegin(), perm.rend(), 0);  // the default reverses the axes
  return perm;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The transpose node producing `id` when nothing else reads its value, else -1.
int32_t sole_transpose(const Graph& g, const std::vector<int>& uses, OperandId id) {
  const int32_t p = g.operands[id].producer;
  if (p < 0 || uses[id] != 1 || is_graph_output(g, id)) return -1;
  const Node& t = g.nodes[p];
  if (t.kind != OpKind::kTranspose || !t.epilogue.empty() || t.quantized || t.permuted) return -1;
  if (g.desc(id).data_type != DataType::kFloat32) return -1;
  return p;
}

// Folds the transposes feeding operand `ref` (several in a row compose); `perm` is the
// operand's permutation so far (empty: none). Returns how many were folded.
int fold_input(const Graph& g, std::vector<int>& uses, OperandRef& ref, std::vector<int64_t>& perm,
               bool keep_last) {
  int folded = 0;
  for (int32_t t; (t = sole_transpose(g, uses, ref.id)) >= 0;) {
    const std::vector<int64_t> inner = permutation_of(g, g.nodes[t]);
    std::vector<int64_t> composed(inner.size());
    for (size_t i = 0; i < inner.size(); ++i) {
      composed[i] = perm.empty() ? inner[i] : inner[perm[i]];
    }
    const int64_t last = static_cast<int64_t>(composed.size()) - 1;
    if (composed.size() < 2 || (keep_last && composed.back() != last)) break;
    // The transpose is dead now: the matmul reads its input in its place (same use count).
    --uses[ref.id];
    ref.id = g.nodes[t].as<TransposeParams>().input.id;
    perm = composed;
    ++folded;
  }
  if (!perm.empty() && is_identity(perm)) perm.clear();
  return folded;
}

}  // namespace

Expected<int64_t> fold_matmul_transposes(Graph& graph) {
  for (const Operand& op : graph.operands) {
    if (!is_static_shape(op.desc.shape)) return int64_t{0};
  }
  std::vector<int> uses = use_counts(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t folded = 0;
  for (Node& mm : graph.nodes) {
    if (mm.kind != OpKind::kMatmul || mm.quantized || mm.permuted) continue;
    auto& p = std::get<BinaryParams>(mm.params);
    const OperandDesc& yd = graph.desc(mm.outputs[0]);
    if (yd.data_type != DataType::kFloat32 || graph.desc(p.a.id).data_type != DataType::kFloat32 ||
        graph.desc(p.b.id).data_type != DataType::kFloat32 || yd.shape.size() < 2) {
      continue;
    }
    Node::Permuted perms;
    int n = fold_input(graph, uses, p.a, perms.a, /*keep_last=*/true);
    n += fold_input(graph, uses, p.b, perms.b, /*keep_last=*/false);
    // The output: a transpose that is the only reader of the result.
    const OperandId y = mm.outputs[0];
    for (const Node& t : graph.nodes) {
      if (!mm.epilogue.empty() || uses[y] != 1 || is_graph_output(graph, y)) break;
      if (t.kind != OpKind::kTranspose || t.as<TransposeParams>().input.id != y) continue;
      const int32_t ti = static_cast<int32_t>(&t - graph.nodes.data());
      const std::vector<int64_t> perm = permutation_of(graph, t);
      if (!t.epilogue.empty() || dead[ti] || perm.back() != static_cast<int64_t>(perm.size()) - 1) {
        break;
      }
      // The transpose runs later in node order than the matmul: readers of its value come
      // after it, so the matmul (earlier) producing it keeps the order topological.
      mm.outputs[0] = t.outputs[0];
      // The value's producer is the matmul from here on (a later matmul reading it must not
      // take the dead transpose for its own input transpose).
      graph.operands[t.outputs[0]].producer = static_cast<int32_t>(&mm - graph.nodes.data());
      graph.operands[y].producer = -1;
      dead[ti] = true;
      --uses[y];
      if (!is_identity(perm)) perms.out = perm;
      ++n;
      break;
    }
    if (n == 0) continue;
    if (!perms.a.empty() || !perms.b.empty() || !perms.out.empty()) {
      mm.permuted = std::make_shared<const Node::Permuted>(std::move(perms));
    }
    folded += n;
  }
  erase_nodes(graph, dead);
  return folded;
}

}  // namespace webnn
