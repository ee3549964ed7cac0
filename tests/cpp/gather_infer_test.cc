#include <gtest/gtest.h>

#include <string>

#include "webnn/builder.h"

namespace webnn {
namespace {

#define EXPECT_CONTAINS(text, part)                                         \
  do {                                                                      \
    const std::string text_ = (text);                                       \
    EXPECT_NE(text_.find(part), std::string::npos) << "message: " << text_; \
  } while (0)

constexpr DataType kF32 = DataType::kFloat32;
constexpr DataType kI32 = DataType::kInt32;

class GatherInferTest : public ::testing::Test {
 protected:
  OperandRef in(const Shape& shape, DataType t = kF32) {
    auto id = b_.input("x" + std::to_string(next_++), shape, t);
    EXPECT_TRUE(id.has_value());
    return OperandRef{*id};
  }
  // The single output descriptor of a successful op.
  OperandDesc out(OpKind kind, OpParams params) {
    auto ids = b_.add_op(kind, std::move(params), "op");
    EXPECT_TRUE(ids.has_value()) << ids.status().message();
    if (!ids.has_value()) return {};
    EXPECT_EQ(ids->size(), 1u);
    return *b_.operand_desc(ids->front());
  }
  // The message of a rejected op (ValueError expected).
  std::string reject(OpKind kind, OpParams params) {
    auto ids = b_.add_op(kind, std::move(params), "op");
    EXPECT_FALSE(ids.has_value());
    if (ids.has_value()) return "";
    EXPECT_EQ(ids.status().kind(), ErrorKind::kValue) << ids.status().message();
    return ids.status().message();
  }

  GraphBuilder b_;
  int next_ = 0;
};

Shape S(std::initializer_list<Dim> dims) { return Shape(dims); }

TEST_F(GatherInferTest, GatherShapeReplacesAxisWithIndicesShape) {
  OperandRef x = in({3, 4, 5});
  OperandRef i = in({2, 6}, kI32);
  EXPECT_EQ(out(OpKind::kGather, GatherParams{x, i, 1}), (OperandDesc{kF32, S({3, 2, 6, 5})}));
  EXPECT_EQ(out(OpKind::kGather, GatherParams{x, i, 0}), (OperandDesc{kF32, S({2, 6, 4, 5})}));
  EXPECT_EQ(out(OpKind::kGather, GatherParams{x, i, 2}), (OperandDesc{kF32, S({3, 4, 2, 6})}));
}

TEST_F(GatherInferTest, GatherScalarIndicesDropTheAxis) {
  OperandRef x = in({3, 4}, DataType::kInt8);
  OperandRef i = in({}, DataType::kInt64);
  EXPECT_EQ(out(OpKind::kGather, GatherParams{x, i, 1}), (OperandDesc{DataType::kInt8, S({3})}));
  OperandRef v = in({5}, DataType::kUint4);
  EXPECT_EQ(out(OpKind::kGather, GatherParams{v, i, 0}), (OperandDesc{DataType::kUint4, S({})}));
}

TEST_F(GatherInferTest, GatherPassesDynamicDims) {
  OperandRef x = in({Dim("b", 8), 4, Dim("s", 16)});
  OperandRef i = in({Dim("n", 5)}, DataType::kUint32);
  EXPECT_EQ(out(OpKind::kGather, GatherParams{x, i, 1}),
            (OperandDesc{kF32, S({Dim("b", 8), Dim("n", 5), Dim("s", 16)})}));
}

TEST_F(GatherInferTest, GatherRejections) {
  OperandRef x = in({3, 4});
  OperandRef i = in({2}, kI32);
  std::string msg = reject(OpKind::kGather, GatherParams{x, i, 2});
  EXPECT_CONTAINS(msg, "gather 'op'");
  EXPECT_CONTAINS(msg, "axis 2 is out of range for rank 2");
  EXPECT_CONTAINS(reject(OpKind::kGather, GatherParams{x, in({2}, DataType::kFloat32), 0}),
                  "indices data type float32 is not supported");
  EXPECT_CONTAINS(reject(OpKind::kGather, GatherParams{x, in({2}, DataType::kUint64), 0}),
                  "indices data type uint64");
  EXPECT_CONTAINS(reject(OpKind::kGather, GatherParams{in({}), i, 0}), "input rank");
  // input rank 5 with rank-5 indices gives rank 9 > 8.
  EXPECT_CONTAINS(
      reject(OpKind::kGather, GatherParams{in({1, 1, 1, 1, 1}), in({1, 1, 1, 1, 1}, kI32), 0}),
      "output rank 9");
}

TEST_F(GatherInferTest, GatherElementsOutputIsIndicesShape) {
  OperandRef x = in({3, 4, Dim("b", 8)}, DataType::kFloat16);
  OperandRef i = in({7, 4, Dim("b", 8)}, kI32);
  EXPECT_EQ(out(OpKind::kGatherElements, GatherParams{x, i, 0}),
            (OperandDesc{DataType::kFloat16, S({7, 4, Dim("b", 8)})}));
}

TEST_F(GatherInferTest, GatherElementsRejections) {
  OperandRef x = in({3, 4});
  EXPECT_CONTAINS(reject(OpKind::kGatherElements, GatherParams{x, in({3, 4}, kI32), 2}),
                  "axis 2 is out of range");
  EXPECT_CONTAINS(reject(OpKind::kGatherElements, GatherParams{x, in({3}, kI32), 0}),
                  "indices rank 1 must equal input rank 2");
  EXPECT_CONTAINS(reject(OpKind::kGatherElements, GatherParams{x, in({2, 3}, kI32), 0}),
                  "on every axis but axis 0 (axis 1: 3 vs 4)");
  // A dynamic dim only equals the same dynamic dim.
  OperandRef d = in({3, Dim("b", 4)});
  EXPECT_CONTAINS(reject(OpKind::kGatherElements, GatherParams{d, in({2, 4}, kI32), 0}),
                  "must equal input shape");
}

TEST_F(GatherInferTest, GatherNdShape) {
  OperandRef x = in({2, 3, 4, 5});
  EXPECT_EQ(out(OpKind::kGatherNd, GatherNdParams{x, in({6, 2}, kI32)}),
            (OperandDesc{kF32, S({6, 4, 5})}));
  EXPECT_EQ(out(OpKind::kGatherNd, GatherNdParams{x, in({4}, kI32)}), (OperandDesc{kF32, S({})}));
  EXPECT_EQ(out(OpKind::kGatherNd, GatherNdParams{x, in({Dim("n", 9), 7, 1}, kI32)}),
            (OperandDesc{kF32, S({Dim("n", 9), 7, 3, 4, 5})}));
}

TEST_F(GatherInferTest, GatherNdRejections) {
  OperandRef x = in({2, 3});
  EXPECT_CONTAINS(reject(OpKind::kGatherNd, GatherNdParams{x, in({4, 3}, kI32)}),
                  "k = 3) must not exceed the input rank 2");
  EXPECT_CONTAINS(reject(OpKind::kGatherNd, GatherNdParams{x, in({4, Dim("k", 2)}, kI32)}),
                  "dynamic dimension 'k'");
  EXPECT_CONTAINS(reject(OpKind::kGatherNd, GatherNdParams{x, in({}, kI32)}), "indices rank");
  EXPECT_CONTAINS(reject(OpKind::kGatherNd, GatherNdParams{x, in({1}, DataType::kInt8)}),
                  "indices data type int8");
}

TEST_F(GatherInferTest, ScatterElementsKeepsInput) {
  OperandRef x = in({Dim("b", 8), 5}, kI32);
  OperandRef i = in({Dim("b", 8), 2}, DataType::kInt64);
  OperandRef u = in({Dim("b", 8), 2}, kI32);
  EXPECT_EQ(out(OpKind::kScatterElements, ScatterElementsParams{x, i, u, 1}),
            (OperandDesc{kI32, S({Dim("b", 8), 5})}));
}

TEST_F(GatherInferTest, ScatterElementsRejections) {
  OperandRef x = in({3, 3});
  OperandRef i = in({2, 3}, kI32);
  EXPECT_CONTAINS(reject(OpKind::kScatterElements, ScatterElementsParams{x, i, in({2, 3}), 2}),
                  "axis 2 is out of range");
  EXPECT_CONTAINS(reject(OpKind::kScatterElements, ScatterElementsParams{x, i, in({3, 2}), 0}),
                  "updates shape [3,2] must equal indices shape [2,3]");
  EXPECT_CONTAINS(
      reject(OpKind::kScatterElements, ScatterElementsParams{x, i, in({2, 3}, kI32), 0}),
      "updates data type int32 must match input data type float32");
  EXPECT_CONTAINS(reject(OpKind::kScatterElements, ScatterElementsParams{x, i, in({2, 3}), 1}),
                  "on every axis but axis 1");
  EXPECT_CONTAINS(reject(OpKind::kScatterElements,
                         ScatterElementsParams{in({2}, DataType::kInt4), in({2}, kI32),
                                               in({2}, DataType::kInt4), 0}),
                  "input data type int4 is not supported");
}

TEST_F(GatherInferTest, ScatterNdKeepsInput) {
  OperandRef x = in({4, 5, 6}, DataType::kUint8);
  EXPECT_EQ(out(OpKind::kScatterNd,
                ScatterNdParams{x, in({2, 1}, kI32), in({2, 5, 6}, DataType::kUint8)}),
            (OperandDesc{DataType::kUint8, S({4, 5, 6})}));
  EXPECT_EQ(out(OpKind::kScatterNd, ScatterNdParams{x, in({3}, kI32), in({}, DataType::kUint8)}),
            (OperandDesc{DataType::kUint8, S({4, 5, 6})}));
}

TEST_F(GatherInferTest, ScatterNdRejections) {
  OperandRef x = in({4, 5});
  EXPECT_CONTAINS(reject(OpKind::kScatterNd, ScatterNdParams{x, in({2, 3}, kI32), in({2})}),
                  "must not exceed the input rank 2");
  EXPECT_CONTAINS(reject(OpKind::kScatterNd, ScatterNdParams{x, in({2, 1}, kI32), in({2, 4})}),
                  "updates shape [2,4] must equal indices.shape[:-1] + input.shape[k:] = [2,5]");
  EXPECT_CONTAINS(reject(OpKind::kScatterNd,
                         ScatterNdParams{x, in({2, 1}, kI32), in({2, 5}, DataType::kFloat16)}),
                  "updates data type float16 must match input data type float32");
  EXPECT_CONTAINS(
      reject(OpKind::kScatterNd, ScatterNdParams{x, in({2, Dim("k", 2)}, kI32), in({2})}),
      "dynamic dimension 'k'");
}

TEST_F(GatherInferTest, WhereBroadcastsAllThree) {
  OperandRef c = in({2, 1, 1, 1}, DataType::kUint8);
  OperandRef t = in({2, 3}, DataType::kInt64);
  OperandRef f = in({2, 2, 1}, DataType::kInt64);
  EXPECT_EQ(out(OpKind::kWhere, WhereParams{c, t, f}),
            (OperandDesc{DataType::kInt64, S({2, 2, 2, 3})}));
  OperandRef dc = in({Dim("b", 4), 1}, DataType::kUint8);
  OperandRef dt = in({3});
  EXPECT_EQ(out(OpKind::kWhere, WhereParams{dc, dt, dt}), (OperandDesc{kF32, S({Dim("b", 4), 3})}));
}

TEST_F(GatherInferTest, WhereRejections) {
  OperandRef c = in({2, 3}, DataType::kUint8);
  EXPECT_CONTAINS(reject(OpKind::kWhere, WhereParams{in({2, 3}), in({2, 3}), in({2, 3})}),
                  "condition data type float32 is not supported");
  EXPECT_CONTAINS(reject(OpKind::kWhere, WhereParams{c, in({2, 3}), in({2, 3}, kI32)}),
                  "false_value data type int32 must match true_value data type float32");
  EXPECT_CONTAINS(reject(OpKind::kWhere, WhereParams{c, in({4}), in({4})}), "not broadcastable");
  EXPECT_CONTAINS(reject(OpKind::kWhere, WhereParams{c, in({2, 3}), in({3, 3})}),
                  "not broadcastable");
  EXPECT_CONTAINS(reject(OpKind::kWhere, WhereParams{in({Dim("b", 2), 3}, DataType::kUint8),
                                                     in({2, 3}), in({2, 3})}),
                  "not broadcastable");
}

}  // namespace
}  // namespace webnn
