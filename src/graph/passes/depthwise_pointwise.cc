// Depthwise + pointwise fusion, for the cpu backend: a float32 NHWC depthwise conv2d (with its
// fused unary steps, e.g. hardSwish) whose value is read only by a 1x1 conv2d becomes part of
// that conv2d (Node::depthwise_input). The cpu kernel computes the depthwise rows band by band
// into a buffer that stays in cache and runs the 1x1 product on each band at once, so the
// depthwise value (det's and LCNet's 48-channel 192x192 maps: 14 MB per layer) is never
// written to memory and read back. Every value is computed by the same row kernel, activation
// and GEMM tiles as the two nodes apart, so results are bit-identical.
//
// The 1x1 expansion conv2d before the depthwise (an inverted-residual block's 24 -> 48
// channels at 192x192: another 14 MB written and read back) joins too when the depthwise is its
// value's only reader (Node::expansion_input on the depthwise stage): the kernel computes its
// rows band by band as well, with the same GEMM tiles and K order, so the whole block is one
// pass over memory and still bit-identical.
//
// Every filter must be a finite constant: the cpu kernels compute a filter with a NaN or an
// infinity on the reference kernel (cpu/conv_nonfinite_filter.cc), which could not read a
// value that is never stored.
#include <cmath>
#include <cstring>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

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

// A 1x1 conv2d, stride 1, no padding, one group, NHWC, float32, finite constant filter.
bool is_pointwise(const Graph& graph, const Node& n) {
  if (!plain_conv(n)) return false;
  const auto& p = n.as<Conv2dParams>();
  if (p.input_layout != "nhwc" || p.groups != 1) return false;
  if (!all_equal(p.strides, 1) || !all_equal(p.padding, 0)) return false;
  const OperandDesc& w = graph.desc(p.filter.id);
  if (filter_size(p, w, 'h') != 1 || filter_size(p, w, 'w') != 1) return false;
  return static_f32(graph.desc(p.input.id)) && static_f32(graph.desc(n.outputs[0])) &&
         finite_constant(graph, p.filter.id);
}

// The node's fused steps (if any) are unary vector ops applied one after another, ending in a
// static float32 value.
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

// A depthwise conv2d (groups == channels, one filter per channel), NHWC, float32, finite
// constant filter, whose fused steps (if any) are unary vector ops applied one after another.
bool is_depthwise(const Graph& graph, const Node& n) {
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

// The node producing `v` if `v` is an intermediate read once (by the node at `reader`), built
// before it and not taken by another fusion: else -1.
int32_t sole_producer(const Graph& graph, const std::vector<int>& uses,
                      const std::vector<bool>& dead, OperandId v, size_t reader) {
  const int32_t d = graph.operands[v].producer;
  if (d < 0 || d >= static_cast<int32_t>(reader) || dead[d]) return -1;
  if (graph.operands[v].kind != OperandKind::kOutput || uses[v] != 1) return -1;
  if (is_graph_output(graph, v)) return -1;
  return d;
}

}  // namespace

Expected<int64_t> fuse_depthwise_pointwise(Graph& graph) {
  std::vector<int> uses = use_counts(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& pw = graph.nodes[i];
    if (!is_pointwise(graph, pw)) continue;
    const OperandId v = pw.as<Conv2dParams>().input.id;
    const int32_t d = sole_producer(graph, uses, dead, v, i);
    if (d < 0) continue;
    Node& dw = graph.nodes[d];
    if (!is_depthwise(graph, dw) || dw.outputs[0] != v) continue;
    // The expansion before it: a plain 1x1 conv with unary steps whose value only it reads.
    const OperandId u = dw.as<Conv2dParams>().input.id;
    const int32_t e = sole_producer(graph, uses, dead, u, d);
    if (e >= 0 && is_pointwise(graph, graph.nodes[e]) && graph.nodes[e].outputs[0] == u &&
        unary_chain(graph, graph.nodes[e])) {
      dw.expansion_input = std::make_shared<const Node>(std::move(graph.nodes[e]));
      dead[e] = true;
    }
    pw.depthwise_input = std::make_shared<const Node>(std::move(dw));
    dead[d] = true;
    ++fused;
  }
  if (fused) erase_nodes(graph, dead);
  return fused;
}

}  // namespace webnn
