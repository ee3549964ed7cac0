// The float16_promotion pass (src/graph/passes/float16_promotion.cc): the structure of the
// rewritten graph — which values become float32, where the edge casts go, which casts stay —
// and the WEBNN_FLOAT16 modes. Its numerics are tested from Python against the float16
// reference (tests/python/test_float16_promotion.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "graph/passes/pass.h"
#include "webnn/builder.h"

namespace webnn {
namespace {

constexpr DataType kF16 = DataType::kFloat16;
constexpr DataType kF32 = DataType::kFloat32;

OperandId op(GraphBuilder& b, OpKind kind, OpParams params) {
  auto out = b.add_op(kind, std::move(params));
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return (*out)[0];
}

OperandId half_constant(GraphBuilder& b, const Shape& shape, const std::vector<float>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float16));
  for (size_t i = 0; i < v.size(); ++i) {
    const float16 h = static_cast<float16>(v[i]);
    std::memcpy(bytes.data() + i * sizeof h, &h, sizeof h);
  }
  return *b.constant({kF16, shape}, bytes);
}

int count_casts_to(const Graph& g, DataType t) {
  int n = 0;
  for (const Node& node : g.nodes) {
    n += node.kind == OpKind::kCast && node.as<CastParams>().data_type == t;
  }
  return n;
}

const Node* first_of(const Graph& g, OpKind kind) {
  for (const Node& node : g.nodes) {
    if (node.kind == kind) return &node;
  }
  return nullptr;
}

// Runs the pass under WEBNN_FLOAT16=`mode` (nullptr: unset, the default "auto").
Expected<int64_t> promote(Graph& g, const char* mode) {
  if (mode) setenv("WEBNN_FLOAT16", mode, 1);
  auto r = promote_float16(g);
  unsetenv("WEBNN_FLOAT16");
  return r;
}

// x:f16[4] -> mul(w) -> add(b) -> relu -> y:f16[4]; z = exp(cast(y, float32)).
Graph half_chain() {
  GraphBuilder b;
  OperandId x = *b.input("x", {4}, kF16);
  OperandId w = half_constant(b, {4}, {0.5f, -1.0f, 2.0f, 0.25f});
  OperandId c = half_constant(b, {4}, {1.0f, 1.0f, -3.0f, 0.0f});
  OperandId y = op(b, OpKind::kMul, BinaryParams{{x}, {w}});
  y = op(b, OpKind::kAdd, BinaryParams{{y}, {c}});
  y = op(b, OpKind::kRelu, UnaryParams{{y}});
  OperandId z = op(b, OpKind::kCast, CastParams{{y}, kF32});
  z = op(b, OpKind::kExp, UnaryParams{{z}});
  return *b.finish({{"y", y}, {"z", z}});
}

TEST(Float16PromotionTest, IntermediatesAndConstantsBecomeFloat32AndEdgesKeepFloat16) {
  Graph g = half_chain();
  const OperandId x = g.inputs[0];
  const OperandId y = g.outputs[0].id;
  ASSERT_EQ(*promote(g, nullptr), 4);  // mul, add, relu and the cast of a float16 value
  // The API sees the graph as built: same input and output ids, float16 descriptors.
  EXPECT_EQ(g.inputs[0], x);
  EXPECT_EQ(g.desc(x).data_type, kF16);
  EXPECT_EQ(g.outputs[0].id, y);
  EXPECT_EQ(g.desc(y).data_type, kF16);
  EXPECT_EQ(g.desc(g.outputs[1].id).data_type, kF32);
  // One widening cast at entry, one rounding cast at the float16 output; the graph's own
  // cast to float32 is gone (exp reads the float32 value): no cast to float32 but the entry's.
  EXPECT_EQ(count_casts_to(g, kF32), 1);
  EXPECT_EQ(count_casts_to(g, kF16), 1);
  EXPECT_EQ(g.nodes.front().kind, OpKind::kCast);
  EXPECT_EQ(g.nodes.front().as<CastParams>().input.id, x);
  // Every arithmetic node reads and writes float32 only, constants included.
  for (const Node& node : g.nodes) {
    if (node.kind == OpKind::kCast) continue;
    for (OperandId id : node.inputs()) EXPECT_EQ(g.desc(id).data_type, kF32) << node.label;
    for (OperandId id : node.outputs) EXPECT_EQ(g.desc(id).data_type, kF32) << node.label;
  }
  const Node* mul = first_of(g, OpKind::kMul);
  ASSERT_NE(mul, nullptr);
  const Operand& w = g.operands[mul->as<BinaryParams>().b.id];
  ASSERT_EQ(w.kind, OperandKind::kConstant);
  ASSERT_EQ(w.constant->size(), 4 * sizeof(float));
  float widened[4];
  std::memcpy(widened, w.constant->data(), sizeof widened);
  EXPECT_EQ(widened[1], -1.0f);
  EXPECT_EQ(widened[3], 0.25f);
}

TEST(Float16PromotionTest, CastToFloat16StillRoundsMidGraph) {
  GraphBuilder b;
  OperandId x = *b.input("x", {3}, kF32);
  OperandId h = op(b, OpKind::kCast, CastParams{{x}, kF16});
  OperandId y = op(b, OpKind::kExp, UnaryParams{{h}});
  Graph g = *b.finish({{"y", y}});
  ASSERT_GT(*promote(g, nullptr), 0);
  // The rounding cast stays and its result is widened for exp: float32 -> float16 -> float32.
  EXPECT_EQ(count_casts_to(g, kF16), 2);  // the graph's own and the output's rounding
  EXPECT_EQ(count_casts_to(g, kF32), 1);
  const Node* exp = first_of(g, OpKind::kExp);
  ASSERT_NE(exp, nullptr);
  EXPECT_EQ(g.desc(exp->as<UnaryParams>().input.id).data_type, kF32);
}

TEST(Float16PromotionTest, CoefficientsAreRoundedToFloat16) {
  GraphBuilder b;
  OperandId x = *b.input("x", {2}, kF16);
  OperandId y = op(b, OpKind::kLinear, LinearParams{{x}, 0.1, 0.3});
  y = op(b, OpKind::kRelu, UnaryParams{{y}});
  Graph g = *b.finish({{"y", y}});
  ASSERT_GT(*promote(g, nullptr), 0);
  const Node* linear = first_of(g, OpKind::kLinear);
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(linear->as<LinearParams>().alpha, static_cast<double>(static_cast<float16>(0.1)));
  EXPECT_EQ(linear->as<LinearParams>().beta, static_cast<double>(static_cast<float16>(0.3)));
  EXPECT_NE(linear->as<LinearParams>().alpha, 0.1);
}

TEST(Float16PromotionTest, ModesDecideWhichGraphsArePromoted) {
  Graph per_op = half_chain();
  EXPECT_EQ(*promote(per_op, "per_op"), 0);
  EXPECT_EQ(count_casts_to(per_op, kF16), 0);

  // One node: auto keeps its float16 kernel, promote rewrites it.
  GraphBuilder b;
  OperandId x = *b.input("x", {4}, kF16);
  Graph single = *b.finish({{"y", op(b, OpKind::kRelu, UnaryParams{{x}})}});
  Graph forced = single;
  EXPECT_EQ(*promote(single, nullptr), 0);
  EXPECT_EQ(single.nodes.size(), 1u);
  EXPECT_EQ(*promote(forced, "promote"), 1);
  EXPECT_EQ(forced.nodes.size(), 3u);  // widen, relu, round

  // Only data movement: kept, so NaN payloads pass bit for bit.
  GraphBuilder m;
  OperandId v = *m.input("x", {2, 3}, kF16);
  OperandId t = op(m, OpKind::kTranspose, TransposeParams{{v}, std::vector<int64_t>{1, 0}});
  Graph moves = *m.finish({{"y", op(m, OpKind::kReshape, NewShapeParams{{t}, Shape{6}})}});
  EXPECT_EQ(*promote(moves, nullptr), 0);

  Graph bad = half_chain();
  setenv("WEBNN_FLOAT16", "fast", 1);
  auto r = promote_float16(bad);
  unsetenv("WEBNN_FLOAT16");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("WEBNN_FLOAT16"), std::string::npos);
  EXPECT_NE(r.status().message().find("fast"), std::string::npos);
}

TEST(Float16PromotionTest, GraphsWithoutFloat16AreUntouched) {
  GraphBuilder b;
  OperandId x = *b.input("x", {4}, kF32);
  OperandId y = op(b, OpKind::kRelu, UnaryParams{{x}});
  Graph g = *b.finish({{"y", op(b, OpKind::kExp, UnaryParams{{y}})}});
  const size_t operands = g.operands.size();
  EXPECT_EQ(*promote(g, "promote"), 0);
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.operands.size(), operands);
}

}  // namespace
}  // namespace webnn
