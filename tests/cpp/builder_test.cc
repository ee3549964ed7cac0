// GraphBuilder: inputs, constants, generic limit checks, pruning at build, consumption.
#include "webnn/builder.h"

#include <gtest/gtest.h>

namespace webnn {
namespace {

TEST(BuilderTest, InputValidation) {
  GraphBuilder b;
  ASSERT_TRUE(b.input("x", {2, 3}, DataType::kFloat32).has_value());
  auto dup = b.input("x", {2}, DataType::kFloat32);
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.status().kind(), ErrorKind::kValue);
  EXPECT_NE(dup.status().message().find("duplicate"), std::string::npos);
  EXPECT_FALSE(b.input("", {2}, DataType::kFloat32).has_value());
  EXPECT_FALSE(b.input("z", {0}, DataType::kFloat32).has_value());
  EXPECT_FALSE(b.input("z", Shape(9, Dim(1)), DataType::kFloat32).has_value());
  EXPECT_TRUE(b.input("d", {Dim("batch", 4)}, DataType::kFloat32).has_value());
  EXPECT_FALSE(b.input("e", {Dim("batch", 5)}, DataType::kFloat32).has_value());
  EXPECT_FALSE(b.input("f", {Dim("not valid", 5)}, DataType::kFloat32).has_value());
}

TEST(BuilderTest, ConstantByteLengthMustMatch) {
  GraphBuilder b;
  EXPECT_TRUE(b.constant({DataType::kFloat32, {2}}, std::vector<uint8_t>(8)).has_value());
  EXPECT_FALSE(b.constant({DataType::kFloat32, {2}}, std::vector<uint8_t>(7)).has_value());
  EXPECT_TRUE(b.constant({DataType::kInt4, {3}}, std::vector<uint8_t>(2)).has_value());
  EXPECT_FALSE(
      b.constant({DataType::kFloat32, {Dim("n", 2)}}, std::vector<uint8_t>(8)).has_value());
}

// constant(value, shape) of api.md §9.3: the value's element count must equal the shape's, even
// where the packed byte lengths agree (3 and 4 int4 elements both take 2 bytes).
TEST(BuilderTest, ConstantValueCountMustMatchShape) {
  GraphBuilder b;
  EXPECT_TRUE(b.constant({DataType::kInt4, {2, 2}}, std::vector<uint8_t>(2), 4).has_value());
  auto mismatch = b.constant({DataType::kInt4, {2, 2}}, std::vector<uint8_t>(2), 3);
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.status().kind(), ErrorKind::kValue);
  EXPECT_EQ(mismatch.status().message(),
            "constant: shape [2,2] has 4 elements but the value has 3");
  auto empty = b.constant({DataType::kFloat32, {2, 0}}, std::vector<uint8_t>(), 0);
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.status().kind(), ErrorKind::kValue);
  EXPECT_NE(empty.status().message().find("dimension 0 is out of range"), std::string::npos)
      << empty.status().message();
  auto deep = b.constant({DataType::kFloat32, Shape(9, Dim(1))}, std::vector<uint8_t>(4), 1);
  ASSERT_FALSE(deep.has_value());
  EXPECT_NE(deep.status().message().find("rank 9 exceeds"), std::string::npos);
}

TEST(BuilderTest, LimitsAreCheckedBeforeInfer) {
  GraphBuilder b;
  OperandId i = *b.input("i", {2}, DataType::kInt32);
  auto r = b.add_op(OpKind::kSigmoid, UnaryParams{OperandRef{i}}, "act");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().kind(), ErrorKind::kValue);
  EXPECT_EQ(r.status().message().rfind("sigmoid 'act': input data type int32", 0), 0u)
      << r.status().message();
  auto bad = b.add_op(OpKind::kRelu, UnaryParams{OperandRef{42}});
  EXPECT_FALSE(bad.has_value());
}

TEST(BuilderTest, ExtractPrunesAndFinishConsumes) {
  GraphBuilder b;
  OperandId x = *b.input("x", {2}, DataType::kFloat32);
  OperandId unused = *b.input("unused", {2}, DataType::kFloat32);
  ASSERT_TRUE(b.add_op(OpKind::kNeg, UnaryParams{OperandRef{unused}}).has_value());
  OperandId y = (*b.add_op(OpKind::kRelu, UnaryParams{OperandRef{x}}))[0];
  auto g = b.extract({{"y", y}});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->inputs, std::vector<OperandId>{x});
  EXPECT_FALSE(b.extract({{"x", x}}).has_value());  // inputs cannot be outputs
  EXPECT_FALSE(b.extract({}).has_value());
  EXPECT_FALSE(b.built());
  ASSERT_TRUE(b.finish({{"y", y}}).has_value());
  EXPECT_TRUE(b.built());
  auto after = b.input("z", {1}, DataType::kFloat32);
  ASSERT_FALSE(after.has_value());
  EXPECT_EQ(after.status().kind(), ErrorKind::kState);
  EXPECT_NE(after.status().message().find("already"), std::string::npos);
}

}  // namespace
}  // namespace webnn

namespace webnn {
namespace {

TEST(BuilderTest, BackendTypeFilterNarrowsLimits) {
  // A backend without float16 relu: the builder rejects it at build time, as
  // op_support_limits() of that backend would report.
  GraphBuilder b([](OpKind kind, const char*, DataTypeMask types) {
    return kind == OpKind::kRelu ? types & ~mask_of(DataType::kFloat16) : types;
  });
  OperandId h = *b.input("h", {2}, DataType::kFloat16);
  auto r = b.add_op(OpKind::kRelu, UnaryParams{{h}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().kind(), ErrorKind::kValue);
  EXPECT_NE(r.status().message().find("float16"), std::string::npos);
  EXPECT_TRUE(b.add_op(OpKind::kAbs, UnaryParams{{h}}).has_value());
}

}  // namespace
}  // namespace webnn
