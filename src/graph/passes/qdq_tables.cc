// Quantized tables, for the cpu backend: the element-wise float steps a QDQ model keeps between
// two quantized convolutions become a lookup table in the first one's requantization.
//
// A QDQ model quantizes around every op, so after qdq_fusion the output of an int8 conv2d or
// matmul (qdq_fusion.cc) typically goes through dequantizeLinear -> batchNormalization ->
// quantizeLinear, or dequantizeLinear -> add -> quantizeLinear -> dequantizeLinear -> mul -> ...
// -> quantizeLinear (a hard-swish), before the next convolution. Such a region reads one
// (u)int8 tensor, every other operand is a constant that varies at most along the channel axis,
// and every op is element-wise: each output element is a function of one input byte and its
// channel. So the whole region is a table of 256 bytes per channel, which the int8 kernel
// applies to each requantized value (cpu/qconv.cc) instead of running the region's float ops.
//
// Why the result is bit-identical to the float graph: the table is computed by running the
// region's own nodes, on the cpu backend's own kernels (the ones the float graph runs), on a
// tensor of the source's shape holding every byte value in every channel. Each element-wise
// kernel computes an element from that element alone, so each table entry is exactly what the
// graph computes for that byte. Only ops whose cpu kernel reads nothing but the element and
// per-channel constants are taken (no reductions, no broadcast of the region value itself).
#include <cstring>

#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

constexpr int kMaxRegionNodes = 64;

bool byte_type(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

// Element-wise ops whose cpu kernels compute each element from that element (and constants).
bool tabulable(OpKind k) {
  return is_cpu_vector_unary(k) || is_cpu_vector_binary(k) || k == OpKind::kBatchNormalization ||
         k == OpKind::kQuantizeLinear || k == OpKind::kDequantizeLinear;
}

struct Source {
  Shape shape;
  std::vector<int64_t> sizes;
  size_t c_axis = 0;
  int64_t channels = 1;
};

// A constant operand that, broadcast against the source's shape, varies at most along the
// channel axis (so the region stays a function of one byte and its channel).
bool per_channel_constant(const Graph& g, OperandId id, const Source& s) {
  if (!is_constant(g, id) || !is_static_shape(g.desc(id).shape)) return false;
  const std::vector<int64_t> cs = static_sizes(g.desc(id).shape);
  if (cs.size() > s.sizes.size()) return false;
  const size_t lead = s.sizes.size() - cs.size();
  for (size_t a = 0; a < cs.size(); ++a) {
    if (cs[a] != 1 && !(a + lead == s.c_axis && cs[a] == s.channels)) return false;
  }
  return true;
}

bool in_region(const std::vector<bool>& value, OperandId id) {
  return id >= 0 && static_cast<size_t>(id) < value.size() && value[id];
}

// Whether node n joins the region whose values are marked in `value`.
bool joins(const Graph& g, const Node& n, const std::vector<bool>& value, const Source& s) {
  if (!tabulable(n.kind) || !n.epilogue.empty() || n.quantized || n.outputs.size() != 1) {
    return false;
  }
  const OperandDesc& out = g.desc(n.outputs[0]);
  if (!(out.shape == s.shape)) return false;
  if (n.kind == OpKind::kBatchNormalization) {
    const auto& p = n.as<BatchNormalizationParams>();
    if (p.axis != static_cast<int64_t>(s.c_axis) || !in_region(value, p.input.id)) return false;
    for (OperandRef r : {p.mean, p.variance, p.scale, p.bias}) {
      if (!r.present()) continue;
      if (!is_constant(g, r.id) || !is_static_shape(g.desc(r.id).shape)) return false;
      const std::vector<int64_t> cs = static_sizes(g.desc(r.id).shape);
      if (cs.size() != 1 || cs[0] != s.channels) return false;
    }
    return true;
  }
  for (OperandId id : n.inputs()) {
    if (!in_region(value, id) && !per_channel_constant(g, id, s)) return false;
  }
  return true;
}

// Runs `nodes` (in order) on the cpu kernels with the source holding every byte value in every
// channel; returns table[c * 256 + byte] of the value `t`, or an empty vector.
std::vector<uint8_t> tabulate(const Graph& g, const std::vector<const Node*>& nodes, OperandId src,
                              OperandId t, const Source& s) {
  std::vector<TensorView> views(g.operands.size());
  std::vector<std::vector<uint8_t>> buffers;
  const int64_t count = [&] {
    int64_t c = 1;
    for (int64_t d : s.sizes) c *= d;
    return c;
  }();
  auto bind = [&](OperandId id) {
    TensorView& v = views[id];
    v.data_type = g.desc(id).data_type;
    v.shape = s.sizes;
    v.count = static_cast<uint64_t>(count);
    buffers.emplace_back(static_cast<size_t>(count * element_size(v.data_type)) + 1, 0);
    v.data = buffers.back().data();
  };
  buffers.reserve(nodes.size() + 1);
  bind(src);
  for (const Node* n : nodes) {
    for (OperandId id : n->inputs()) {
      if (!is_constant(g, id) || views[id].data) continue;
      TensorView& v = views[id];
      v.data_type = g.desc(id).data_type;
      v.shape = static_sizes(g.desc(id).shape);
      v.count = 1;
      for (int64_t d : v.shape) v.count *= static_cast<uint64_t>(d);
      v.data = const_cast<uint8_t*>(g.operands[id].constant->data());
    }
    bind(n->outputs[0]);
  }
  const CompileContext cc(g, views);
  std::vector<std::unique_ptr<Kernel>> kernels;
  for (const Node* n : nodes) {
    Expected<std::unique_ptr<Kernel>> k = cpu_backend().compile(*n, cc);
    if (!k.has_value()) return {};
    kernels.push_back(std::move(k).value());
  }
  int64_t inner = 1;
  for (size_t a = s.c_axis + 1; a < s.sizes.size(); ++a) inner *= s.sizes[a];
  const int64_t per_channel = count / s.channels;  // elements of one channel
  std::vector<uint8_t> table(static_cast<size_t>(s.channels * 256), 0);
  // Each channel holds per_channel elements, so ceil(256 / per_channel) runs cover every byte.
  for (int64_t base = 0; base < 256; base += per_channel) {
    uint8_t* x = views[src].data;
    for (int64_t e = 0; e < count; ++e) {
      const int64_t p = e / (inner * s.channels) * inner + e % inner;
      x[e] = static_cast<uint8_t>((base + p) & 255);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      KernelContext ctx(*nodes[i], views, nullptr);
      if (!kernels[i]->run(ctx).is_ok()) return {};
    }
    const uint8_t* y = views[t].data;
    for (int64_t e = 0; e < count; ++e) {
      const int64_t p = e / (inner * s.channels) * inner + e % inner, c = e / inner % s.channels;
      if (base + p < 256) table[static_cast<size_t>(c * 256 + base + p)] = y[e];
    }
  }
  return table;
}

// Folds the largest region after quantized node `qi` into its table; false when none.
bool fold_region(Graph& g, size_t qi, const std::vector<std::vector<int32_t>>& readers) {
  Node& q = g.nodes[qi];
  const OperandId src = q.outputs[0];
  const OperandDesc& sd = g.desc(src);
  if (!byte_type(sd.data_type) || !is_static_shape(sd.shape) || is_graph_output(g, src)) {
    return false;
  }
  Source s;
  s.shape = sd.shape;
  s.sizes = static_sizes(sd.shape);
  if (s.sizes.empty()) return false;
  if (q.kind == OpKind::kConv2d) {
    s.c_axis = q.as<Conv2dParams>().input_layout == "nhwc" ? 3 : 1;
  } else {
    s.c_axis = s.sizes.size() - 1;
  }
  s.channels = s.sizes[s.c_axis];

  // Grow the region in node order: every node reading only region values and constants.
  std::vector<bool> value(g.operands.size(), false);
  value[src] = true;
  std::vector<size_t> region;
  for (size_t j = qi + 1; j < g.nodes.size() && region.size() < kMaxRegionNodes; ++j) {
    const Node& n = g.nodes[j];
    bool reads = false;
    for (OperandId id : n.inputs()) reads = reads || in_region(value, id);
    if (!reads || !joins(g, n, value, s)) continue;
    region.push_back(j);
    value[n.outputs[0]] = true;
  }
  // The last quantizeLinear of the region whose inputs all come from the source and whose
  // intermediate values nothing outside it reads.
  for (size_t k = region.size(); k-- > 0;) {
    const Node& last = g.nodes[region[k]];
    const OperandId t = last.outputs[0];
    if (last.kind != OpKind::kQuantizeLinear || !byte_type(g.desc(t).data_type)) continue;
    std::vector<bool> used(g.nodes.size(), false);
    std::vector<bool> needed(g.operands.size(), false);
    used[region[k]] = true;
    for (OperandId id : last.inputs()) needed[id] = true;
    std::vector<size_t> chain = {region[k]};
    for (size_t m = k; m-- > 0;) {
      const Node& n = g.nodes[region[m]];
      if (!needed[n.outputs[0]]) continue;
      used[region[m]] = true;
      chain.insert(chain.begin(), region[m]);
      for (OperandId id : n.inputs()) needed[id] = true;
    }
    bool closed = true;
    for (size_t m : chain) {
      const OperandId o = g.nodes[m].outputs[0];
      if (o == t) continue;
      if (is_graph_output(g, o)) closed = false;
      for (int32_t r : readers[o]) closed = closed && used[r];
    }
    for (int32_t r : readers[src]) closed = closed && used[r];
    if (!closed) continue;

    std::vector<const Node*> nodes;
    for (size_t m : chain) nodes.push_back(&g.nodes[m]);
    std::vector<uint8_t> table = tabulate(g, nodes, src, t, s);
    if (table.empty()) continue;
    // Compose with a table the node already applies: its bytes are the region's input.
    auto form = std::make_shared<Node::Quantized>(*q.quantized);
    if (!form->table.empty()) {
      const bool old_per_channel = form->table.size() != 256;
      std::vector<uint8_t> composed(table.size());
      for (int64_t c = 0; c < s.channels; ++c) {
        for (int v = 0; v < 256; ++v) {
          const uint8_t mid = form->table[(old_per_channel ? c * 256 : 0) + v];
          composed[c * 256 + v] = table[c * 256 + mid];
        }
      }
      table = std::move(composed);
    }
    bool same = true;
    for (size_t i = 256; i < table.size() && same; ++i) same = table[i] == table[i % 256];
    if (same) table.resize(256);
    form->table = std::move(table);
    q.quantized = std::move(form);
    q.outputs = {t};
    std::vector<bool> dead(g.nodes.size(), false);
    for (size_t m : chain) dead[m] = true;
    erase_nodes(g, dead);
    return true;
  }
  return false;
}

std::vector<std::vector<int32_t>> readers_of(const Graph& g) {
  std::vector<std::vector<int32_t>> readers(g.operands.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (OperandId id : node_reads(g, g.nodes[i])) readers[id].push_back(static_cast<int32_t>(i));
  }
  return readers;
}

}  // namespace

Expected<int64_t> fold_quantized_tables(Graph& graph) {
  int64_t folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (!n.quantized || (n.kind != OpKind::kConv2d && n.kind != OpKind::kMatmul)) continue;
    // Regions after a region: the table composes (at most a few rounds per node).
    for (int round = 0; round < 4; ++round) {
      if (!fold_region(graph, i, readers_of(graph))) break;
      ++folded;
    }
  }
  return folded;
}

}  // namespace webnn
