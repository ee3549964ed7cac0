// Shape/type inference and validation of pooling, global pooling and resample2d.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "webnn/builder.h"

namespace webnn {
namespace {

class PoolInferTest : public ::testing::Test {
 protected:
  OperandRef input(const Shape& shape, DataType type = DataType::kFloat32) {
    auto id = b_.input("x" + std::to_string(count_++), shape, type);
    EXPECT_TRUE(id.has_value()) << id.status().message();
    return OperandRef{*id};
  }

  // The single output descriptor, or the error.
  Expected<OperandDesc> infer(OpKind kind, OpParams params, const std::string& label = "") {
    auto outs = b_.add_op(kind, std::move(params), label);
    if (!outs) return outs.status();
    EXPECT_EQ(outs->size(), 1u);
    return b_.operand_desc(outs->front());
  }

  Shape pool_shape(OpKind kind, Pool2dParams p) {
    auto d = infer(kind, std::move(p));
    EXPECT_TRUE(d.has_value()) << d.status().message();
    return d ? d->shape : Shape{};
  }

  // Expects a ValueError whose message contains every fragment.
  static void expect_value_error(const Expected<OperandDesc>& d,
                                 const std::vector<std::string>& fragments) {
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.status().kind(), ErrorKind::kValue) << d.status().message();
    for (const std::string& f : fragments) {
      EXPECT_NE(d.status().message().find(f), std::string::npos)
          << "'" << f << "' not in: " << d.status().message();
    }
  }

  GraphBuilder b_;
  int count_ = 0;
};

constexpr OpKind kPools[] = {OpKind::kAveragePool2d, OpKind::kL2Pool2d, OpKind::kMaxPool2d};

TEST_F(PoolInferTest, DefaultWindowIsWholeSpatialExtent) {
  for (OpKind k : kPools) {
    Pool2dParams p;
    p.input = input({2, 3, 5, 7});
    EXPECT_EQ(pool_shape(k, p), (Shape{2, 3, 1, 1}));
    p.input = input({2, 5, 7, 3}, DataType::kFloat16);
    p.layout = "nhwc";
    auto d = infer(k, p);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(*d, (OperandDesc{DataType::kFloat16, {2, 1, 1, 3}}));
  }
}

TEST_F(PoolInferTest, WindowStridesDilationsPadding) {
  Pool2dParams p;
  p.input = input({1, 3, 7, 7});
  p.window_dimensions = IntList{4, 4};
  p.padding = IntList{2, 1, 2, 1};
  p.strides = IntList{2, 2};
  EXPECT_EQ(pool_shape(OpKind::kMaxPool2d, p), (Shape{1, 3, 4, 4}));
  p.padding = IntList{0, 0, 0, 0};
  p.dilations = IntList{2, 1};  // dilated window height 7
  EXPECT_EQ(pool_shape(OpKind::kMaxPool2d, p), (Shape{1, 3, 1, 2}));
  p.input = input({1, 3, 5, 5});
  p.window_dimensions = IntList{5, 5};
  p.padding = IntList{2, 2, 2, 2};
  p.strides = std::nullopt;
  p.dilations = std::nullopt;
  EXPECT_EQ(pool_shape(OpKind::kAveragePool2d, p), (Shape{1, 3, 5, 5}));
}

TEST_F(PoolInferTest, RoundingAndOutputSizes) {
  Pool2dParams p;
  p.input = input({1, 3, 7, 7});
  p.window_dimensions = IntList{4, 4};
  p.padding = IntList{1, 1, 1, 1};
  p.strides = IntList{2, 2};
  EXPECT_EQ(pool_shape(OpKind::kL2Pool2d, p), (Shape{1, 3, 3, 3}));
  p.output_shape_rounding = "ceil";
  EXPECT_EQ(pool_shape(OpKind::kL2Pool2d, p), (Shape{1, 3, 4, 4}));
  // output_sizes overrides the rounding: either pair is accepted.
  p.output_sizes = IntList{3, 3};
  EXPECT_EQ(pool_shape(OpKind::kL2Pool2d, p), (Shape{1, 3, 3, 3}));
  p.output_shape_rounding = "floor";
  p.output_sizes = IntList{4, 4};
  EXPECT_EQ(pool_shape(OpKind::kL2Pool2d, p), (Shape{1, 3, 4, 4}));
}

TEST_F(PoolInferTest, RejectsOutputSizesOutsideFloorAndCeil) {
  Pool2dParams p;
  p.input = input({1, 2, 5, 5});
  p.window_dimensions = IntList{2, 2};
  p.strides = IntList{2, 2};
  p.output_sizes = IntList{2, 3};  // floor height, ceil width: not a pair
  expect_value_error(infer(OpKind::kAveragePool2d, p, "pool"),
                     {"averagePool2d 'pool': ", "output_sizes [2,3]", "[2,2]", "[3,3]"});
  p.output_sizes = IntList{4, 4};
  expect_value_error(infer(OpKind::kAveragePool2d, p), {"output_sizes"});
  p.output_sizes = IntList{2, 2, 2};
  expect_value_error(infer(OpKind::kAveragePool2d, p), {"output_sizes", "2 entries", "got 3"});
  p.output_sizes = IntList{0, 2};
  expect_value_error(infer(OpKind::kAveragePool2d, p), {"output_sizes"});
}

TEST_F(PoolInferTest, RejectsBadOptionLists) {
  struct Case {
    Pool2dParams params;
    std::vector<std::string> fragments;
  };
  Pool2dParams base;
  base.input = input({1, 2, 5, 5});
  std::vector<Case> cases;
  auto with = [&](auto edit, std::vector<std::string> fragments) {
    Pool2dParams p = base;
    edit(p);
    cases.push_back({p, std::move(fragments)});
  };
  with([](Pool2dParams& p) { p.window_dimensions = IntList{1, 1, 1, 1}; },
       {"window_dimensions", "2 entries", "got 4"});
  with([](Pool2dParams& p) { p.window_dimensions = IntList{0, 2}; },
       {"window_dimensions", "at least 1", "got 0"});
  with([](Pool2dParams& p) { p.window_dimensions = IntList{8, 2}; }, {"window height 8"});
  with([](Pool2dParams& p) { p.window_dimensions = IntList{2, 6}; }, {"window width 6"});
  with([](Pool2dParams& p) { p.padding = IntList{2, 2}; }, {"padding", "4 entries", "got 2"});
  with([](Pool2dParams& p) { p.strides = IntList{2}; }, {"strides", "2 entries"});
  with([](Pool2dParams& p) { p.strides = IntList{0, 2}; }, {"strides", "at least 1"});
  with([](Pool2dParams& p) { p.dilations = IntList{1, 1, 2}; }, {"dilations", "2 entries"});
  with([](Pool2dParams& p) { p.dilations = IntList{1, 0}; }, {"dilations", "at least 1"});
  with([](Pool2dParams& p) { p.layout = "NHWC"; }, {"layout", "\"NHWC\""});
  with([](Pool2dParams& p) { p.output_shape_rounding = "up"; },
       {"output_shape_rounding", "\"up\""});
  with([](Pool2dParams& p) { p.padding = IntList{4294967295, 4294967295, 0, 0}; },
       {"output height", "not a valid dimension"});
  // Unsigned 64-bit options whose sums and products overflow int64.
  with([](Pool2dParams& p) { p.padding = IntList{0, 0, INT64_MAX, INT64_MAX}; },
       {"output width", "not a valid dimension"});
  with(
      [](Pool2dParams& p) {
        p.window_dimensions = IntList{INT64_MAX, 1};
        p.dilations = IntList{INT64_MAX, 1};
      },
      {"window height"});
  for (OpKind k : kPools) {
    for (const Case& c : cases) expect_value_error(infer(k, c.params), c.fragments);
  }
}

TEST_F(PoolInferTest, DataTypesAndRanks) {
  for (DataType t : {DataType::kInt8, DataType::kUint8, DataType::kInt32, DataType::kUint32,
                     DataType::kInt64, DataType::kUint64}) {
    Pool2dParams p;
    p.input = input({1, 2, 3, 3}, t);
    auto d = infer(OpKind::kMaxPool2d, p);
    ASSERT_TRUE(d.has_value()) << d.status().message();
    EXPECT_EQ(d->data_type, t);
    expect_value_error(infer(OpKind::kAveragePool2d, p), {"input data type"});
    expect_value_error(infer(OpKind::kL2Pool2d, p), {"input data type"});
    expect_value_error(infer(OpKind::kGlobalMaxPool, GlobalPoolParams{p.input}),
                       {"input data type"});
  }
  Pool2dParams p;
  p.input = input({1, 2, 3, 3}, DataType::kInt4);
  expect_value_error(infer(OpKind::kMaxPool2d, p), {"int4"});
  for (const Shape& s : {Shape{2, 3, 3}, Shape{1, 1, 2, 3, 3}}) {
    p.input = input(s);
    for (OpKind k : kPools) expect_value_error(infer(k, p), {"rank"});
    expect_value_error(infer(OpKind::kGlobalAveragePool, GlobalPoolParams{p.input}), {"rank"});
  }
}

TEST_F(PoolInferTest, DynamicBatchPassesThroughOtherAxesMustBeStatic) {
  const Dim batch("batch", 8);
  Pool2dParams p;
  p.input = input({batch, 2, 6, 6});
  p.window_dimensions = IntList{2, 2};
  p.strides = IntList{2, 2};
  EXPECT_EQ(pool_shape(OpKind::kAveragePool2d, p), (Shape{batch, 2, 3, 3}));
  auto g = infer(OpKind::kGlobalMaxPool, GlobalPoolParams{p.input, "nchw"});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->shape, (Shape{batch, 2, 1, 1}));

  p.input = input({1, Dim("c", 4), 6, 6});
  expect_value_error(infer(OpKind::kMaxPool2d, p), {"dynamic dimension 'c'", "axis 1"});
  p.input = input({1, 6, Dim("w", 6), 2});
  p.layout = "nhwc";
  expect_value_error(infer(OpKind::kMaxPool2d, p), {"dynamic dimension 'w'", "axis 2"});
  expect_value_error(infer(OpKind::kGlobalAveragePool, GlobalPoolParams{p.input, "nhwc"}),
                     {"dynamic dimension 'w'"});
}

TEST_F(PoolInferTest, GlobalPools) {
  OperandRef x = input({2, 3, 4, 5}, DataType::kFloat16);
  for (OpKind k : {OpKind::kGlobalAveragePool, OpKind::kGlobalMaxPool}) {
    auto d = infer(k, GlobalPoolParams{x, "nchw"});
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(*d, (OperandDesc{DataType::kFloat16, {2, 3, 1, 1}}));
    d = infer(k, GlobalPoolParams{x, "nhwc"});
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->shape, (Shape{2, 1, 1, 5}));
    expect_value_error(infer(k, GlobalPoolParams{x, "hwc"}), {"layout"});
  }
}

class ResampleInferTest : public PoolInferTest {
 protected:
  Expected<OperandDesc> run(Resample2dParams p) { return infer(OpKind::kResample2d, p); }
  Shape shape_of(Resample2dParams p) {
    auto d = run(std::move(p));
    EXPECT_TRUE(d.has_value()) << d.status().message();
    return d ? d->shape : Shape{};
  }
};

TEST_F(ResampleInferTest, SizesScalesAndAxes) {
  Resample2dParams p;
  p.input = input({1, 1, 2, 4});
  EXPECT_EQ(shape_of(p), (Shape{1, 1, 2, 4}));
  p.scales = std::vector<double>{2.0, 2.0};
  EXPECT_EQ(shape_of(p), (Shape{1, 1, 4, 8}));
  p.sizes = IntList{3, 6};  // overrides scales
  EXPECT_EQ(shape_of(p), (Shape{1, 1, 3, 6}));
  p.sizes = std::nullopt;
  p.scales = std::vector<double>{1.0, 2.0};
  p.axes = IntList{0, 1};
  EXPECT_EQ(shape_of(p), (Shape{1, 2, 2, 4}));
  p.axes = IntList{3, 1};
  EXPECT_EQ(shape_of(p), (Shape{1, 2, 2, 4}));
  p.axes = IntList{0, 2};  // axes need not be consecutive
  EXPECT_EQ(shape_of(p), (Shape{1, 1, 4, 4}));
  // Scales are IDL floats: float(0.7) * 10 = 6.99999988 floors to 6.
  p.input = input({1, 1, 10, 10});
  p.axes = std::nullopt;
  p.scales = std::vector<double>{0.7, 0.5};
  EXPECT_EQ(shape_of(p), (Shape{1, 1, 6, 5}));
}

TEST_F(ResampleInferTest, DataTypes) {
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kInt8, DataType::kUint8}) {
    Resample2dParams p;
    p.input = input({1, 1, 2, 2}, t);
    auto d = run(p);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->data_type, t);
  }
  for (DataType t : {DataType::kInt32, DataType::kUint32, DataType::kInt64, DataType::kUint64,
                     DataType::kInt4, DataType::kUint4}) {
    Resample2dParams p;
    p.input = input({1, 1, 2, 2}, t);
    expect_value_error(run(p), {"input data type", data_type_name(t)});
  }
}

TEST_F(ResampleInferTest, Rejections) {
  OperandRef x = input({1, 1, 2, 4});
  struct Case {
    Resample2dParams params;
    std::vector<std::string> fragments;
  };
  auto make = [&](auto edit) {
    Resample2dParams p;
    p.input = x;
    edit(p);
    return p;
  };
  std::vector<Case> cases = {
      {make([](auto& p) { p.scales = std::vector<double>{1, 1, 2, 2}; }), {"scales", "2 entries"}},
      {make([](auto& p) { p.scales = std::vector<double>{1, -2}; }), {"scales", "greater than 0"}},
      {make([](auto& p) { p.scales = std::vector<double>{0, 2}; }), {"scales"}},
      {make([](auto& p) { p.scales = std::vector<double>{1e300, 1}; }), {"scales", "finite"}},
      {make([](auto& p) { p.scales = std::vector<double>{0.02, 0.8}; }),
       {"floor(2 * 0.02)", "axis 2", "not a valid dimension"}},
      {make([](auto& p) { p.scales = std::vector<double>{4294967295.0, 1}; }),
       {"not a valid dimension"}},
      {make([](auto& p) { p.scales = std::vector<double>{0.7, 0.1}; }), {"axis 3"}},
      {make([](auto& p) { p.sizes = IntList{1, 1, 4, 6}; }), {"sizes", "2 entries"}},
      {make([](auto& p) { p.sizes = IntList{0, 1}; }), {"sizes entry 0"}},
      {make([](auto& p) { p.sizes = IntList{1, 2147483648}; }), {"sizes entry 2147483648"}},
      {make([](auto& p) { p.axes = IntList{0, 1, 2}; }), {"axes", "2 entries"}},
      {make([](auto& p) { p.axes = IntList{3, 4}; }), {"axes entry 4", "out of range"}},
      {make([](auto& p) { p.axes = IntList{0, 0}; }), {"duplicate axis 0"}},
      {make([](auto& p) { p.mode = "cubic"; }), {"mode", "\"cubic\""}},
  };
  for (const Case& c : cases) expect_value_error(run(c.params), c.fragments);
  Resample2dParams p;
  p.input = input({2, 4});
  expect_value_error(run(p), {"rank"});
}

TEST_F(ResampleInferTest, DynamicDimensionsOnlyOffTheResampledAxes) {
  const Dim batch("n", 4), height("h", 16);
  Resample2dParams p;
  p.input = input({batch, 3, 4, 4});
  p.scales = std::vector<double>{2, 2};
  EXPECT_EQ(shape_of(p), (Shape{batch, 3, 8, 8}));
  p.input = input({1, 3, height, 4});
  expect_value_error(run(p), {"dynamic dimension 'h'", "axis 2"});
  p.axes = IntList{1, 3};
  EXPECT_EQ(shape_of(p), (Shape{1, 6, height, 8}));
}

}  // namespace
}  // namespace webnn
