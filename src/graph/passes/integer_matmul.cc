// Integer matmul, for the cpu backend: a float32 matmul of cast((u)int8 x) by a constant (K, N)
// matrix of integers runs on the int8 GEMM and writes float32.
//
// Dynamically quantized models (ONNX Runtime's quantize_dynamic: DynamicQuantizeLSTM,
// MatMulInteger) import as matmul(cast(x_q -> float32), w) with w a float32 constant holding
// the weights minus their zero point (python/webnn/onnx/ops/quantized_recurrent.py); x_q is
// quantized at run time, its zero point subtracted after the product. This pass points such a
// matmul at x_q itself and marks it Node::Quantized with float_output: the cpu backend
// (cpu/qconv.cc) sums x_q * w in int32 on the int16 GEMM micro-kernels (half the weight bytes
// of float32, twice the products per instruction) and stores float(sum); element-wise steps
// after it fuse as after any matmul.
//
// Where the importer added ONNX Runtime's u8s8 saturation correction to such a product
// (ort_u8s8.py: add(product, correction(cast(x), w)), its tables exactly w's pairs that can
// saturate, x uint8, w raw int8), the correction's nodes are dropped and the matmul marked
// u8s8_saturating: its int32 sum is then ORT's own pair-saturating one (vpmaddubsw on AVX2),
// which is the exact product plus the correction. The float values match: the graph forms
// (float(A) - B) + C, the kernel float(A + C) - B, with A + C an int32 below 2^24 in magnitude
// (|sat(p)| <= |p|) and A, B, C exact floats; one rounding of the same real sum each.
//
// The input may also be cast(x) - x_zp with x_zp a constant scalar integer in x's range
// (MatMulInteger's shifted form); the node then carries input_zero_point and the kernel
// subtracts x_zp * colsum(w) from its exact int32 sums.
//
// Why the result equals the float graph's: every term (x - x_zp) * w is an integer, and the
// pass rewrites when, for every column, max|x - x_zp| * sum|w| < 2^24 (max|x| is 255 for
// uint8, 128 for int8, without a zero point), so every partial sum the float32 GEMM forms, in
// any order, is an integer below 2^24 and therefore exact: the float matmul yields exactly the
// int32 sum, and float(sum) is that same float (a zero sum is +0 on both: the float GEMM's
// accumulators start at +0).
//
// Past 2^24 the float graph's partial sums round (in its kernel's order), so it no longer
// computes the integer product it states. Where that product is ONNX's integer one - the
// matmul's only readers are casts to int32 (MatMulInteger) - and the weights are int8, the
// rewrite is also made while (255 + |x_zp| + 128) * sum|w| < 2^31 per column (every int32 the
// kernels form: raw u8s8 tile sums, the (x_zp + 128) * colsum offsets, the exact sum): the
// output is then float32(exact sum), the correctly rounded value, at least as close to ONNX's
// result as the float graph's (tests/python/test_qdq_wide_products.py). Matmuls outside these
// bounds, or of any other form, are left to the float kernels. (Requantized products past 2^24,
// QLinearMatMul / QDQ, are qdq_fusion.cc's.)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"
#include "graph/passes/u8s8_correction.h"

namespace webnn {

namespace {

constexpr double kExactFloatInt = 16777216.0;  // 2^24: float32 holds every integer below it
constexpr double kInt32Bound = 2147483648.0;   // 2^31
// Fewer rows stay float unless ORT's saturation correction is absorbed (see
// fuse_integer_matmuls): an LSTM step's 2 x 256 x 1024 product measured faster in isolation on
// the int16 GEMM but slower inside tashkeel's unrolled LSTM (85 vs 73 us per step, 1 thread,
// interleaved; the model as a whole 3.3x vs 3.0x ORT), while its 48-row input products gain
// (2.3 -> 2.0 and 1.7 -> 0.6 ms): with 16 rows the model measured 2.77x ORT (2 runs).
constexpr int64_t kMinRows = 16;

// The rows of a matmul's output (every axis but the last).
int64_t rows_of(const Graph& g, const Node& mm) {
  const OperandDesc& yd = g.desc(mm.outputs[0]);
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < yd.shape.size(); ++i) rows *= yd.shape[i].value;
  return rows;
}

// The (u)int8 x and zero point z when `id` is cast(x -> float32), or cast(x) - z with z a
// constant float32 scalar holding an integer in x's range (QLinearMatMul's and MatMulInteger's
// shifted input, ops/quantization.py shifted_float); x is -1 otherwise.
std::pair<OperandId, int32_t> shifted_source(const Graph& g, OperandId id) {
  if (const OperandId x = u8s8_cast_source(g, id); x >= 0) return {x, 0};
  const int32_t p = g.operands[id].producer;
  if (p < 0) return {-1, 0};
  const Node& n = g.nodes[p];
  if (n.kind != OpKind::kSub || !n.epilogue.empty() || n.quantized) return {-1, 0};
  const auto& sp = n.as<BinaryParams>();
  const OperandId x = u8s8_cast_source(g, sp.a.id);
  if (x < 0 || !is_constant(g, sp.b.id) || g.desc(sp.b.id).data_type != DataType::kFloat32) {
    return {-1, 0};
  }
  const ConstantData& c = *g.operands[sp.b.id].constant;
  if (c.size() != sizeof(float)) return {-1, 0};
  float z;
  std::memcpy(&z, c.data(), sizeof z);
  const bool is_u8 = g.desc(x).data_type == DataType::kUint8;
  if (z != std::nearbyint(z) || z < (is_u8 ? 0.0f : -128.0f) || z > (is_u8 ? 255.0f : 127.0f)) {
    return {-1, 0};
  }
  return {x, static_cast<int32_t>(z)};
}

// Whether the matmul's value is read only by a cast to int32 (ONNX MatMulInteger's output):
// the value is meant to be the exact integer product.
bool integer_product(const Graph& g, const Node& mm) {
  const OperandId y = mm.outputs[0];
  if (is_graph_output(g, y)) return false;
  int readers = 0;
  bool cast = true;
  for (const Node& n : g.nodes) {
    const std::vector<OperandId> reads = node_reads(g, n);
    const auto count = std::count(reads.begin(), reads.end(), y);
    if (count == 0) continue;
    readers += static_cast<int>(count);
    cast = cast && n.kind == OpKind::kCast && n.epilogue.empty() && !n.quantized &&
           n.as<CastParams>().data_type == DataType::kInt32;
  }
  return readers > 0 && cast;
}

bool rewrite(Graph& g, Node& mm, int64_t min_rows) {
  const auto& p = mm.as<BinaryParams>();
  const OperandDesc& yd = g.desc(mm.outputs[0]);
  if (yd.data_type != DataType::kFloat32 || yd.shape.size() < 2) return false;
  const auto [x, x_zp] = shifted_source(g, p.a.id);
  if (x < 0) return false;
  if (rows_of(g, mm) < min_rows) return false;
  const OperandDesc& bd = g.desc(p.b.id);
  if (!is_constant(g, p.b.id) || bd.data_type != DataType::kFloat32 || bd.shape.size() != 2) {
    return false;
  }
  const int64_t k = bd.shape[0].value, n = bd.shape[1].value;
  const ConstantData& c = *g.operands[p.b.id].constant;
  if (static_cast<int64_t>(c.size()) != k * n * static_cast<int64_t>(sizeof(float))) return false;
  std::vector<float> w(static_cast<size_t>(k * n));
  std::memcpy(w.data(), c.data(), c.size());
  const bool is_u8 = g.desc(x).data_type == DataType::kUint8;
  const double lo = is_u8 ? 0.0 : -128.0, hi = is_u8 ? 255.0 : 127.0;
  const double max_dx = std::max(std::fabs(lo - x_zp), std::fabs(hi - x_zp));
  std::vector<double> abs_sum(static_cast<size_t>(n), 0.0);
  bool int8_weights = true;
  for (size_t i = 0; i < w.size(); ++i) {
    const float v = w[i];
    if (v != std::nearbyint(v) || v < -255.0f || v > 255.0f) return false;
    int8_weights = int8_weights && v >= -128.0f && v <= 127.0f;
    abs_sum[i % static_cast<size_t>(n)] += std::fabs(v);
  }
  int wide = -1;  // whether a column passes 2^24 (integer_product() asked once)
  for (double s : abs_sum) {
    if (max_dx * s < kExactFloatInt) continue;
    // Past 2^24 (see the header): only an integer product, int32 sums in range.
    if (wide < 0) wide = int8_weights && integer_product(g, mm) ? 1 : 0;
    if (!wide || (255.0 + std::abs(x_zp) + 128.0) * s >= kInt32Bound) return false;
  }
  std::get<BinaryParams>(mm.params).a = OperandRef{x};
  auto form = std::make_shared<Node::Quantized>();
  form->input_zero_point = x_zp;
  form->multiplier = {1.0f};
  form->float_output = true;
  mm.quantized = std::move(form);
  return true;
}

// The nodes reading each operand (epilogues included).
std::vector<std::vector<int>> readers(const Graph& g) {
  std::vector<std::vector<int>> out(g.operands.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (OperandId id : node_reads(g, g.nodes[i])) out[id].push_back(static_cast<int>(i));
  }
  return out;
}

// After rewrite(): where the matmul's value reaches add(., correction) alone (through the
// zero point's sub, if any), that add's readers read its other operand and the matmul computes
// the saturating sum.
void absorb_correction(Graph& g, Node& mm) {
  const auto& p = mm.as<BinaryParams>();
  const OperandId x = p.a.id;
  // The pair-saturating tiles take the raw x only (no zero point folded into the node).
  if (g.desc(x).data_type != DataType::kUint8 || mm.quantized->input_zero_point != 0) return;
  const OperandDesc& bd = g.desc(p.b.id);
  const int64_t k = bd.shape[0].value, n = bd.shape[1].value;
  const std::vector<float> w = float32_values(g, p.b.id);
  for (float v : w) {
    if (v < -128.0f || v > 127.0f) return;
  }
  const std::vector<std::vector<int>> rd = readers(g);
  const std::vector<int> uses = use_counts(g);
  OperandId value = mm.outputs[0];
  auto sole_reader = [&](OperandId id) -> Node* {
    if (uses[id] != 1 || rd[id].size() != 1) return nullptr;
    Node& r = g.nodes[rd[id][0]];
    return r.epilogue.empty() && !r.quantized && r.outputs.size() == 1 ? &r : nullptr;
  };
  Node* next = sole_reader(value);
  if (next && next->kind == OpKind::kSub && next->as<BinaryParams>().a.id == value &&
      next->as<BinaryParams>().b.id != value) {
    value = next->outputs[0];
    next = sole_reader(value);
  }
  if (!next || next->kind != OpKind::kAdd) return;
  const auto& ap = next->as<BinaryParams>();
  const OperandId fix = ap.a.id == value ? ap.b.id : ap.a.id;
  if ((ap.a.id != value && ap.b.id != value) || fix == value) return;
  if (g.desc(fix).shape != g.desc(value).shape ||
      g.desc(value).shape != g.desc(next->outputs[0]).shape) {
    return;
  }
  if (!is_u8s8_matmul_correction(g, fix, x, w.data(), k, n)) return;
  auto form = std::make_shared<Node::Quantized>(*mm.quantized);
  form->u8s8_saturating = true;
  mm.quantized = std::move(form);
  replace_uses(g, next->outputs[0], value);  // the correction's nodes are dead now
}

}  // namespace

Expected<int64_t> fuse_integer_matmuls(Graph& graph) {
  for (const Operand& op : graph.operands) {
    // Plans of graphs with dynamic sizes re-infer every node, which a matmul reading integers
    // would fail; those graphs keep the float form.
    if (!is_static_shape(op.desc.shape)) return int64_t{0};
  }
  int64_t rewritten = 0;
  for (Node& node : graph.nodes) {
    if (node.kind != OpKind::kMatmul || node.quantized || !node.epilogue.empty()) continue;
    // Fewer rows than kMinRows are taken only where the saturation correction is absorbed:
    // its gathers, clamps and sums cost more than the product of a few rows.
    const OperandRef a = node.as<BinaryParams>().a;
    if (!rewrite(graph, node, 1)) continue;
    absorb_correction(graph, node);
    if (!node.quantized->u8s8_saturating && rows_of(graph, node) < kMinRows) {
      std::get<BinaryParams>(node.params).a = a;  // back to the float matmul
      node.quantized = nullptr;
      continue;
    }
    ++rewritten;
  }
  return rewritten;
}

}  // namespace webnn
