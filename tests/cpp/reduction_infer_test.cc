// Shape/type inference of the reduction family (spec/ops.md 3.5, §1.4 reduction shape).
#include <gtest/gtest.h>

#include "webnn/builder.h"

namespace webnn {
namespace {

class ReductionInferTest : public ::testing::Test {
 protected:
  OperandRef input(const Shape& shape, DataType type = DataType::kFloat32) {
    auto id = b_.input("x" + std::to_string(next_++), shape, type);
    EXPECT_TRUE(id.has_value()) << id.status().message();
    return OperandRef{*id};
  }
  // The single output descriptor of a successful add_op.
  OperandDesc infer(OpKind kind, OpParams params) {
    auto outs = b_.add_op(kind, std::move(params), "lbl");
    EXPECT_TRUE(outs.has_value()) << outs.status().message();
    if (!outs.has_value()) return {};
    EXPECT_EQ(outs->size(), 1u);
    return *b_.operand_desc(outs->front());
  }
  Status reject(OpKind kind, OpParams params) {
    auto outs = b_.add_op(kind, std::move(params), "lbl");
    EXPECT_FALSE(outs.has_value());
    return outs.has_value() ? Status::ok() : outs.status();
  }

  GraphBuilder b_;
  int next_ = 0;
};

const Dim kBatch("batch", 8);

TEST_F(ReductionInferTest, AbsentAxesReduceEverythingToRank0) {
  OperandDesc d = infer(OpKind::kReduceSum, ReduceParams{input({2, 3, 4})});
  EXPECT_EQ(d, (OperandDesc{DataType::kFloat32, {}}));
  d = infer(OpKind::kReduceSum, ReduceParams{input({2, 3, 4}), std::nullopt, true});
  EXPECT_EQ(d.shape, (Shape{1, 1, 1}));
}

TEST_F(ReductionInferTest, EmptyAxesKeepTheShape) {
  for (bool keep : {false, true}) {
    OperandDesc d = infer(OpKind::kReduceL2, ReduceParams{input({2, 3}), IntList{}, keep});
    EXPECT_EQ(d.shape, (Shape{2, 3}));
  }
}

TEST_F(ReductionInferTest, SelectedAxesInAnyOrder) {
  OperandDesc d = infer(OpKind::kReduceMean, ReduceParams{input({2, 3, 4, 5}), IntList{3, 1}});
  EXPECT_EQ(d.shape, (Shape{2, 4}));
  d = infer(OpKind::kReduceMean, ReduceParams{input({2, 3, 4, 5}), IntList{3, 1}, true});
  EXPECT_EQ(d.shape, (Shape{2, 1, 4, 1}));
}

TEST_F(ReductionInferTest, Rank0Input) {
  OperandDesc d = infer(OpKind::kReduceMax, ReduceParams{input({}), std::nullopt, true});
  EXPECT_EQ(d.shape, Shape{});
  EXPECT_EQ(reject(OpKind::kReduceMax, ReduceParams{input({}), IntList{0}}).kind(),
            ErrorKind::kValue);
}

TEST_F(ReductionInferTest, OutputTypeFollowsInput) {
  for (DataType t : {DataType::kInt32, DataType::kUint32, DataType::kInt64, DataType::kUint64}) {
    EXPECT_EQ(infer(OpKind::kReduceProduct, ReduceParams{input({2}, t)}).data_type, t);
  }
  EXPECT_EQ(infer(OpKind::kReduceMin, ReduceParams{input({2}, DataType::kInt8)}).data_type,
            DataType::kInt8);
}

TEST_F(ReductionInferTest, DynamicDimsPassThroughNonReducedAxes) {
  OperandRef x = input({kBatch, 3, 4});
  EXPECT_EQ(infer(OpKind::kReduceSum, ReduceParams{x, IntList{2}}).shape, (Shape{kBatch, 3}));
  EXPECT_EQ(infer(OpKind::kReduceSum, ReduceParams{x, IntList{0}, true}).shape, (Shape{1, 3, 4}));
  EXPECT_EQ(infer(OpKind::kReduceSum, ReduceParams{x, IntList{0, 1}}).shape, (Shape{4}));
  EXPECT_EQ(infer(OpKind::kArgMax, ArgMinMaxParams{x, 1, true}).shape, (Shape{kBatch, 1, 4}));
  EXPECT_EQ(infer(OpKind::kCumulativeSum, CumulativeSumParams{x, 0}).shape, (Shape{kBatch, 3, 4}));
}

TEST_F(ReductionInferTest, RejectsOutOfRangeAxis) {
  Status s = reject(OpKind::kReduceSum, ReduceParams{input({2, 3}), IntList{0, 2}});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
  EXPECT_NE(s.message().find("reduceSum 'lbl'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("2 is out of range for rank 2"), std::string::npos) << s.message();
}

TEST_F(ReductionInferTest, RejectsDuplicateAxes) {
  Status s = reject(OpKind::kReduceLogSumExp, ReduceParams{input({2, 3}), IntList{1, 0, 1}});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
  EXPECT_NE(s.message().find("duplicate axis 1"), std::string::npos) << s.message();
}

TEST_F(ReductionInferTest, RejectsDataTypesOutsideTheLimits) {
  struct Case {
    OpKind kind;
    DataType type;
  };
  for (Case c :
       {Case{OpKind::kReduceMean, DataType::kInt32}, Case{OpKind::kReduceL2, DataType::kInt64},
        Case{OpKind::kReduceLogSum, DataType::kUint32}, Case{OpKind::kReduceSum, DataType::kInt8},
        Case{OpKind::kReduceProduct, DataType::kUint8}, Case{OpKind::kReduceMax, DataType::kInt4},
        Case{OpKind::kReduceMin, DataType::kUint4}}) {
    Status s = reject(c.kind, ReduceParams{input({2}, c.type)});
    EXPECT_EQ(s.kind(), ErrorKind::kValue);
    EXPECT_NE(s.message().find("data type"), std::string::npos) << s.message();
  }
  Status s = reject(OpKind::kCumulativeSum, CumulativeSumParams{input({2}, DataType::kInt8), 0});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
  s = reject(OpKind::kArgMin, ArgMinMaxParams{input({2}, DataType::kInt4), 0});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
}

TEST_F(ReductionInferTest, ArgMinMaxShapesAndOutputType) {
  OperandRef x = input({2, 3, 4}, DataType::kFloat16);
  OperandDesc d = infer(OpKind::kArgMin, ArgMinMaxParams{x, 1});
  EXPECT_EQ(d, (OperandDesc{DataType::kInt32, {2, 4}}));
  d = infer(OpKind::kArgMax, ArgMinMaxParams{x, 2, true, DataType::kInt64});
  EXPECT_EQ(d, (OperandDesc{DataType::kInt64, {2, 3, 1}}));
  d = infer(OpKind::kArgMax, ArgMinMaxParams{input({5}, DataType::kUint64), 0});
  EXPECT_EQ(d, (OperandDesc{DataType::kInt32, {}}));
}

TEST_F(ReductionInferTest, ArgMinMaxRejections) {
  OperandRef x = input({2, 3});
  Status s = reject(OpKind::kArgMax, ArgMinMaxParams{x, 2});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
  EXPECT_NE(s.message().find("axis 2 is out of range for rank 2"), std::string::npos)
      << s.message();
  for (DataType t : {DataType::kUint32, DataType::kFloat32, DataType::kUint64}) {
    s = reject(OpKind::kArgMin, ArgMinMaxParams{x, 0, false, t});
    EXPECT_EQ(s.kind(), ErrorKind::kValue);
    EXPECT_NE(s.message().find("int32 or int64"), std::string::npos) << s.message();
  }
  s = reject(OpKind::kArgMin, ArgMinMaxParams{input({}), 0});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
  EXPECT_NE(s.message().find("rank"), std::string::npos) << s.message();
}

TEST_F(ReductionInferTest, CumulativeSumKeepsDescriptor) {
  OperandDesc d = infer(OpKind::kCumulativeSum,
                        CumulativeSumParams{input({2, 3}, DataType::kUint64), 1, true, true});
  EXPECT_EQ(d, (OperandDesc{DataType::kUint64, {2, 3}}));
}

TEST_F(ReductionInferTest, CumulativeSumRejections) {
  Status s = reject(OpKind::kCumulativeSum, CumulativeSumParams{input({2, 3}), 2});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
  EXPECT_NE(s.message().find("axis 2 is out of range"), std::string::npos) << s.message();
  s = reject(OpKind::kCumulativeSum, CumulativeSumParams{input({}), 0});
  EXPECT_EQ(s.kind(), ErrorKind::kValue);
}

}  // namespace
}  // namespace webnn
