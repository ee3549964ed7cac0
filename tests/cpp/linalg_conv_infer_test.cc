// Infer of matmul, gemm, conv2d and convTranspose2d through GraphBuilder: output descriptors,
// dynamic-dimension propagation and the rejection rules of spec/ops.md 3.8-3.9.
#include <gtest/gtest.h>

#include <string>

#include "webnn/builder.h"

namespace webnn {
namespace {

const Dim kBatch("batch", 4);

class LinalgConvInferTest : public ::testing::Test {
 protected:
  OperandRef in(const Shape& shape, DataType t = DataType::kFloat32) {
    auto id = b_.input("x" + std::to_string(next_++), shape, t);
    if (!id.has_value()) {
      ADD_FAILURE() << id.status().message();
      return OperandRef{};
    }
    return OperandRef{*id};
  }
  OperandDesc desc_of(const Expected<std::vector<OperandId>>& r) {
    if (!r.has_value()) {
      ADD_FAILURE() << r.status().message();
      return OperandDesc{};
    }
    return *b_.operand_desc((*r)[0]);
  }
  // Expects a ValueError whose message contains `text`.
  static void expect_value_error(const Expected<std::vector<OperandId>>& r,
                                 const std::string& text) {
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.status().kind(), ErrorKind::kValue) << r.status().message();
    EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().message();
  }

  GraphBuilder b_;
  int next_ = 0;
};

// ---- matmul ---------------------------------------------------------------------------------

TEST_F(LinalgConvInferTest, MatmulBroadcastsBatchDims) {
  auto r = b_.add_op(OpKind::kMatmul, BinaryParams{in({2, 1, 3, 4}), in({5, 4, 6})});
  EXPECT_EQ(desc_of(r), (OperandDesc{DataType::kFloat32, {2, 5, 3, 6}}));
  r = b_.add_op(OpKind::kMatmul,
                BinaryParams{in({3, 4}, DataType::kFloat16), in({4, 2}, DataType::kFloat16)});
  EXPECT_EQ(desc_of(r), (OperandDesc{DataType::kFloat16, {3, 2}}));
}

TEST_F(LinalgConvInferTest, MatmulPassesDynamicDims) {
  const Dim rows("rows", 9), inner("k", 8);
  auto r = b_.add_op(OpKind::kMatmul, BinaryParams{in({kBatch, rows, inner}), in({inner, 5})});
  EXPECT_EQ(desc_of(r).shape, (Shape{kBatch, rows, 5}));
}

TEST_F(LinalgConvInferTest, MatmulRejections) {
  auto r = b_.add_op(OpKind::kMatmul, BinaryParams{in({4}), in({4, 5})}, "mm");
  expect_value_error(r, "a rank must be in [2, ");
  EXPECT_EQ(r.status().message().rfind("matmul 'mm': ", 0), 0u) << r.status().message();
  expect_value_error(b_.add_op(OpKind::kMatmul, BinaryParams{in({3, 4}), in({3, 5})}),
                     "a columns 4 must equal b rows 3");
  expect_value_error(b_.add_op(OpKind::kMatmul, BinaryParams{in({2, 3, 4}), in({3, 4, 5})}),
                     "not broadcastable");
  expect_value_error(
      b_.add_op(OpKind::kMatmul, BinaryParams{in({3, 4}), in({4, 5}, DataType::kFloat16)}),
      "b data type float16 must match a data type float32");
  expect_value_error(b_.add_op(OpKind::kMatmul, BinaryParams{in({3, 4}, DataType::kInt32),
                                                             in({4, 5}, DataType::kInt32)}),
                     "a data type int32 is not supported");
  // A dynamic inner dim equals only the same dynamic dim.
  expect_value_error(b_.add_op(OpKind::kMatmul, BinaryParams{in({3, Dim("k", 4)}), in({4, 5})}),
                     "columns");
}

// ---- gemm -----------------------------------------------------------------------------------

TEST_F(LinalgConvInferTest, GemmTransposesAndC) {
  GemmParams p{in({4, 3}), in({5, 4})};
  p.a_transpose = true;
  p.b_transpose = true;
  p.c = in({1, 5});
  EXPECT_EQ(desc_of(b_.add_op(OpKind::kGemm, p)).shape, (Shape{3, 5}));
  GemmParams scalar_c{in({3, 4}), in({4, 5}), in({})};
  EXPECT_EQ(desc_of(b_.add_op(OpKind::kGemm, scalar_c)).shape, (Shape{3, 5}));
}

TEST_F(LinalgConvInferTest, GemmPassesDynamicRows) {
  const Dim m("m", 7);
  GemmParams p{in({m, 4}), in({4, 5}), in({m, 1})};
  EXPECT_EQ(desc_of(b_.add_op(OpKind::kGemm, p)).shape, (Shape{m, 5}));
}

TEST_F(LinalgConvInferTest, GemmRejections) {
  expect_value_error(b_.add_op(OpKind::kGemm, GemmParams{in({3, 4}), in({5, 4})}),
                     "inner dimensions differ");
  expect_value_error(b_.add_op(OpKind::kGemm, GemmParams{in({2, 3, 4}), in({4, 5})}),
                     "a rank must be in [2, 2]");
  expect_value_error(b_.add_op(OpKind::kGemm, GemmParams{in({3, 4}), in({4, 5}), in({3})}),
                     "c shape [3] is not broadcastable to [3,5]");
  expect_value_error(b_.add_op(OpKind::kGemm, GemmParams{in({3, 4}), in({4, 5}), in({1, 3, 5})}),
                     "c rank");
  expect_value_error(
      b_.add_op(OpKind::kGemm, GemmParams{in({3, 4}), in({4, 5}), in({5}, DataType::kFloat16)}),
      "c data type");
  // A dynamic c axis cannot broadcast to a static one.
  expect_value_error(
      b_.add_op(OpKind::kGemm, GemmParams{in({3, 4}), in({4, 5}), in({Dim("n", 5)})}),
      "not broadcastable");
}

// ---- conv2d ---------------------------------------------------------------------------------

TEST_F(LinalgConvInferTest, Conv2dOutputShapeAllLayouts) {
  // Input 1x4x7x6 (nchw), filter O=6, I/g=2, kH=3, kW=2, groups 2.
  struct Case {
    const char* filter_layout;
    Shape filter;
  };
  for (const Case& c : {Case{"oihw", {6, 2, 3, 2}}, Case{"hwio", {3, 2, 2, 6}},
                        Case{"ohwi", {6, 3, 2, 2}}, Case{"ihwo", {2, 3, 2, 6}}}) {
    for (bool nhwc : {false, true}) {
      Conv2dParams p;
      p.input = nhwc ? in({1, 7, 6, 4}) : in({1, 4, 7, 6});
      p.filter = in(c.filter);
      p.groups = 2;
      p.strides = IntList{2, 1};
      p.dilations = IntList{1, 2};
      p.padding = IntList{1, 0, 2, 1};
      p.input_layout = nhwc ? "nhwc" : "nchw";
      p.filter_layout = c.filter_layout;
      p.bias = in({6});
      // oh = floor((7 - 3 + 1 + 0) / 2) + 1 = 3; ow = (6 - 3 + 2 + 1) / 1 + 1 = 7.
      Shape want = nhwc ? Shape{1, 3, 7, 6} : Shape{1, 6, 3, 7};
      EXPECT_EQ(desc_of(b_.add_op(OpKind::kConv2d, p)).shape, want) << c.filter_layout;
    }
  }
}

TEST_F(LinalgConvInferTest, Conv2dDepthwiseAndDynamicBatch) {
  Conv2dParams p;
  p.input = in({kBatch, 4, 5, 5}, DataType::kFloat16);
  p.filter = in({8, 1, 3, 3}, DataType::kFloat16);
  p.groups = 4;
  EXPECT_EQ(desc_of(b_.add_op(OpKind::kConv2d, p)),
            (OperandDesc{DataType::kFloat16, {kBatch, 8, 3, 3}}));
}

TEST_F(LinalgConvInferTest, Conv2dRejections) {
  auto conv = [&](auto edit, Shape x = {1, 4, 5, 5}, Shape w = {4, 4, 3, 3}) {
    Conv2dParams p;
    p.input = in(x);
    p.filter = in(w);
    edit(p);
    return b_.add_op(OpKind::kConv2d, p);
  };
  auto none = [](Conv2dParams&) {};
  expect_value_error(conv([](Conv2dParams& p) { p.padding = IntList{1, 1, 1}; }),
                     "padding must have 4 entries");
  expect_value_error(conv([](Conv2dParams& p) { p.strides = IntList{1, 0}; }),
                     "strides[1] must be at least 1 (got 0)");
  expect_value_error(conv([](Conv2dParams& p) { p.dilations = IntList{2}; }),
                     "dilations must have 2 entries (got 1)");
  expect_value_error(conv([](Conv2dParams& p) { p.groups = 0; }), "groups must be at least 1");
  expect_value_error(conv([](Conv2dParams& p) { p.groups = 3; }),
                     "input channels 4 must be divisible by groups 3");
  expect_value_error(conv(none, {1, 3, 5, 5}, {4, 4, 3, 3}),
                     "input channels 3 / groups 1 must equal filter input channels 4");
  expect_value_error(conv([](Conv2dParams& p) { p.groups = 2; }, {1, 4, 5, 5}, {3, 2, 3, 3}),
                     "output channels 3 (filter oihw) must be divisible by groups 2");
  expect_value_error(conv(none, {1, 4, 2, 5}), "output height would be < 1");
  expect_value_error(conv([](Conv2dParams& p) { p.dilations = IntList{1, 3}; }),
                     "output width would be < 1");
  expect_value_error(conv([](Conv2dParams& p) { p.input_layout = "NCHW"; }),
                     "input_layout \"NCHW\" is not one of \"nchw\", \"nhwc\"");
  expect_value_error(conv([](Conv2dParams& p) { p.filter_layout = "iohw"; }), "filter_layout");
  expect_value_error(conv(none, {1, 4, 5}), "input rank must be in [4, 4]");
  expect_value_error(conv(none, {1, Dim("c", 4), 5, 5}), "dynamic dimension 'c'");
  expect_value_error(conv(none, {1, 4, Dim("h", 5), 5}), "dynamic dimension 'h'");
  OperandRef bias3 = in({3});
  expect_value_error(conv([&](Conv2dParams& p) { p.bias = bias3; }), "bias shape [3] must be [4]");
  OperandRef bias16 = in({4}, DataType::kFloat16);
  expect_value_error(conv([&](Conv2dParams& p) { p.bias = bias16; }),
                     "bias data type float16 must match input data type float32");
  Conv2dParams mixed;
  mixed.input = in({1, 4, 5, 5});
  mixed.filter = in({4, 4, 3, 3}, DataType::kFloat16);
  expect_value_error(b_.add_op(OpKind::kConv2d, mixed), "filter data type float16");
}

// ---- convTranspose2d -------------------------------------------------------------------------

TEST_F(LinalgConvInferTest, ConvTranspose2dOutputShapeAllLayouts) {
  // Input 1x4x3x4, filter I=4, O/g=3, kH=2, kW=3, groups 2 -> 6 output channels.
  struct Case {
    const char* filter_layout;
    Shape filter;
  };
  for (const Case& c : {Case{"iohw", {4, 3, 2, 3}}, Case{"hwoi", {2, 3, 3, 4}},
                        Case{"ohwi", {3, 2, 3, 4}}, Case{"oihw", {3, 4, 2, 3}}}) {
    for (bool nhwc : {false, true}) {
      ConvTranspose2dParams p;
      p.input = nhwc ? in({1, 3, 4, 4}) : in({1, 4, 3, 4});
      p.filter = in(c.filter);
      p.groups = 2;
      p.strides = IntList{2, 3};
      p.dilations = IntList{2, 1};
      p.padding = IntList{1, 0, 0, 2};
      p.output_padding = IntList{1, 2};
      p.input_layout = nhwc ? "nhwc" : "nchw";
      p.filter_layout = c.filter_layout;
      // h = (3-1)*2 + (2-1)*2 + 1 - 1 + 1 = 7; w = (4-1)*3 + 3 - 2 + 2 = 12.
      Shape want = nhwc ? Shape{1, 7, 12, 6} : Shape{1, 6, 7, 12};
      EXPECT_EQ(desc_of(b_.add_op(OpKind::kConvTranspose2d, p)).shape, want) << c.filter_layout;
    }
  }
}

TEST_F(LinalgConvInferTest, ConvTranspose2dOutputSizesAndDynamicBatch) {
  ConvTranspose2dParams p;
  p.input = in({kBatch, 2, 3, 3});
  p.filter = in({2, 1, 3, 3});
  p.strides = IntList{3, 3};
  p.output_sizes = IntList{9, 11};   // calc = 9; valid range [9, 12)
  p.output_padding = IntList{7, 7};  // ignored with output_sizes
  EXPECT_EQ(desc_of(b_.add_op(OpKind::kConvTranspose2d, p)).shape, (Shape{kBatch, 1, 9, 11}));
}

TEST_F(LinalgConvInferTest, ConvTranspose2dRejections) {
  auto convt = [&](auto edit, Shape x = {1, 4, 3, 3}, Shape w = {4, 4, 3, 3}) {
    ConvTranspose2dParams p;
    p.input = in(x);
    p.filter = in(w);
    edit(p);
    return b_.add_op(OpKind::kConvTranspose2d, p);
  };
  auto none = [](ConvTranspose2dParams&) {};
  expect_value_error(convt([](ConvTranspose2dParams& p) {
                       p.strides = IntList{2, 2};
                       p.output_padding = IntList{2, 0};
                     }),
                     "output_padding[0] 2 must be smaller than strides[0] 2");
  expect_value_error(convt([](ConvTranspose2dParams& p) { p.output_padding = IntList{0}; }),
                     "output_padding must have 2 entries");
  expect_value_error(convt([](ConvTranspose2dParams& p) { p.output_sizes = IntList{5, 5, 5}; }),
                     "output_sizes must have 2 entries");
  expect_value_error(convt([](ConvTranspose2dParams& p) {
                       p.strides = IntList{2, 2};
                       p.output_sizes = IntList{7, 9};
                     }),
                     "output_sizes[1] 9 must be in [7, 9)");
  expect_value_error(convt([](ConvTranspose2dParams& p) { p.output_sizes = IntList{4, 5}; }),
                     "output_sizes[0] 4 must be in [5, 6)");
  expect_value_error(convt(none, {1, 4, 3, 3}, {2, 4, 3, 3}),
                     "input channels 4 must equal filter input channels 2");
  expect_value_error(convt([](ConvTranspose2dParams& p) { p.groups = 3; }),
                     "input channels 4 must be divisible by groups 3");
  expect_value_error(convt([](ConvTranspose2dParams& p) { p.padding = IntList{3, 3, 0, 0}; }),
                     "output height -1 is not a valid dimension");
  expect_value_error(convt([](ConvTranspose2dParams& p) { p.filter_layout = "hwio"; }),
                     "filter_layout \"hwio\" is not one of");
  expect_value_error(convt(none, {1, Dim("c", 4), 3, 3}), "dynamic dimension 'c'");
  OperandRef bias = in({4});
  expect_value_error(convt(
                         [&](ConvTranspose2dParams& p) {
                           p.groups = 2;
                           p.bias = bias;
                         },
                         {1, 4, 3, 3}, {4, 4, 3, 3}),
                     "bias shape [4] must be [8]");
}

}  // namespace
}  // namespace webnn
