#include "webnn/stats.h"

#include <algorithm>

#include "core/layout.h"

namespace webnn {

namespace {

double elements(const Graph& g, OperandId id) {
  double n = 1;
  for (const Dim& d : g.desc(id).shape) n *= static_cast<double>(d.value);
  return n;
}

double elements(const Graph& g, OperandRef r) { return r.present() ? elements(g, r.id) : 0; }

// Per-element cost of a recurrent cell: gates x (input + hidden) multiply-adds.
double recurrent_flops(const Graph& g, OperandRef weight, OperandRef recurrent, double steps,
                       double batch) {
  // weight: [D, gates*H, in] (or [gates*H, in] for cells); recurrent: [.., gates*H, H]
  return 2 * steps * batch * (elements(g, weight) + elements(g, recurrent));
}

}  // namespace

double node_flops(const Graph& g, const Node& node) {
  const double out = node.outputs.empty() ? 0 : elements(g, node.outputs[0]);
  const OpFamily family = op_family(node.kind);
  if (family == OpFamily::kPool2d || family == OpFamily::kGlobalPool ||
      family == OpFamily::kReduction || family == OpFamily::kScan ||
      node.kind == OpKind::kSoftmax) {
    // Each input element is read once per window it falls in; approximate with the input.
    double in = 0;
    for_each_operand(node.params, [&](OperandRef r) { in = std::max(in, elements(g, r)); });
    return in;
  }
  switch (node.kind) {
    case OpKind::kConv2d: {
      const auto& p = node.as<Conv2dParams>();
      // Every output element takes (filter elements / outC) multiply-adds.
      const Shape& f = g.desc(p.filter.id).shape;
      double out_channels = static_cast<double>(f[LayoutAxes(p.filter_layout)['o']].value);
      // A fused stage (Node::depthwise_input, its expansion_input) computes its own products.
      const double stage = (node.depthwise_input ? node_flops(g, *node.depthwise_input) : 0) +
                           (node.expansion_input ? node_flops(g, *node.expansion_input) : 0);
      return stage + 2 * out * elements(g, p.filter) / out_channels;
    }
    case OpKind::kConvTranspose2d: {
      // Every input element is scattered through (filter elements / inC) multiply-adds.
      const auto& p = node.as<ConvTranspose2dParams>();
      const Shape& in = g.desc(p.input.id).shape;
      double in_channels = static_cast<double>(in[LayoutAxes(p.input_layout)['c']].value);
      return 2 * elements(g, p.input) * elements(g, p.filter) / in_channels;
    }
    case OpKind::kMatmul: {
      const auto& p = node.as<BinaryParams>();
      const Shape& a = g.desc(p.a.id).shape;
      return 2 * out * static_cast<double>(a.back().value);
    }
    case OpKind::kGemm: {
      const auto& p = node.as<GemmParams>();
      const Shape& a = g.desc(p.a.id).shape;
      double k = static_cast<double>(a[p.a_transpose ? 0 : 1].value);
      return 2 * out * k + (p.c.present() ? out : 0);
    }
    case OpKind::kGru:
    case OpKind::kLstm: {
      OperandRef input =
          node.kind == OpKind::kGru ? node.as<GruParams>().input : node.as<LstmParams>().input;
      OperandRef w =
          node.kind == OpKind::kGru ? node.as<GruParams>().weight : node.as<LstmParams>().weight;
      OperandRef r = node.kind == OpKind::kGru ? node.as<GruParams>().recurrent_weight
                                               : node.as<LstmParams>().recurrent_weight;
      const Shape& in = g.desc(input.id).shape;
      return recurrent_flops(g, w, r, static_cast<double>(in[0].value),
                             static_cast<double>(in[1].value));
    }
    case OpKind::kGruCell:
    case OpKind::kLstmCell: {
      OperandRef input = node.kind == OpKind::kGruCell ? node.as<GruCellParams>().input
                                                       : node.as<LstmCellParams>().input;
      OperandRef w = node.kind == OpKind::kGruCell ? node.as<GruCellParams>().weight
                                                   : node.as<LstmCellParams>().weight;
      OperandRef r = node.kind == OpKind::kGruCell ? node.as<GruCellParams>().recurrent_weight
                                                   : node.as<LstmCellParams>().recurrent_weight;
      return recurrent_flops(g, w, r, 1, static_cast<double>(g.desc(input.id).shape[0].value));
    }
    default:
      return out;
  }
}

GraphStats graph_stats(const Graph& graph) {
  GraphStats stats;
  for (const Node& node : graph.nodes) {
    ++stats.op_histogram[op_spec_name(node.kind)];
    stats.flops += node_flops(graph, node);
  }
  // Only constants the graph still references (dead ones were dropped at build).
  for (const Operand& op : graph.operands) {
    if (op.kind != OperandKind::kConstant || !op.constant) continue;
    uint64_t n = 1;
    for (const Dim& d : op.desc.shape) n *= static_cast<uint64_t>(d.value);
    stats.parameter_count += n;
    stats.parameter_bytes += op.constant->size();
  }
  return stats;
}

}  // namespace webnn
