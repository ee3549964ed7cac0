// Broadcasting and the element-wise families' Infer (spec/ops.md §1.4, 3.1–3.4).
#include <gtest/gtest.h>

#include "webnn/builder.h"

namespace webnn {
namespace {

Expected<OperandDesc> binary(OpKind kind, const Shape& a, const Shape& b,
                             DataType t = DataType::kFloat32) {
  GraphBuilder builder;
  OperandId x = *builder.input("a", a, t);
  OperandId y = *builder.input("b", b, t);
  auto out = builder.add_op(kind, BinaryParams{OperandRef{x}, OperandRef{y}});
  if (!out) return out.status();
  return *builder.operand_desc((*out)[0]);
}

TEST(BroadcastTest, Bidirectional) {
  EXPECT_EQ(binary(OpKind::kAdd, {2, 1, 4}, {3, 1})->shape, Shape({2, 3, 4}));
  EXPECT_EQ(binary(OpKind::kAdd, {}, {5})->shape, Shape{Dim(5)});  // Shape({5}): 5 dims
  EXPECT_EQ(binary(OpKind::kMul, {1}, {1})->shape, Shape{Dim(1)});
  auto bad = binary(OpKind::kSub, {2, 3}, {4});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("not broadcastable"), std::string::npos);
}

TEST(BroadcastTest, DynamicDimensions) {
  Dim n("n", 8), m("m", 8);
  EXPECT_EQ(binary(OpKind::kAdd, {n, 3}, {n, 1})->shape, Shape({n, 3}));
  EXPECT_EQ(binary(OpKind::kAdd, {n, 3}, {3})->shape, Shape({n, 3}));
  EXPECT_EQ(binary(OpKind::kAdd, {1, 3}, {n, 1})->shape, Shape({n, 3}));
  EXPECT_FALSE(binary(OpKind::kAdd, {n}, {m}).has_value());  // different names
  EXPECT_FALSE(binary(OpKind::kAdd, {n}, {8}).has_value());  // (D, s) with s != 1
}

TEST(ElementwiseInferTest, PredicatesProduceUint8) {
  EXPECT_EQ(binary(OpKind::kGreater, {2}, {2})->data_type, DataType::kUint8);
  EXPECT_EQ(binary(OpKind::kLogicalAnd, {2}, {2}, DataType::kUint8)->data_type, DataType::kUint8);
  EXPECT_FALSE(binary(OpKind::kLogicalAnd, {2}, {2}, DataType::kFloat32).has_value());
}

TEST(ElementwiseInferTest, TypeRules) {
  GraphBuilder b;
  OperandId f = *b.input("f", {2}, DataType::kFloat32);
  OperandId h = *b.input("h", {2}, DataType::kFloat16);
  OperandId u = *b.input("u", {2}, DataType::kUint32);
  OperandId q = *b.input("q", {2}, DataType::kInt4);
  EXPECT_FALSE(b.add_op(OpKind::kAdd, BinaryParams{{f}, {h}}).has_value());
  EXPECT_FALSE(b.add_op(OpKind::kAbs, UnaryParams{{u}}).has_value());  // signed only
  EXPECT_FALSE(b.add_op(OpKind::kExp, UnaryParams{{u}}).has_value());
  EXPECT_FALSE(b.add_op(OpKind::kAdd, BinaryParams{{q}, {q}}).has_value());
  EXPECT_TRUE(b.add_op(OpKind::kIdentity, UnaryParams{{q}}).has_value());
  EXPECT_TRUE(b.add_op(OpKind::kPow, BinaryParams{{u}, {u}}).has_value());
}

TEST(ElementwiseInferTest, ClampBoundsAndSoftmaxAxis) {
  GraphBuilder b;
  OperandId x = *b.input("x", {2, 3}, DataType::kFloat32);
  ClampParams bad{{x}, Scalar::from_double(2), Scalar::from_double(1)};
  auto r = b.add_op(OpKind::kClamp, bad, "c");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("clamp 'c': min_value"), std::string::npos);
  EXPECT_TRUE(
      b.add_op(OpKind::kClamp, ClampParams{{x}, Scalar::from_int(1), Scalar::from_uint(1ULL << 63)})
          .has_value());
  EXPECT_TRUE(b.add_op(OpKind::kSoftmax, SoftmaxParams{{x}, 1}).has_value());
  EXPECT_FALSE(b.add_op(OpKind::kSoftmax, SoftmaxParams{{x}, 2}).has_value());
  OperandId s = *b.input("s", {}, DataType::kFloat32);
  EXPECT_FALSE(b.add_op(OpKind::kSoftmax, SoftmaxParams{{s}, 0}).has_value());
}

TEST(ElementwiseInferTest, PreluBroadcastsSlopeToInput) {
  GraphBuilder b;
  OperandId x = *b.input("x", {2, 3}, DataType::kFloat32);
  OperandId slope = *b.input("slope", {3}, DataType::kFloat32);
  auto out = b.add_op(OpKind::kPrelu, PreluParams{{x}, {slope}});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(b.operand_desc((*out)[0])->shape, Shape({2, 3}));
}

}  // namespace
}  // namespace webnn
