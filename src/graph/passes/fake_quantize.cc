// Fake-quantize fusion, for the cpu backend: a QDQ-quantized float model puts
//   quantizeLinear(x, s, zp) -> (u)int8 -> dequantizeLinear(s, zp) -> float32
// around every float op the int8 passes (qdq_fusion, qdq_tables) do not take. This pass turns
// each such pair, with the same constant zero point and constant float32 scales of one shape on
// both sides (one value per tensor, or per channel along one block of axes), into the
// quantizeLinear node alone, marked Node::Quantized::fake_quantize, the dequantize scale in its
// multiplier, writing the dequantized float32 value: one pass
// over memory instead of two and no int8 tensor. cpu/quantize_linear.cc computes each element
// with the same double division, rounding, saturation, NaN rule and float32 product as the
// two stand-alone kernels, so the results are bit-identical.
#include <cstring>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

bool byte_type(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

bool same_constant(const Graph& g, OperandId a, OperandId b) {
  if (a == b) return true;
  if (!is_constant(g, a) || !is_constant(g, b) || !(g.desc(a) == g.desc(b))) return false;
  const ConstantData& ca = *g.operands[a].constant;
  const ConstantData& cb = *g.operands[b].constant;
  return ca.size() == cb.size() && std::memcmp(ca.data(), cb.data(), ca.size()) == 0;
}

// A scale or zero point the fused kernel takes: a constant of `type` holding one value, or
// one per element of a block of the value's axes (shape of the value's rank, each axis 1 or
// the value's).
bool usable_parameter(const Graph& g, OperandId id, DataType type, const Shape& value) {
  const OperandDesc& d = g.desc(id);
  if (!is_constant(g, id) || d.data_type != type || !is_static_shape(d.shape)) return false;
  int64_t count = 1;
  for (const Dim& e : d.shape) count *= e.value;
  if (count == 1) return true;
  return d.shape.size() == value.size() && broadcasts_as_block(d.shape, value);
}

}  // namespace

Expected<int64_t> fuse_fake_quantize(Graph& graph) {
  const std::vector<int> uses = use_counts(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& dq = graph.nodes[i];
    if (dq.kind != OpKind::kDequantizeLinear || !dq.epilogue.empty() || dq.quantized) continue;
    const auto& dp = dq.as<QuantizeParams>();
    const OperandId q_value = dp.input.id;
    const int32_t qi = graph.operands[q_value].producer;
    if (qi < 0 || uses[q_value] != 1 || is_graph_output(graph, q_value)) continue;
    Node& q = graph.nodes[qi];
    if (q.kind != OpKind::kQuantizeLinear || !q.epilogue.empty() || q.quantized) continue;
    const auto& qp = q.as<QuantizeParams>();
    const OperandDesc& xd = graph.desc(qp.input.id);
    const OperandDesc& yd = graph.desc(dq.outputs[0]);
    const DataType qt = graph.desc(q_value).data_type;
    if (xd.data_type != DataType::kFloat32 || !is_static_shape(xd.shape) || !byte_type(qt) ||
        !(yd == xd)) {
      continue;
    }
    // The scales may differ: ONNX's QuantizeLinear imports as x / s quantized with scale 1
    // (python/webnn/onnx/ops/quantization.py), its DequantizeLinear with scale s.
    const Shape& sshape = graph.desc(qp.scale.id).shape;
    if (!usable_parameter(graph, qp.scale.id, DataType::kFloat32, xd.shape) ||
        !usable_parameter(graph, dp.scale.id, DataType::kFloat32, xd.shape) ||
        !(graph.desc(dp.scale.id).shape == sshape)) {
      continue;
    }
    if (qp.zero_point.present() != dp.zero_point.present()) continue;
    if (qp.zero_point.present() && (!usable_parameter(graph, qp.zero_point.id, qt, xd.shape) ||
                                    !same_constant(graph, qp.zero_point.id, dp.zero_point.id) ||
                                    !(graph.desc(qp.zero_point.id).shape == sshape))) {
      continue;
    }
    auto form = std::make_shared<Node::Quantized>();
    form->fake_quantize = true;
    form->requant_signed = qt == DataType::kInt8;
    const ConstantData& ds = *graph.operands[dp.scale.id].constant;
    form->multiplier.resize(ds.size() / sizeof(float));
    std::memcpy(form->multiplier.data(), ds.data(), form->multiplier.size() * sizeof(float));
    q.quantized = std::move(form);
    q.outputs[0] = dq.outputs[0];
    dead[i] = true;
    ++fused;
  }
  if (fused > 0) erase_nodes(graph, dead);
  return fused;
}

}  // namespace webnn
