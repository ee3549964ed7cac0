// Infer and validation of batch/instance/layer normalization and quantize/dequantizeLinear
// through GraphBuilder (spec/ops.md §3.10, §3.11; api.md §11.3).
#include <gtest/gtest.h>

#include <string>

#include "webnn/builder.h"

namespace webnn {
namespace {

using DT = DataType;

class NormQuantInferTest : public ::testing::Test {
 protected:
  OperandRef in(const Shape& shape, DT type = DT::kFloat32) {
    auto id = b_.input("in" + std::to_string(next_++), shape, type);
    EXPECT_TRUE(id.has_value()) << id.status().message();
    return OperandRef{*id};
  }
  OperandDesc add(OpKind kind, OpParams params) {
    auto r = b_.add_op(kind, std::move(params), "lbl");
    EXPECT_TRUE(r.has_value()) << r.status().message();
    if (!r.has_value()) return {};
    return *b_.operand_desc(r->at(0));
  }
  // The op must be rejected with ValueError whose message names the op and contains `text`.
  void reject(OpKind kind, OpParams params, const std::string& text) {
    auto r = b_.add_op(kind, std::move(params), "lbl");
    ASSERT_FALSE(r.has_value()) << "expected an error containing: " << text;
    EXPECT_EQ(r.status().kind(), ErrorKind::kValue) << r.status().message();
    EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("'lbl'"), std::string::npos) << r.status().message();
  }

  GraphBuilder b_;
  int next_ = 0;
};

const Dim kBatch("batch", 8);

// ---- batchNormalization --------------------------------------------------------------------

TEST_F(NormQuantInferTest, BatchNormKeepsInputDescAndAxis) {
  OperandRef x = in({kBatch, 3, 4}, DT::kFloat16);
  BatchNormalizationParams p{x, in({3}, DT::kFloat16), in({3}, DT::kFloat16)};
  EXPECT_EQ(add(OpKind::kBatchNormalization, p), (OperandDesc{DT::kFloat16, {kBatch, 3, 4}}));
  p.axis = 2;
  p.mean = in({4}, DT::kFloat16);
  p.variance = in({4}, DT::kFloat16);
  p.scale = in({4}, DT::kFloat16);
  p.bias = in({4}, DT::kFloat16);
  EXPECT_EQ(add(OpKind::kBatchNormalization, p), (OperandDesc{DT::kFloat16, {kBatch, 3, 4}}));
  BatchNormalizationParams one_d{in({6}), in({6}), in({6})};
  one_d.axis = 0;
  EXPECT_EQ(add(OpKind::kBatchNormalization, one_d).shape, (Shape{6}));
}

TEST_F(NormQuantInferTest, BatchNormRejections) {
  OperandRef x = in({2, 3, 4});
  OperandRef m = in({3}), v = in({3});
  BatchNormalizationParams p{x, m, v};
  p.axis = 3;
  reject(OpKind::kBatchNormalization, p, "axis 3 is out of range for rank 3");
  p.axis = 1;
  p.mean = in({4});
  reject(OpKind::kBatchNormalization, p, "mean shape [4] must be [3]");
  p.mean = m;
  p.variance = in({1, 3});
  reject(OpKind::kBatchNormalization, p, "variance rank must be in [1, 1]");
  p.variance = v;
  p.scale = in({3}, DT::kFloat16);
  reject(OpKind::kBatchNormalization, p, "scale data type float16 must match input");
  p.scale = {};
  p.bias = in({2});
  reject(OpKind::kBatchNormalization, p, "bias shape [2] must be [3]");
  reject(OpKind::kBatchNormalization, BatchNormalizationParams{in({2, 3}, DT::kInt32), m, v},
         "input data type int32 is not supported");
  reject(OpKind::kBatchNormalization, BatchNormalizationParams{in({}), in({1}), in({1})},
         "input rank must be in [1, 8]");
  // The channel axis must be static: it sizes the parameter tensors.
  reject(OpKind::kBatchNormalization, BatchNormalizationParams{in({2, Dim("c", 3)}), m, v},
         "dynamic dimension 'c'");
}

// ---- instanceNormalization -----------------------------------------------------------------

TEST_F(NormQuantInferTest, InstanceNormLayouts) {
  Shape nchw = {kBatch, 3, Dim("h", 9), 5};
  InstanceNormalizationParams p{in(nchw), in({3}), in({3})};
  EXPECT_EQ(add(OpKind::kInstanceNormalization, p), (OperandDesc{DT::kFloat32, nchw}));
  Shape nhwc = {kBatch, 4, 5, 2};
  InstanceNormalizationParams q{in(nhwc), in({2})};
  q.layout = "nhwc";
  EXPECT_EQ(add(OpKind::kInstanceNormalization, q), (OperandDesc{DT::kFloat32, nhwc}));
}

TEST_F(NormQuantInferTest, InstanceNormRejections) {
  OperandRef x = in({1, 3, 2, 2});
  InstanceNormalizationParams p{x};
  p.layout = "NHWC";
  reject(OpKind::kInstanceNormalization, p, "layout 'NHWC' is not one of 'nchw', 'nhwc'");
  p.layout = "nhwc";
  p.scale = in({3});
  reject(OpKind::kInstanceNormalization, p, "scale shape [3] must be [2]");
  p.layout = "nchw";
  p.bias = in({3}, DT::kFloat16);
  reject(OpKind::kInstanceNormalization, p, "bias data type float16 must match");
  reject(OpKind::kInstanceNormalization, InstanceNormalizationParams{in({1, 3, 2})},
         "input rank must be in [4, 4]");
  reject(OpKind::kInstanceNormalization, InstanceNormalizationParams{in({1, Dim("c", 4), 2, 2})},
         "dynamic dimension 'c'");
}

// ---- layerNormalization --------------------------------------------------------------------

TEST_F(NormQuantInferTest, LayerNormDefaultAxesAndParamShapes) {
  // Default axes [1, ..., rank-1]: scale covers every axis but the first.
  LayerNormalizationParams p{in({kBatch, 3, 4}), in({3, 4}), in({3, 4})};
  EXPECT_EQ(add(OpKind::kLayerNormalization, p).shape, (Shape{kBatch, 3, 4}));
  // rank <= 1 -> no axes: a rank-0 scale.
  EXPECT_EQ(add(OpKind::kLayerNormalization, LayerNormalizationParams{in({5}), in({})}).shape,
            (Shape{5}));
  EXPECT_EQ(add(OpKind::kLayerNormalization, LayerNormalizationParams{in({})}).shape, Shape{});
  // Non-contiguous, unordered axes: scale dims follow the order of `axes`.
  LayerNormalizationParams q{in({2, 3, 4, 5}), in({5, 3})};
  q.axes = IntList{3, 1};
  EXPECT_EQ(add(OpKind::kLayerNormalization, q).shape, (Shape{2, 3, 4, 5}));
  // Without scale/bias, normalized axes may be dynamic.
  LayerNormalizationParams r{in({kBatch, 3})};
  r.axes = IntList{0, 1};
  EXPECT_EQ(add(OpKind::kLayerNormalization, r).shape, (Shape{kBatch, 3}));
}

TEST_F(NormQuantInferTest, LayerNormRejections) {
  OperandRef x = in({2, 3, 4});
  LayerNormalizationParams p{x};
  p.axes = IntList{1, 1};
  reject(OpKind::kLayerNormalization, p, "axes contains duplicate axis 1");
  p.axes = IntList{3};
  reject(OpKind::kLayerNormalization, p, "axes 3 is out of range for rank 3");
  p.axes = std::nullopt;
  p.scale = in({4});
  reject(OpKind::kLayerNormalization, p, "scale rank 1");
  p.scale = in({4, 3});
  reject(OpKind::kLayerNormalization, p, "scale.shape[0] = 4, input.shape[1] = 3");
  p.axes = IntList{2, 1};
  p.scale = in({4, 3});
  p.bias = in({3, 4});
  reject(OpKind::kLayerNormalization, p, "bias.shape[0] = 3, input.shape[2] = 4");
  p.bias = in({4, 3}, DT::kFloat16);
  reject(OpKind::kLayerNormalization, p, "bias data type float16 must match");
  LayerNormalizationParams d{in({kBatch, 3}), in({8, 3})};
  d.axes = IntList{0, 1};
  reject(OpKind::kLayerNormalization, d, "dynamic dimension 'batch' is not supported on axis 0");
  reject(OpKind::kLayerNormalization, LayerNormalizationParams{in({2}, DT::kUint8)},
         "input data type uint8 is not supported");
}

// ---- quantizeLinear / dequantizeLinear -----------------------------------------------------

TEST_F(NormQuantInferTest, QuantizeOutputTypeAndBlockwiseShapes) {
  for (DT t : {DT::kUint8, DT::kInt8, DT::kUint32, DT::kInt32, DT::kInt4, DT::kUint4}) {
    QuantizeParams p{in({4, 6}), in({2, 3}), in({2, 3}, t)};
    EXPECT_EQ(add(OpKind::kQuantizeLinear, p), (OperandDesc{t, {4, 6}}));
  }
  // Absent zero point: uint8.
  EXPECT_EQ(add(OpKind::kQuantizeLinear,
                QuantizeParams{in({4, 6}, DT::kFloat16), in({1, 6}, DT::kFloat16)}),
            (OperandDesc{DT::kUint8, {4, 6}}));
  EXPECT_EQ(add(OpKind::kQuantizeLinear, QuantizeParams{in({}), in({})}).shape, Shape{});
  // A dynamic axis takes a scale dim of 1 or the same dynamic dim.
  EXPECT_EQ(add(OpKind::kQuantizeLinear, QuantizeParams{in({kBatch, 6}), in({1, 2})}).shape,
            (Shape{kBatch, 6}));
  EXPECT_EQ(add(OpKind::kQuantizeLinear, QuantizeParams{in({kBatch, 6}), in({kBatch, 6})}).shape,
            (Shape{kBatch, 6}));
}

TEST_F(NormQuantInferTest, DequantizeOutputTypeIsScaleType) {
  for (DT t : {DT::kUint8, DT::kInt8, DT::kUint32, DT::kInt32, DT::kInt4, DT::kUint4}) {
    QuantizeParams p{in({3, 4}, t), in({3, 2}, DT::kFloat16), in({3, 2}, t)};
    EXPECT_EQ(add(OpKind::kDequantizeLinear, p), (OperandDesc{DT::kFloat16, {3, 4}}));
  }
  EXPECT_EQ(add(OpKind::kDequantizeLinear, QuantizeParams{in({3}, DT::kInt8), in({1})}),
            (OperandDesc{DT::kFloat32, {3}}));
}

TEST_F(NormQuantInferTest, QuantizeRejections) {
  OperandRef x = in({4, 6});
  reject(OpKind::kQuantizeLinear, QuantizeParams{x, in({6})},
         "scale rank 1 (shape [6]) must equal the input rank 2");
  reject(OpKind::kQuantizeLinear, QuantizeParams{x, in({3, 3})},
         "axis 0: 4 is not a multiple of 3");
  reject(OpKind::kQuantizeLinear, QuantizeParams{x, in({4, 12})},
         "axis 1: 6 is not a multiple of 12");
  reject(OpKind::kQuantizeLinear, QuantizeParams{x, in({2, 3}), in({2, 1}, DT::kInt8)},
         "zero_point shape [2,1] must equal scale shape [2,3]");
  reject(OpKind::kQuantizeLinear, QuantizeParams{x, in({2, 3}, DT::kFloat16)},
         "scale data type float16 must match input");
  reject(OpKind::kQuantizeLinear, QuantizeParams{x, in({2, 3}), in({2, 3}, DT::kInt64)},
         "zero_point data type int64 is not supported");
  reject(OpKind::kQuantizeLinear, QuantizeParams{in({4, 6}, DT::kInt32), in({2, 3})},
         "input data type int32 is not supported");
  reject(OpKind::kQuantizeLinear, QuantizeParams{in({kBatch, 6}), in({2, 6})},
         "dynamic dimension 'batch'");
  reject(OpKind::kQuantizeLinear, QuantizeParams{in({kBatch, 6}), in({Dim("other", 8), 6})},
         "dynamic dimension 'other'");
}

TEST_F(NormQuantInferTest, DequantizeRejections) {
  OperandRef x = in({4, 6}, DT::kUint8);
  reject(OpKind::kDequantizeLinear, QuantizeParams{x, in({2, 3}), in({2, 3}, DT::kInt8)},
         "zero_point data type int8 must match input data type uint8");
  reject(OpKind::kDequantizeLinear, QuantizeParams{x, in({2, 3}, DT::kInt32)},
         "scale data type int32 is not supported");
  reject(OpKind::kDequantizeLinear, QuantizeParams{in({4, 6}, DT::kInt64), in({2, 3})},
         "input data type int64 is not supported");
  reject(OpKind::kDequantizeLinear, QuantizeParams{x, in({1, 5})},
         "axis 1: 6 is not a multiple of 5");
  reject(OpKind::kDequantizeLinear, QuantizeParams{x, in({1, 2, 3})}, "must equal the input rank");
}

}  // namespace
}  // namespace webnn
