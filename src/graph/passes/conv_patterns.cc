#include "graph/passes/conv_patterns.h"

#include <cmath>
#include <cstring>

#include "graph/passes/graph_util.h"

namespace webnn {

namespace {

bool static_f32(const OperandDesc& d) {
  return d.data_type == DataType::kFloat32 && is_static_shape(d.shape);
}

// A finite float32 constant of `count` values.
bool finite_constant(const Graph& graph, OperandId id) {
  const Operand& op = graph.operands[id];
  if (op.kind != OperandKind::kConstant || !op.constant) return false;
  if (!static_f32(op.desc)) return false;
  const Expected<uint64_t> n = element_count(op.desc.shape);
  if (!n.has_value()) return false;
  const size_t count = static_cast<size_t>(*n);
  if (op.constant->size() != count * sizeof(float)) return false;
  const uint8_t* p = op.constant->data();
  for (size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, p + i * sizeof(float), sizeof v);
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// The size of filter axis `axis` ('o', 'i', 'h' or 'w') given its layout string.
int64_t filter_size(const Conv2dParams& p, const OperandDesc& w, char axis) {
  const size_t at = p.filter_layout.find(axis);
  if (at == std::string::npos || at >= w.shape.size()) return -1;
  return w.shape[at].value;
}

bool all_equal(const OptIntList& v, int64_t value) {
  if (!v) return true;
  for (int64_t x : *v) {
    if (x != value) return false;
  }
  return true;
}

bool plain_conv(const Node& n) {
  return n.kind == OpKind::kConv2d && !n.quantized && !n.permuted && !n.depthwise_input &&
         n.outputs.size() == 1;
}

}  // namespace

bool is_fusable_pointwise(const Graph& graph, const Node& n) {
  if (!plain_conv(n)) return false;
  const auto& p = n.as<Conv2dParams>();
  if (p.input_layout != "nhwc" || p.groups != 1) return false;
  if (!all_equal(p.strides, 1) || !all_equal(p.padding, 0)) return false;
  const OperandDesc& w = graph.desc(p.filter.id);
  if (filter_size(p, w, 'h') != 1 || filter_size(p, w, 'w') != 1) return false;
  return static_f32(graph.desc(p.input.id)) && static_f32(graph.desc(n.outputs[0])) &&
         finite_constant(graph, p.filter.id);
}

bool is_fusable_strided_conv(const Graph& graph, const Node& n) {
  if (!plain_conv(n)) return false;
  const auto& p = n.as<Conv2dParams>();
  if (p.input_layout != "nhwc" || p.groups != 1 || all_equal(p.strides, 1)) return false;
  const OperandDesc& x = graph.desc(p.input.id);
  if (!static_f32(x) || x.shape.size() != 4) return false;
  // Not a depthwise conv (one input channel would make groups == channels == 1 both).
  const OperandDesc& w = graph.desc(p.filter.id);
  if (filter_size(p, w, 'i') != x.shape[3].value) return false;
  if (x.shape[3].value == 1 && filter_size(p, w, 'o') == 1) return false;
  return static_f32(graph.desc(n.outputs[0])) && finite_constant(graph, p.filter.id);
}

bool unary_chain(const Graph& graph, const Node& n) {
  OperandId prev = n.epilogue.empty() ? n.outputs[0] : -1;
  for (size_t k = 0; k < n.epilogue.size(); ++k) {
    const Node::Step& s = n.epilogue[k];
    if (!is_cpu_vector_unary(s.op.kind) || s.op.inputs().size() != 1) return false;
    // The first step reads the head's value, each later one the previous step's.
    if (k > 0 && s.chain != prev) return false;
    prev = s.op.outputs[0];
  }
  return static_f32(graph.desc(prev));
}

bool is_fusable_depthwise(const Graph& graph, const Node& n) {
  if (!plain_conv(n)) return false;
  const auto& p = n.as<Conv2dParams>();
  if (p.input_layout != "nhwc") return false;
  const OperandDesc& x = graph.desc(p.input.id);
  if (!static_f32(x) || x.shape.size() != 4) return false;
  const int64_t channels = x.shape[3].value;
  const OperandDesc& w = graph.desc(p.filter.id);
  if (p.groups != channels || filter_size(p, w, 'i') != 1 || filter_size(p, w, 'o') != channels) {
    return false;
  }
  return finite_constant(graph, p.filter.id) && unary_chain(graph, n);
}

int32_t sole_producer(const Graph& graph, const std::vector<int>& uses,
                      const std::vector<bool>& dead, OperandId v, size_t reader) {
  const int32_t d = graph.operands[v].producer;
  if (d < 0 || d >= static_cast<int32_t>(reader) || dead[d]) return -1;
  if (graph.operands[v].kind != OperandKind::kOutput || uses[v] != 1) return -1;
  if (is_graph_output(graph, v)) return -1;
  return d;
}

}  // namespace webnn
