#include "graph/passes/graph_util.h"

#include <algorithm>
#include <cstring>

namespace webnn {

std::vector<OperandId> node_reads(const Graph& graph, const Node& node) {
  (void)graph;
  std::vector<OperandId> ids = node.inputs();
  // A fused stage's value (the depthwise's, inside it the expansion's) lives only inside the
  // node: the stage's operands are read instead.
  for (const auto* stage : {&node.depthwise_input, &node.expansion_input}) {
    if (!*stage) continue;
    const OperandId inner = (*stage)->outputs[0];
    ids.erase(std::remove(ids.begin(), ids.end(), inner), ids.end());
    for (OperandId id : node_reads(graph, **stage)) ids.push_back(id);
  }
  if (node.epilogue.empty()) return ids;
  const std::vector<OperandId> chain = chain_values(node);
  for (const Node::Step& step : node.epilogue) {
    for (OperandId id : step.op.inputs()) {
      if (std::find(chain.begin(), chain.end(), id) == chain.end()) ids.push_back(id);
    }
  }
  return ids;
}

std::vector<int> use_counts(const Graph& graph) {
  std::vector<int> uses(graph.operands.size(), 0);
  for (const Node& node : graph.nodes) {
    for (OperandId id : node_reads(graph, node)) ++uses[id];
  }
  for (const NamedOperand& o : graph.outputs) ++uses[o.id];
  return uses;
}

void replace_uses(Graph& graph, OperandId from, OperandId to) {
  auto remap = [&](OperandRef& r) {
    if (r.id == from) r.id = to;
  };
  for (Node& node : graph.nodes) {
    for_each_operand(node.params, remap);
    for (Node::Step& step : node.epilogue) for_each_operand(step.op.params, remap);
  }
  for (NamedOperand& o : graph.outputs) {
    if (o.id == from) o.id = to;
  }
}

OperandId add_constant(Graph& graph, const OperandDesc& desc, std::vector<uint8_t> bytes) {
  Operand op;
  op.desc = desc;
  op.kind = OperandKind::kConstant;
  op.constant = std::make_shared<const ConstantData>(std::move(bytes));
  graph.operands.push_back(std::move(op));
  return static_cast<OperandId>(graph.operands.size() - 1);
}

void erase_nodes(Graph& graph, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!dead[i]) kept.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(kept);
  for (Operand& op : graph.operands) {
    if (op.kind == OperandKind::kOutput) op.producer = -1;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (OperandId id : graph.nodes[i].outputs) {
      graph.operands[id].producer = static_cast<int32_t>(i);
    }
  }
}

bool is_constant(const Graph& graph, OperandId id) {
  return graph.operands[id].kind == OperandKind::kConstant;
}

bool is_graph_output(const Graph& graph, OperandId id) {
  return std::any_of(graph.outputs.begin(), graph.outputs.end(),
                     [&](const NamedOperand& o) { return o.id == id; });
}

}  // namespace webnn

namespace webnn {

OperandId add_value(Graph& graph, const OperandDesc& desc) {
  Operand op;
  op.desc = desc;
  op.kind = OperandKind::kOutput;
  graph.operands.push_back(std::move(op));
  return static_cast<OperandId>(graph.operands.size() - 1);
}

void renumber_producers(Graph& graph) {
  for (Operand& op : graph.operands) {
    if (op.kind == OperandKind::kOutput) op.producer = -1;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (OperandId id : graph.nodes[i].outputs) {
      graph.operands[id].producer = static_cast<int32_t>(i);
    }
  }
}

bool is_cpu_vector_unary(OpKind k) {
  switch (k) {
    case OpKind::kIdentity:
    case OpKind::kRelu:
    case OpKind::kNeg:
    case OpKind::kAbs:
    case OpKind::kFloor:
    case OpKind::kCeil:
    case OpKind::kRoundEven:
    case OpKind::kSqrt:
    case OpKind::kReciprocal:
    case OpKind::kExp:
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kErf:  // float32 on the cpu unary table (cpu/transcendental.inc)
    case OpKind::kGelu:
    case OpKind::kLog:  // float32 (cpu/elementary.inc)
    case OpKind::kSoftplus:
    case OpKind::kElu:
    case OpKind::kSign:
    case OpKind::kSoftsign:
    case OpKind::kSin:  // in double after the reduction (cpu/trig.inc)
    case OpKind::kCos:
    case OpKind::kTan:
    case OpKind::kClamp:
    case OpKind::kLinear:
    case OpKind::kLeakyRelu:
    case OpKind::kHardSigmoid:
    case OpKind::kHardSwish:
      return true;
    default:
      return false;
  }
}

bool is_cpu_vector_binary(OpKind k) {
  return k == OpKind::kAdd || k == OpKind::kSub || k == OpKind::kMul || k == OpKind::kDiv ||
         k == OpKind::kMax || k == OpKind::kMin;
}

}  // namespace webnn

namespace webnn {

bool reaches_any(const Graph& graph, const Node& node, const std::unordered_set<int>& nodes) {
  std::vector<bool> seen(graph.nodes.size(), false);
  std::vector<int> stack;
  for (OperandId id : node_reads(graph, node)) {
    if (graph.operands[id].producer >= 0) stack.push_back(graph.operands[id].producer);
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (seen[i]) continue;
    seen[i] = true;
    if (nodes.count(i)) return true;
    for (OperandId id : node_reads(graph, graph.nodes[i])) {
      if (graph.operands[id].producer >= 0) stack.push_back(graph.operands[id].producer);
    }
  }
  return false;
}

bool sort_topologically(Graph& graph) {
  const size_t n = graph.nodes.size();
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 emitted
  std::vector<int> order;
  order.reserve(n);
  for (size_t root = 0; root < n; ++root) {
    if (state[root]) continue;
    std::vector<std::pair<int, size_t>> stack = {{static_cast<int>(root), 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      const std::vector<OperandId> reads = node_reads(graph, graph.nodes[i]);
      bool pushed = false;
      while (next < reads.size()) {
        const int32_t p = graph.operands[reads[next++]].producer;
        if (p < 0 || state[p] == 2) continue;
        if (state[p] == 1) return false;  // a cycle
        state[p] = 1;
        stack.push_back({p, 0});
        pushed = true;
        break;
      }
      if (pushed) continue;
      state[i] = 2;
      order.push_back(i);
      stack.pop_back();
    }
  }
  std::vector<Node> nodes;
  nodes.reserve(n);
  for (int i : order) nodes.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(nodes);
  renumber_producers(graph);
  return true;
}

const Node* plain_producer(const Graph& g, OperandId id, OpKind k) {
  if (id < 0 || g.operands[id].producer < 0) return nullptr;
  const Node& n = g.nodes[g.operands[id].producer];
  if (n.kind != k || !n.epilogue.empty() || n.quantized || n.outputs.size() != 1) return nullptr;
  return &n;
}

OperandId constant_or_its_reshape(const Graph& g, OperandId id) {
  if (id >= 0 && is_constant(g, id)) return id;
  const Node* rs = plain_producer(g, id, OpKind::kReshape);
  if (!rs || !is_constant(g, rs->as<NewShapeParams>().input.id)) return -1;
  return rs->as<NewShapeParams>().input.id;
}

std::vector<float> float32_values(const Graph& g, OperandId id) {
  if (id < 0 || !is_constant(g, id) || g.desc(id).data_type != DataType::kFloat32) return {};
  const ConstantData& c = *g.operands[id].constant;
  std::vector<float> v(c.size() / sizeof(float));
  std::memcpy(v.data(), c.data(), v.size() * sizeof(float));
  return v;
}

std::vector<int64_t> index_values(const Graph& g, OperandId id) {
  const DataType t = g.desc(id).data_type;
  if (!is_constant(g, id) || (t != DataType::kInt32 && t != DataType::kInt64)) return {};
  const ConstantData& c = *g.operands[id].constant;
  std::vector<int64_t> v;
  if (t == DataType::kInt32) {
    std::vector<int32_t> w(c.size() / 4);
    std::memcpy(w.data(), c.data(), w.size() * 4);
    v.assign(w.begin(), w.end());
  } else {
    v.resize(c.size() / 8);
    std::memcpy(v.data(), c.data(), v.size() * 8);
  }
  return v;
}

}  // namespace webnn
