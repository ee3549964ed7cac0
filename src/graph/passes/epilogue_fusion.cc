// Epilogue and element-wise chain fusion, for the cpu backend: a group of float32 element-wise
// nodes (unary activations, binary arithmetic whose operands are earlier values of the group or
// tensors that broadcast into it, e.g. a residual add or a per-channel constant) with one
// value read outside it is moved into the node that produces the group's first value — a
// conv2d, convTranspose2d, gemm, matmul or another element-wise node — as its epilogue
// (Node::epilogue). The cpu backend applies the steps with the same SIMD
// functions as the stand-alone kernels, in the same order, so results are bit-identical to
// the unfused graph; intermediate buffers and passes over memory disappear.
#include <algorithm>

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

namespace {

// Steps per fused node at most: bounds the scan and the per-block work list.
constexpr size_t kMaxSteps = 32;

// Whether node `n` can join a chain whose values are `chain` (all of `shape` desc `vd`): an
// element-wise vector op with an unfused single output of the same descriptor, every operand
// either a chain value or a float32 static operand that broadcasts into it as one block.
bool joins_chain(const Graph& graph, const Node& n, const OperandDesc& vd,
                 const std::vector<OperandId>& chain) {
  if (!n.epilogue.empty() || n.outputs.size() != 1) return false;
  if (!(graph.desc(n.outputs[0]) == vd)) return false;
  auto in_chain = [&](OperandId id) {
    return std::find(chain.begin(), chain.end(), id) != chain.end();
  };
  if (is_cpu_vector_unary(n.kind)) {
    bool ok = false;
    for (OperandId id : n.inputs()) ok = in_chain(id);
    return ok && n.inputs().size() == 1;
  }
  if (!is_cpu_vector_binary(n.kind)) return false;
  const auto& p = n.as<BinaryParams>();
  for (OperandId id : {p.a.id, p.b.id}) {
    if (in_chain(id)) continue;
    const OperandDesc& od = graph.desc(id);
    if (!static_f32(od) || !broadcasts_as_block(od.shape, vd.shape)) return false;
  }
  return in_chain(p.a.id) || in_chain(p.b.id);
}

// The first operand of `n` that is a chain value.
OperandId first_chain_operand(const Node& n, const std::vector<OperandId>& chain) {
  for (OperandId id : n.inputs()) {
    if (std::find(chain.begin(), chain.end(), id) != chain.end()) return id;
  }
  return -1;
}

}  // namespace

// Groups grow from a head in node order: every later node reading a value of the group joins
// it while it can (joins_chain); the first one that cannot ends the scan. A prefix of the
// group is fusable when all its values but the last one are read only inside it (so the
// fused node, placed where the last member was, is the only reader left) and its chain fits
// the scratch registers. The longest such prefix is fused. Values may be read several times
// (x * clamp(x + 3, 0, 6) / 6): the steps form a DAG, not only a chain.
Expected<int64_t> fuse_epilogues(Graph& graph) {
  std::vector<int> uses = use_counts(graph);
  std::vector<std::vector<int32_t>> readers(graph.operands.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (OperandId id : node_reads(graph, graph.nodes[i])) {
      auto& r = readers[id];
      if (r.empty() || r.back() != static_cast<int32_t>(i)) r.push_back(static_cast<int32_t>(i));
    }
  }
  for (const NamedOperand& o : graph.outputs) uses[o.id] += 1 << 20;  // never inside only
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t fused = 0;
  for (size_t hi = 0; hi < graph.nodes.size(); ++hi) {
    if (dead[hi]) continue;
    const Node& head = graph.nodes[hi];
    if (!is_head(head.kind) || head.outputs.size() != 1) continue;
    if (head.epilogue.size() >= kMaxSteps) continue;
    const OperandId v = head.outputs[0];
    const OperandDesc vd = graph.desc(v);
    if (!static_f32(vd) || uses[v] >= (1 << 20)) continue;
    std::vector<OperandId> chain{v};
    std::vector<int> inside(1, 0);  // reads of each chain value by members
    std::vector<int32_t> members;
    size_t best = 0;
    int32_t horizon = readers[v].empty() ? -1 : readers[v].back();
    for (int32_t j = static_cast<int32_t>(hi) + 1;
         j <= horizon && j < static_cast<int32_t>(graph.nodes.size()) &&
         head.epilogue.size() + members.size() < kMaxSteps;
         ++j) {
      if (dead[j]) continue;
      const Node& n = graph.nodes[j];
      bool reads_chain = false;
      for (OperandId id : node_reads(graph, n)) {
        reads_chain = reads_chain || std::find(chain.begin(), chain.end(), id) != chain.end();
      }
      if (!reads_chain) continue;
      if (!joins_chain(graph, n, vd, chain)) break;
      for (OperandId id : n.inputs()) {
        auto it = std::find(chain.begin(), chain.end(), id);
        if (it != chain.end()) ++inside[it - chain.begin()];
      }
      members.push_back(j);
      const OperandId out = n.outputs[0];
      chain.push_back(out);
      inside.push_back(0);
      if (!readers[out].empty()) horizon = std::max(horizon, readers[out].back());
      bool closed = true;
      for (size_t c = 0; c + 1 < chain.size(); ++c) closed = closed && inside[c] == uses[chain[c]];
      if (!closed) continue;
      Node trial = graph.nodes[hi];  // with the steps it may have fused already
      trial.outputs = {out};
      for (size_t m = 0; m < members.size(); ++m) {
        const Node& step = graph.nodes[members[m]];
        trial.epilogue.push_back(Node::Step{step, m == 0 ? v : first_chain_operand(step, chain)});
      }
      std::vector<int> reg;
      if (assign_chain_registers(trial, &reg)) best = members.size();
    }
    if (best == 0) continue;
    // The fused node runs where the last member ran: every operand of the members exists
    // there, and the head can run later since the members were the only readers of its value.
    const int32_t at = members[best - 1];
    Node moved = std::move(graph.nodes[hi]);
    dead[hi] = true;
    for (size_t m = 0; m < best; ++m) {
      Node& step = graph.nodes[members[m]];
      const OperandId c = m == 0 ? v : first_chain_operand(step, chain);
      moved.epilogue.push_back(Node::Step{std::move(step), c});
      dead[members[m]] = true;
    }
    moved.outputs[0] = moved.epilogue.back().op.outputs[0];
    graph.operands[moved.outputs[0]].producer = at;
    graph.nodes[at] = std::move(moved);
    dead[at] = false;
    fused += static_cast<int64_t>(best);
  }
  if (fused) erase_nodes(graph, dead);
  return fused;
}

}  // namespace webnn
