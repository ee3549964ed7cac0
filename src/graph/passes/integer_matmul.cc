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
// Why the result equals the float graph's: every term x * w is an integer, and the pass only
// rewrites when, for every column, max|x| * sum|w| < 2^24 (max|x| is 255 for uint8, 128 for
// int8), so every partial sum the float32 GEMM forms, in any order, is an integer below 2^24
// and therefore exact: the float matmul yields exactly the int32 sum, and float(sum) is that
// same float (a zero sum is +0 on both: the float GEMM's accumulators start at +0). Matmuls
// outside the bound, or of any other form, are left to the float kernels.
#include <cmath>
#include <cstring>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

constexpr double kExactFloatInt = 16777216.0;  // 2^24: float32 holds every integer below it
// Fewer rows stay float: an LSTM step's 2 x 256 x 1024 product measured faster in isolation on
// the int16 GEMM but slower inside tashkeel's unrolled LSTM (85 vs 73 us per step, 1 thread,
// interleaved; the model as a whole 3.3x vs 3.0x ORT), while its 48-row input products gain
// (2.3 -> 2.0 and 1.7 -> 0.6 ms): with 16 rows the model measured 2.77x ORT (2 runs).
constexpr int64_t kMinRows = 16;

// The (u)int8 operand x when `id` is cast(x -> float32), else -1.
OperandId cast_source(const Graph& g, OperandId id) {
  const int32_t p = g.operands[id].producer;
  if (p < 0) return -1;
  const Node& n = g.nodes[p];
  if (n.kind != OpKind::kCast || !n.epilogue.empty() || n.quantized) return -1;
  const auto& cp = n.as<CastParams>();
  const DataType t = g.desc(cp.input.id).data_type;
  if (cp.data_type != DataType::kFloat32) return -1;
  return t == DataType::kUint8 || t == DataType::kInt8 ? cp.input.id : -1;
}

bool rewrite(Graph& g, Node& mm) {
  const auto& p = mm.as<BinaryParams>();
  const OperandDesc& yd = g.desc(mm.outputs[0]);
  if (yd.data_type != DataType::kFloat32 || yd.shape.size() < 2) return false;
  const OperandId x = cast_source(g, p.a.id);
  if (x < 0) return false;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < yd.shape.size(); ++i) rows *= yd.shape[i].value;
  if (rows < kMinRows) return false;
  const OperandDesc& bd = g.desc(p.b.id);
  if (!is_constant(g, p.b.id) || bd.data_type != DataType::kFloat32 || bd.shape.size() != 2) {
    return false;
  }
  const int64_t k = bd.shape[0].value, n = bd.shape[1].value;
  const ConstantData& c = *g.operands[p.b.id].constant;
  if (static_cast<int64_t>(c.size()) != k * n * static_cast<int64_t>(sizeof(float))) return false;
  std::vector<float> w(static_cast<size_t>(k * n));
  std::memcpy(w.data(), c.data(), c.size());
  const double max_x = g.desc(x).data_type == DataType::kUint8 ? 255.0 : 128.0;
  std::vector<double> abs_sum(static_cast<size_t>(n), 0.0);
  for (size_t i = 0; i < w.size(); ++i) {
    const float v = w[i];
    if (v != std::nearbyint(v) || v < -255.0f || v > 255.0f) return false;
    abs_sum[i % static_cast<size_t>(n)] += std::fabs(v);
  }
  for (double s : abs_sum) {
    if (max_x * s >= kExactFloatInt) return false;
  }
  std::get<BinaryParams>(mm.params).a = OperandRef{x};
  auto form = std::make_shared<Node::Quantized>();
  form->multiplier = {1.0f};
  form->float_output = true;
  mm.quantized = std::move(form);
  return true;
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
    if (rewrite(graph, node)) ++rewritten;
  }
  return rewritten;
}

}  // namespace webnn
