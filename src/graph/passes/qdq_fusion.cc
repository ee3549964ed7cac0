// QDQ fusion, for the cpu backend: a conv2d or matmul between quantize steps runs in integers.
//
// A quantized ONNX model imports (python/webnn/onnx/ops/quantization.py, QLinearConv) as
//   cast(x_q -> float32) - x_zp -> conv2d(filter w, bias b) -> mul(multiplier)
//     -> quantizeLinear(scale 1, y_zp)
// with w and b float32 constants holding integers (the weights minus their zero point, the
// int32 bias), and QLinearMatMul likewise with a matmul by a constant (K, N) matrix and no
// bias. This pass rewrites each such chain into one conv2d (matmul) node that reads x_q and
// writes the quantized output itself (Node::Quantized), which the cpu backend runs on its int8
// kernels (cpu/qconv.cc): exact int32 sums of (x - x_zp) * w plus b, one float32 product with
// the same multiplier, the same round-half-even and saturation as quantizeLinear.
//
// Why the result equals the float graph's: every term (x - x_zp) * w is an integer, and the
// pass only rewrites when, for every output channel, max|x - x_zp| * sum|w| + |b| < 2^24, so
// every partial sum the float32 convolution forms (in any order) is an integer below 2^24 and
// therefore exact: the float conv2d yields exactly the int32 sum. Both paths then multiply the
// same two float32 values once and quantize the same float32 value, so the outputs are
// bit-identical (not merely within one quantization step).
//
// Past that bound (a column's max|x - x_zp| * sum|w| + |b| >= 2^24: full-range int8 weights
// over K of about 1000 and more) the float graph no longer computes ONNX's product: its
// partial sums round, in the kernel's order. ONNX defines QLinearConv / QLinearMatMul (and
// ORT's fused QDQ groups compute them) as the exact integer sum converted to float once, then
// multiplied and rounded, which is what the int8 kernel computes as long as its int32 sums do
// not overflow. So the chain is rewritten there too, for int8 weights (within [-128, 127])
// where (255 + |x_zp| + 128) * sum|w| + |b| < 2^31 per column: that bounds every int32 the
// kernels form (the raw u8s8 tile sums, at most 255 * sum|w|; the zero point / int8-shift
// offsets (x_zp + 128) * colsum(w); the exact sum; plus b). The result is then bit-identical
// to ONNX Runtime's QLinear kernels and differs from the float graph only where the float
// graph's own rounding error moves a value across a rounding boundary: one quantization step
// (tests/python/test_qdq_wide_products.py counts them). Chains outside both bounds, or of any
// other form, are left to the float kernels.
//
// Where ONNX Runtime's u8s8 kernels saturate pairs of products (x86 without VNNI), the importer
// adds its emulation of that to a matmul's product (python/webnn/onnx/ops/ort_u8s8.py):
// add(matmul, correction) before the multiplier. The chain is then taken with the correction's
// nodes left unread, and the fused node marked u8s8_saturating: the cpu kernel sums on the
// pair-saturating tiles, whose int32 sums are the exact product plus the correction (the
// recogniser checks its tables are exactly the weights' saturating pairs). The same for a
// convolution's correction (a conv2d by one filter per pair): the kernel's im2col rows then
// follow ORT's reduction order. A 1-D convolution (conv2d of [N, C, 1, W] between reshapes,
// its filter a reshape of the constant before folding) is taken too, the fused node between
// reshapes of the integer values.
#include <cmath>
#include <cstring>
#include <limits>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"
#include "graph/passes/u8s8_correction.h"

namespace webnn {

namespace {

constexpr double kExactFloatInt = 16777216.0;  // 2^24: float32 holds every integer below it
constexpr double kInt32Bound = 2147483648.0;   // 2^31

bool static_const(const Graph& g, OperandId id, DataType t) {
  return id >= 0 && is_constant(g, id) && g.desc(id).data_type == t &&
         is_static_shape(g.desc(id).shape);
}

std::vector<float> floats(const Graph& g, OperandId id) {
  const ConstantData& c = *g.operands[id].constant;
  std::vector<float> v(c.size() / sizeof(float));
  std::memcpy(v.data(), c.data(), v.size() * sizeof(float));
  return v;
}

bool integral(float v, double lo, double hi) {
  return v == std::nearbyint(v) && v >= lo && v <= hi;
}

// The producer of `id` when it is a node of `kind` whose value has no other reader.
const Node* sole_producer(const Graph& g, const std::vector<int>& uses, OperandId id, OpKind kind) {
  const int32_t p = g.operands[id].producer;
  if (p < 0 || uses[id] != 1 || is_graph_output(g, id)) return nullptr;
  const Node& n = g.nodes[p];
  if (n.kind != kind || !n.epilogue.empty() || n.quantized) return nullptr;
  return &n;
}

const Node* producer_of(const Graph& g, OperandId id, OpKind kind) {
  const int32_t p = g.operands[id].producer;
  if (p < 0 || g.nodes[p].kind != kind || !g.nodes[p].epilogue.empty()) return nullptr;
  return &g.nodes[p];
}

bool quantized_type(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

double type_lo(DataType t) { return t == DataType::kUint8 ? 0.0 : -128.0; }
double type_hi(DataType t) { return t == DataType::kUint8 ? 255.0 : 127.0; }

// A 1-D convolution (python/webnn/onnx/ops/nn.py conv_operands): conv2d of [N, C, 1, W] read
// through reshapes from [N, C, W] and to [N, O, W]. The fused node then reads a reshape of the
// integer input and its integer value is reshaped to the chain's output (both views).
struct OneD {
  bool used = false;
  Shape input4, output4;  // the conv2d's input and output shapes
};

bool drops_unit_height(const Shape& four, const Shape& three) {
  return four.size() == 4 && three.size() == 3 && four[2].value == 1 &&
         four[0].value == three[0].value && four[1].value == three[1].value &&
         four[3].value == three[2].value;
}

// The conv2d or matmul whose value `id` is (through a 1-D convolution's reshape: *one_d set).
const Node* product_head(const Graph& g, const std::vector<int>& uses, OperandId id, OneD* one_d) {
  if (const Node* n = sole_producer(g, uses, id, OpKind::kConv2d)) return n;
  if (const Node* n = sole_producer(g, uses, id, OpKind::kMatmul)) return n;
  const Node* rs = sole_producer(g, uses, id, OpKind::kReshape);
  if (!rs) return nullptr;
  const OperandId v = rs->as<NewShapeParams>().input.id;
  const Node* conv = sole_producer(g, uses, v, OpKind::kConv2d);
  if (!conv || conv->as<Conv2dParams>().input_layout != "nchw" ||
      !drops_unit_height(g.desc(v).shape, g.desc(id).shape)) {
    return nullptr;
  }
  one_d->used = true;
  one_d->output4 = g.desc(v).shape;
  return conv;
}

// The rewrite of the chain ending at quantizeLinear node `q`, or false.
bool match(const Graph& g, const std::vector<int>& uses, const Node& q, Node* fused,
           std::vector<int32_t>* dead, OneD* one_d) {
  const auto& qp = q.as<QuantizeParams>();
  const DataType yt = g.desc(q.outputs[0]).data_type;
  if (!quantized_type(yt) || !qp.zero_point.present()) return false;
  if (!static_const(g, qp.scale.id, DataType::kFloat32) || !static_const(g, qp.zero_point.id, yt)) {
    return false;
  }
  for (float s : floats(g, qp.scale.id)) {
    if (s != 1.0f) return false;
  }
  const ConstantData& yzp = *g.operands[qp.zero_point.id].constant;
  if (yzp.size() != 1) return false;
  const int32_t y_zp =
      yt == DataType::kUint8 ? int32_t{yzp.data()[0]} : int32_t{static_cast<int8_t>(yzp.data()[0])};

  const Node* mul = sole_producer(g, uses, qp.input.id, OpKind::kMul);
  if (!mul) return false;
  const auto& mp = mul->as<BinaryParams>();
  const bool m_is_b = static_const(g, mp.b.id, DataType::kFloat32);
  const OperandId m_id = m_is_b ? mp.b.id : mp.a.id;
  const OperandId acc = m_is_b ? mp.a.id : mp.b.id;
  if (!static_const(g, m_id, DataType::kFloat32) || acc == m_id) return false;
  const Node* head = product_head(g, uses, acc, one_d);
  // Or add(product, the importer's emulation of ORT's u8s8 pair saturation): the fused node
  // then sums on the pair-saturating tiles, which compute the same (u8s8_correction.h).
  OperandId fix = -1;
  if (const Node* add = head ? nullptr : sole_producer(g, uses, acc, OpKind::kAdd)) {
    const auto& ap = add->as<BinaryParams>();
    if ((head = product_head(g, uses, ap.a.id, one_d))) {
      fix = ap.b.id;
    } else if ((head = product_head(g, uses, ap.b.id, one_d))) {
      fix = ap.a.id;
    }
  }
  if (!head) return false;
  // The correction has the product's shape (an add that broadcasts is something else).
  if (fix >= 0 && !(g.desc(fix).shape == g.desc(acc).shape)) return false;
  const bool is_conv = head->kind == OpKind::kConv2d;
  // matmul: x (..., K) times a constant (K, N); its columns are the output channels.
  Conv2dParams cp;
  if (is_conv) {
    cp = head->as<Conv2dParams>();
  } else {
    cp.input = head->as<BinaryParams>().a;
    cp.filter = head->as<BinaryParams>().b;
    cp.filter_layout = "io";
  }
  const OperandDesc& yd = g.desc(acc);  // the chain's value (3-D for a 1-D convolution)
  const size_t rank = yd.shape.size();
  if ((is_conv ? rank != (one_d->used ? 3u : 4u) : rank < 2) || !is_static_shape(yd.shape) ||
      yd.data_type != DataType::kFloat32)
    return false;
  if (is_conv && cp.input_layout != "nchw" && cp.input_layout != "nhwc") return false;
  if (!(g.desc(q.outputs[0]).shape == yd.shape)) return false;
  const size_t c_axis = !is_conv ? rank - 1 : cp.input_layout == "nhwc" ? 3 : 1;
  const int64_t out_c = static_sizes(yd.shape)[c_axis];

  // The multiplier: one value, or one per output channel along the channel axis.
  const std::vector<int64_t> ms = static_sizes(g.desc(m_id).shape);
  if (ms.size() > rank) return false;
  std::vector<float> mult = floats(g, m_id);
  if (mult.size() != 1) {
    if (ms.size() != rank || static_cast<int64_t>(mult.size()) != out_c || ms[c_axis] != out_c)
      return false;
  }
  for (float m : mult) {
    if (!std::isfinite(m)) return false;
  }

  // The input: cast(x_q) or cast(x_q) - x_zp (reshaped to [N, C, 1, W] for a 1-D conv).
  OperandId shifted = cp.input.id;
  if (one_d->used) {
    const Node* rs = producer_of(g, shifted, OpKind::kReshape);
    if (!rs || !drops_unit_height(g.desc(shifted).shape,
                                  g.desc(rs->as<NewShapeParams>().input.id).shape)) {
      return false;
    }
    one_d->input4 = g.desc(shifted).shape;
    shifted = rs->as<NewShapeParams>().input.id;
  }
  int32_t x_zp = 0;
  if (const Node* sub = producer_of(g, shifted, OpKind::kSub)) {
    const auto& sp = sub->as<BinaryParams>();
    if (!static_const(g, sp.b.id, DataType::kFloat32)) return false;
    std::vector<float> z = floats(g, sp.b.id);
    if (z.size() != 1 || !integral(z[0], -255, 255)) return false;
    x_zp = static_cast<int32_t>(z[0]);
    shifted = sp.a.id;
  }
  const Node* cast = producer_of(g, shifted, OpKind::kCast);
  if (!cast) return false;
  const OperandId xq = cast->as<CastParams>().input.id;
  const DataType xt = g.desc(xq).data_type;
  if (!quantized_type(xt) || cast->as<CastParams>().data_type != DataType::kFloat32) return false;
  const double max_dx = std::max(std::fabs(type_lo(xt) - x_zp), std::fabs(type_hi(xt) - x_zp));

  // Filter and bias: integers (weights minus their zero point: int8, or uint8 weights the
  // quantizer treated as activations) within the exactness bound.
  const OperandId filter = constant_or_its_reshape(g, cp.filter.id);
  if (filter < 0 || !static_const(g, filter, DataType::kFloat32) ||
      !is_static_shape(g.desc(cp.filter.id).shape) ||
      g.desc(cp.filter.id).shape.size() != cp.filter_layout.size()) {
    return false;
  }
  const std::vector<float> w = floats(g, filter);
  std::vector<float> b;
  if (cp.bias.present()) {
    if (!static_const(g, cp.bias.id, DataType::kFloat32)) return false;
    b = floats(g, cp.bias.id);
    if (static_cast<int64_t>(b.size()) != out_c) return false;
  }
  const size_t o_axis = cp.filter_layout.find('o');
  if (o_axis == std::string::npos) return false;
  const std::vector<int64_t> fs = static_sizes(g.desc(cp.filter.id).shape);
  if (fs[o_axis] != out_c) return false;
  int64_t o_stride = 1;
  for (size_t a = o_axis + 1; a < fs.size(); ++a) o_stride *= fs[a];
  std::vector<double> abs_sum(static_cast<size_t>(out_c), 0.0);
  bool int8_weights = true;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!integral(w[i], -255, 255)) return false;
    int8_weights = int8_weights && w[i] >= -128.0f && w[i] <= 127.0f;
    abs_sum[static_cast<size_t>(i / o_stride % out_c)] += std::fabs(w[i]);
  }
  if (fix >= 0) {
    // ORT's u8s8 kernels multiply raw uint8 x (int8 x shifted by 128) by the raw int8 weights.
    const int32_t raw_zero = x_zp + (xt == DataType::kInt8 ? 128 : 0);
    if (!int8_weights) return false;
    if (is_conv ? cp.groups == out_c || cp.filter_layout != "oihw" ||
                      !is_u8s8_conv_correction(g, fix, *head, w.data(), raw_zero)
                : !is_u8s8_matmul_correction(g, fix, xq, w.data(), fs[0], out_c)) {
      return false;
    }
  }
  for (int64_t o = 0; o < out_c; ++o) {
    const double bias = b.empty() ? 0.0 : b[o];
    if (!b.empty() && !integral(b[o], -kExactFloatInt, kExactFloatInt)) return false;
    if (max_dx * abs_sum[o] + std::fabs(bias) < kExactFloatInt) continue;  // bit-identical
    // Past 2^24 (see the header): int8 weights, every int32 the kernels form in range.
    const double widest = (255.0 + std::fabs(static_cast<double>(x_zp)) + 128.0) * abs_sum[o];
    if (!int8_weights || widest + std::fabs(bias) >= kInt32Bound) return false;
  }

  *fused = *head;
  if (is_conv) {
    std::get<Conv2dParams>(fused->params).input = OperandRef{xq};
  } else {
    std::get<BinaryParams>(fused->params).a = OperandRef{xq};
  }
  fused->outputs = q.outputs;  // fuse_qdq gives a 1-D convolution's its 4-D views
  auto form = std::make_shared<Node::Quantized>();
  form->input_zero_point = x_zp;
  form->multiplier = std::move(mult);
  form->output_zero_point = y_zp;
  form->requant_signed = yt == DataType::kInt8;
  form->u8s8_saturating = fix >= 0;
  fused->quantized = std::move(form);
  dead->push_back(g.operands[head->outputs[0]].producer);
  for (OperandId v = acc; g.operands[v].producer != g.operands[head->outputs[0]].producer;) {
    // The add of the correction, the output reshape (the correction's nodes die unread).
    const Node& n = g.nodes[g.operands[v].producer];
    dead->push_back(g.operands[v].producer);
    v = n.kind == OpKind::kAdd ? (fix == n.as<BinaryParams>().a.id ? n.as<BinaryParams>().b.id
                                                                   : n.as<BinaryParams>().a.id)
                               : n.as<NewShapeParams>().input.id;
  }
  dead->push_back(g.operands[qp.input.id].producer);
  return true;
}

}  // namespace

Expected<int64_t> fuse_qdq(Graph& graph) {
  for (const Operand& op : graph.operands) {
    // Plans of graphs with dynamic sizes re-infer every node, which a conv2d reading integers
    // would fail; those graphs keep the float form.
    if (!is_static_shape(op.desc.shape)) return int64_t{0};
  }
  const std::vector<int> uses = use_counts(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  std::vector<Node> views;  // 1-D convolutions' reshapes, placed by sort_topologically
  int64_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& q = graph.nodes[i];
    if (q.kind != OpKind::kQuantizeLinear || !q.epilogue.empty()) continue;
    Node node{OpKind::kConv2d, "", {}, {}, {}, nullptr};
    std::vector<int32_t> chain;
    OneD one_d;
    if (!match(graph, uses, q, &node, &chain, &one_d)) continue;
    if (one_d.used) {
      // reshape(x_q) -> the fused conv2d -> reshape to the chain's output.
      auto& cp = std::get<Conv2dParams>(node.params);
      OperandDesc in4 = graph.desc(cp.input.id), out4 = graph.desc(node.outputs[0]);
      in4.shape = one_d.input4;
      out4.shape = one_d.output4;
      const OperandId x4 = add_value(graph, in4), y4 = add_value(graph, out4);
      Node in{OpKind::kReshape, "", NewShapeParams{cp.input, in4.shape}, {x4}, {}, nullptr};
      Node out{
          OpKind::kReshape, "", NewShapeParams{OperandRef{y4}, graph.desc(node.outputs[0]).shape},
          node.outputs,     {}, nullptr};
      cp.input = OperandRef{x4};
      node.outputs = {y4};
      views.push_back(std::move(in));
      views.push_back(std::move(out));
    }
    graph.nodes[i] = std::move(node);
    for (int32_t n : chain) dead[n] = true;
    ++fused;
  }
  if (!fused) return int64_t{0};
  erase_nodes(graph, dead);
  if (!views.empty()) {
    for (Node& n : views) graph.nodes.push_back(std::move(n));
    renumber_producers(graph);
    if (!sort_topologically(graph)) return make_error(ErrorKind::kInternal, "qdq_fusion: cycle");
  }
  return fused;
}

}  // namespace webnn
