#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "graph/passes/graph_util.h"

namespace webnn {

namespace {

constexpr uint64_t kAlign = 64;  // cache line, like tensors

bool is_reshape(const Node& node) {
  return node.outputs.size() == 1 &&
         (node.kind == OpKind::kReshape || node.kind == OpKind::kSqueeze ||
          node.kind == OpKind::kUnsqueeze);
}

// A reshape's input: its bytes are the output's (the copy kernel skips a copy onto itself;
// MiniLM has 15 reshapes, each a tensor copy otherwise).
OperandId reshape_input(const Node& node) {
  OperandRef in;
  std::visit(
      [&](const auto& p) {
        if constexpr (requires { p.input; }) in = p.input;
      },
      node.params);
  return in.present() ? in.id : -1;
}

// The input the cpu element-wise kernels read at the same index they write (the chain value of
// a fused chain, cpu/epilogue.cc chain_source), or -1.
OperandId inplace_candidate(const Node& node, const std::vector<OperandDesc>& descs) {
  if (node.outputs.size() != 1) return -1;
  const OperandDesc& out = descs[node.outputs[0]];
  if (out.data_type != DataType::kFloat32) return -1;
  auto same = [&](OperandRef r) { return r.present() && descs[r.id] == out; };
  OperandId x = -1;
  if (is_cpu_vector_unary(node.kind)) {
    std::visit(
        [&](const auto& p) {
          if constexpr (requires { p.input; }) {
            if (same(p.input)) x = p.input.id;
          }
        },
        node.params);
  } else if (is_cpu_vector_binary(node.kind)) {
    const auto& p = node.as<BinaryParams>();
    x = same(p.a) ? p.a.id : same(p.b) ? p.b.id : -1;
  }
  return x;
}

}  // namespace

MemoryPlan plan_memory(const Graph& graph, const std::vector<OperandDesc>& descs,
                       const std::vector<uint64_t>& bytes, std::string_view backend) {
  const size_t n = graph.operands.size();
  MemoryPlan mp;
  mp.offset.assign(n, -1);
  mp.alias.assign(n, -1);
  std::vector<bool> in_arena(n, false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (OperandId id : graph.nodes[i].outputs) in_arena[id] = bytes[id] > 0;
  }
  for (const NamedOperand& o : graph.outputs) in_arena[o.id] = false;
  // Lifetimes in node indices, both ends inclusive: a node's inputs and outputs overlap.
  std::vector<int64_t> first(n, -1), last(n, -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const int64_t t = static_cast<int64_t>(i);
    for (OperandId id : graph.nodes[i].outputs) first[id] = last[id] = t;
    for (OperandId id : node_reads(graph, graph.nodes[i])) last[id] = std::max(last[id], t);
  }
  // Slots: groups of values sharing one buffer (an output written over its dying input, a
  // reshape's output and its input).
  std::vector<int64_t> slot(n, -1);
  struct Slot {
    int64_t first, last;
    uint64_t bytes;
    int64_t offset = -1;
  };
  std::vector<Slot> slots;
  const bool cpu = backend == "cpu";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    const int64_t t = static_cast<int64_t>(i);
    if (cpu && is_reshape(node)) {
      const OperandId x = reshape_input(node), y = node.outputs[0];
      if (x >= 0 && in_arena[y] && bytes[x] == bytes[y]) {
        // The bytes' owner: a graph input or constant (through earlier reshapes of it) keeps
        // its own buffer, and the reshape is a view of it, not in the arena.
        const OperandId root = mp.alias[x] >= 0 ? mp.alias[x] : x;
        const OperandKind kind = graph.operands[root].kind;
        if (kind == OperandKind::kInput || kind == OperandKind::kConstant) {
          mp.alias[y] = root;
          in_arena[y] = false;
          continue;
        }
        if (in_arena[x] && slot[x] >= 0) {
          mp.unshared_bytes += bytes[y];
          slot[y] = slot[x];
          slots[slot[y]].last = std::max(slots[slot[y]].last, last[y]);
          continue;
        }
      }
    }
    OperandId x = cpu ? inplace_candidate(node, descs) : -1;
    // In place only over arena bytes that nothing reads after this node (every value sharing
    // them dies here: a reshape of x read later would see the overwritten values), read once
    // by it (a second read, through another operand or a fused step, would too).
    if (x >= 0 && !(in_arena[x] && slot[x] >= 0 && slots[slot[x]].last == t)) x = -1;
    if (x >= 0) {
      int group_reads = 0;
      for (OperandId r : node_reads(graph, node)) group_reads += slot[r] == slot[x];
      if (group_reads != 1) x = -1;
    }
    for (OperandId id : node.outputs) {
      if (!in_arena[id]) continue;
      mp.unshared_bytes += bytes[id];
      if (x >= 0 && bytes[x] == bytes[id]) {
        slot[id] = slot[x];
        slots[slot[id]].last = std::max(slots[slot[id]].last, last[id]);
        continue;
      }
      slot[id] = static_cast<int64_t>(slots.size());
      slots.push_back({first[id], last[id], (bytes[id] + kAlign - 1) / kAlign * kAlign});
    }
  }
  std::vector<size_t> order(slots.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<size_t> placed;
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [begin, end) of overlapping placed slots
  for (size_t s : order) {
    Slot& cur = slots[s];
    busy.clear();
    for (size_t p : placed) {
      const Slot& o = slots[p];
      if (o.first <= cur.last && cur.first <= o.last) {
        busy.emplace_back(static_cast<uint64_t>(o.offset), o.offset + o.bytes);
      }
    }
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the slot, else the end.
    uint64_t at = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (const auto& [b, e] : busy) {
      if (b >= at && b - at >= cur.bytes && b - at < best_gap) best = at, best_gap = b - at;
      at = std::max(at, e);
    }
    if (best == UINT64_MAX) best = at;
    cur.offset = static_cast<int64_t>(best);
    mp.arena_bytes = std::max(mp.arena_bytes, best + cur.bytes);
    placed.push_back(s);
  }
  for (size_t id = 0; id < n; ++id) {
    if (slot[id] >= 0) mp.offset[id] = slots[slot[id]].offset;
  }
  return mp;
}

}  // namespace webnn
