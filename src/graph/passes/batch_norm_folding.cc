// Folding of batch normalization and of per-channel scale/shift into the convolution that
// produces its input, for the fast backends:
//   batchNormalization(conv(x, W, b)) = conv(x, W * s, (b - mean) * s + beta),
//     s = scale / sqrt(variance + epsilon)
//   mul(conv(x, W, b), c) = conv(x, W * c, b * c);  add/sub(conv(x, W, b), c) = conv(x, W, b +- c)
// for a constant filter and bias, constant per-output-channel statistics or c, and a conv output
// read by nothing else. The arithmetic is re-associated (computed in double, rounded once), so
// results match the unfolded graph within tolerance, not bit for bit.
#include <cmath>
#include <cstring>
#include <optional>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

std::vector<double> read_floats(const Graph& graph, OperandId id) {
  const ConstantData& c = *graph.operands[id].constant;
  std::vector<double> out(c.size() / sizeof(float));
  const float* f = reinterpret_cast<const float*>(c.data());
  for (size_t i = 0; i < out.size(); ++i) {
    float v;
    std::memcpy(&v, f + i, sizeof(float));
    out[i] = v;
  }
  return out;
}

OperandId write_floats(Graph& graph, const OperandDesc& desc, const std::vector<double>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = static_cast<float>(v[i]);
    std::memcpy(bytes.data() + i * sizeof(float), &f, sizeof(float));
  }
  return add_constant(graph, desc, std::move(bytes));
}

bool is_f32_constant(const Graph& graph, OperandRef r) {
  return r.present() && is_constant(graph, r.id) &&
         graph.desc(r.id).data_type == DataType::kFloat32 &&
         is_static_shape(graph.desc(r.id).shape);
}

// A filter of whole numbers is a quantized convolution's (webnn.onnx's QLinearConv: shifted
// integer inputs and weights, an exact float accumulation, then requantization by a
// per-channel multiplier and a rounding quantizeLinear). Folding the multiplier or a shift into
// it would make the accumulation inexact, and the rounding after it turns that into whole
// quantization steps; such convolutions are left as they are.
bool integer_valued(const Graph& graph, OperandId id) {
  for (double v : read_floats(graph, id)) {
    if (v != std::nearbyint(v)) return false;
  }
  return true;
}

// The convolution a folding may rewrite: its filter, bias, output channel axis and how a filter
// element maps to its output channel.
struct ConvTarget {
  OperandRef* filter;
  OperandRef* bias;
  int64_t channel_axis;  // in the output
  int64_t channels;
  int64_t o_stride, o_size;  // filter element f belongs to channel (f / o_stride) % o_size
};

std::optional<ConvTarget> conv_target(Graph& graph, Node& node) {
  ConvTarget t{};
  std::string layout, filter_layout;
  if (node.kind == OpKind::kConv2d) {
    auto& p = std::get<Conv2dParams>(node.params);
    t.filter = &p.filter;
    t.bias = &p.bias;
    layout = p.input_layout;
    filter_layout = p.filter_layout;
  } else if (node.kind == OpKind::kConvTranspose2d) {
    auto& p = std::get<ConvTranspose2dParams>(node.params);
    if (p.groups != 1) return std::nullopt;  // the filter's 'o' is per group there
    t.filter = &p.filter;
    t.bias = &p.bias;
    layout = p.input_layout;
    filter_layout = p.filter_layout;
  } else {
    return std::nullopt;
  }
  if (!node.epilogue.empty() || !is_f32_constant(graph, *t.filter)) return std::nullopt;
  if (t.bias->present() && !is_f32_constant(graph, *t.bias)) return std::nullopt;
  if (integer_valued(graph, t.filter->id)) return std::nullopt;
  const OperandDesc& y = graph.desc(node.outputs[0]);
  if (y.data_type != DataType::kFloat32 || y.shape.size() != 4) return std::nullopt;
  if (layout != "nchw" && layout != "nhwc") return std::nullopt;
  t.channel_axis = layout == "nchw" ? 1 : 3;
  if (!y.shape[t.channel_axis].is_static()) return std::nullopt;
  t.channels = y.shape[t.channel_axis].value;
  const std::vector<int64_t> w = static_sizes(graph.desc(t.filter->id).shape);
  const size_t o = filter_layout.find('o');
  if (o == std::string::npos || w.size() != 4) return std::nullopt;
  t.o_stride = 1;
  for (size_t i = o + 1; i < 4; ++i) t.o_stride *= w[i];
  t.o_size = w[o];
  if (t.o_size != t.channels) return std::nullopt;
  return t;
}

// Batch-norm statistics: one value per channel, shape [C].
std::optional<std::vector<double>> per_axis(const Graph& graph, OperandRef r, const ConvTarget& t) {
  if (!is_f32_constant(graph, r)) return std::nullopt;
  const std::vector<int64_t> s = static_sizes(graph.desc(r.id).shape);
  if (s.size() != 1 || s[0] != t.channels) return std::nullopt;
  return read_floats(graph, r.id);
}

// Per-channel values of a constant that broadcasts against the conv output along its channel
// axis only (shape [C] for nhwc, [C,1,1], [1,C,1,1], ... or all ones), or nullopt.
std::optional<std::vector<double>> per_channel(const Graph& graph, OperandRef r,
                                               const ConvTarget& t, const OperandDesc& y) {
  if (!is_f32_constant(graph, r)) return std::nullopt;
  const std::vector<int64_t> s = static_sizes(graph.desc(r.id).shape);
  if (s.size() > 4) return std::nullopt;
  bool varies = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t axis = static_cast<int64_t>(4 - s.size() + i);
    if (s[i] == 1) continue;
    if (axis != t.channel_axis || s[i] != t.channels) return std::nullopt;
    varies = true;
  }
  (void)y;
  std::vector<double> v = read_floats(graph, r.id);
  if (!varies) v.assign(static_cast<size_t>(t.channels), v.empty() ? 0.0 : v[0]);
  return v;
}

// Rewrites conv (node `ci`) to W * s, b * s + shift.
void rewrite_conv(Graph& graph, Node& conv, const ConvTarget& t, const std::vector<double>& s,
                  const std::vector<double>& shift) {
  const OperandDesc fdesc = graph.desc(t.filter->id);
  std::vector<double> w = read_floats(graph, t.filter->id);
  for (size_t f = 0; f < w.size(); ++f) {
    w[f] *= s[static_cast<size_t>((static_cast<int64_t>(f) / t.o_stride) % t.o_size)];
  }
  std::vector<double> b(static_cast<size_t>(t.channels), 0.0);
  if (t.bias->present()) b = read_floats(graph, t.bias->id);
  for (size_t c = 0; c < b.size(); ++c) b[c] = b[c] * s[c] + shift[c];
  OperandDesc bdesc;
  bdesc.data_type = DataType::kFloat32;
  bdesc.shape = {Dim(t.channels)};
  // Pointers into conv.params stay valid: add_constant only grows graph.operands.
  const OperandId new_w = write_floats(graph, fdesc, w);
  const OperandId new_b = write_floats(graph, bdesc, b);
  t.filter->id = new_w;
  t.bias->id = new_b;
  (void)conv;
}

}  // namespace

Expected<int64_t> fold_batch_norm(Graph& graph) {
  std::vector<bool> dead(graph.nodes.size(), false);
  int64_t folded = 0;
  std::vector<int> uses = use_counts(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& node = graph.nodes[i];
    if (dead[i] || node.outputs.size() != 1) continue;
    OperandId x = -1;
    OperandRef other;
    if (node.kind == OpKind::kBatchNormalization) {
      x = node.as<BatchNormalizationParams>().input.id;
    } else if (node.kind == OpKind::kMul || node.kind == OpKind::kAdd ||
               node.kind == OpKind::kSub) {
      const auto& p = node.as<BinaryParams>();
      x = p.a.id;
      other = p.b;
      if (node.kind != OpKind::kSub && !is_constant(graph, p.b.id)) std::swap(x, other.id);
    } else {
      continue;
    }
    const int32_t pi = graph.operands[x].producer;
    if (pi < 0 || dead[pi] || uses[x] != 1 || is_graph_output(graph, x)) continue;
    Node& conv = graph.nodes[pi];
    std::optional<ConvTarget> t = conv_target(graph, conv);
    if (!t) continue;
    const OperandDesc& y = graph.desc(x);
    // The folded node must produce exactly the rewritten node's output.
    if (!(graph.desc(node.outputs[0]) == y)) continue;
    const size_t c = static_cast<size_t>(t->channels);
    std::vector<double> s(c, 1.0), shift(c, 0.0);
    if (node.kind == OpKind::kBatchNormalization) {
      const auto& p = node.as<BatchNormalizationParams>();
      if (p.axis != t->channel_axis) continue;
      auto mean = per_axis(graph, p.mean, *t);
      auto var = per_axis(graph, p.variance, *t);
      if (!mean || !var) continue;
      std::optional<std::vector<double>> scale, bias;
      if (p.scale.present() && !(scale = per_axis(graph, p.scale, *t))) continue;
      if (p.bias.present() && !(bias = per_axis(graph, p.bias, *t))) continue;
      // The reference rounds epsilon to the input type (float32) before use.
      const double eps = static_cast<float>(p.epsilon);
      for (size_t k = 0; k < c; ++k) {
        s[k] = (scale ? (*scale)[k] : 1.0) / std::sqrt((*var)[k] + eps);
        shift[k] = (bias ? (*bias)[k] : 0.0) - (*mean)[k] * s[k];
      }
    } else {
      auto v = per_channel(graph, other, *t, y);
      if (!v) continue;
      for (size_t k = 0; k < c; ++k) {
        if (node.kind == OpKind::kMul) s[k] = (*v)[k];
        if (node.kind == OpKind::kAdd) shift[k] = (*v)[k];
        if (node.kind == OpKind::kSub) shift[k] = -(*v)[k];
      }
    }
    rewrite_conv(graph, conv, *t, s, shift);
    // The conv now produces the folded node's output in its place.
    const OperandId out = node.outputs[0];
    conv.outputs[0] = out;
    graph.operands[out].producer = pi;
    uses = use_counts(graph);
    dead[i] = true;
    ++folded;
  }
  if (folded) erase_nodes(graph, dead);
  return folded;
}

}  // namespace webnn
