// Infer of casting and tensor manipulation (spec/ops.md §3.6, §4; api.md §11.3–11.4).
#include <gtest/gtest.h>

#include "webnn/builder.h"

namespace webnn {
namespace {

class MovementInferTest : public ::testing::Test {
 protected:
  OperandId in(const Shape& shape, DataType t = DataType::kFloat32) {
    auto id = b.input("x" + std::to_string(count++), shape, t);
    EXPECT_TRUE(id.has_value()) << id.status().message();
    return *id;
  }
  // Adds the op and returns the descriptor of output `i` (fails the test on error).
  OperandDesc out(OpKind kind, OpParams params, size_t i = 0) {
    auto r = b.add_op(kind, std::move(params));
    EXPECT_TRUE(r.has_value()) << r.status().message();
    if (!r.has_value() || r->size() <= i) return {};
    return *b.operand_desc((*r)[i]);
  }
  size_t outputs(OpKind kind, OpParams params) {
    auto r = b.add_op(kind, std::move(params));
    EXPECT_TRUE(r.has_value()) << r.status().message();
    return r.has_value() ? r->size() : 0;
  }
  // Expects a ValueError whose message contains `text`.
  void rejects(OpKind kind, OpParams params, const std::string& text) {
    auto r = b.add_op(kind, std::move(params), "lbl");
    ASSERT_FALSE(r.has_value()) << "expected an error containing '" << text << "'";
    EXPECT_EQ(r.status().kind(), ErrorKind::kValue) << r.status().message();
    EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("'lbl'"), std::string::npos) << r.status().message();
  }

  GraphBuilder b;
  int count = 0;
};

Dim dyn(const char* name, int64_t max) { return Dim(name, max); }
OperandRef ref(OperandId id) { return OperandRef{id}; }

TEST_F(MovementInferTest, CastChangesOnlyTheType) {
  OperandDesc d = out(OpKind::kCast, CastParams{ref(in({dyn("n", 4), 3})), DataType::kInt4});
  EXPECT_EQ(d, (OperandDesc{DataType::kInt4, {dyn("n", 4), 3}}));
  d = out(OpKind::kCast, CastParams{ref(in({2}, DataType::kUint4)), DataType::kUint64});
  EXPECT_EQ(d, (OperandDesc{DataType::kUint64, {2}}));
}

TEST_F(MovementInferTest, ConcatSumsTheAxis) {
  OperandId a = in({2, 3}), c = in({2, 5});
  EXPECT_EQ(out(OpKind::kConcat, ConcatParams{{ref(a), ref(c), ref(a)}, 1}).shape, (Shape{2, 11}));
  OperandId s = in({});
  EXPECT_EQ(out(OpKind::kConcat, ConcatParams{{ref(s), ref(s), ref(s)}, 0}).shape, (Shape{3}));
}

TEST_F(MovementInferTest, ConcatRejections) {
  OperandId a = in({2, 3}), i = in({2, 3}, DataType::kInt32), r = in({2, 3, 1}), d = in({4, 4});
  rejects(OpKind::kConcat, ConcatParams{{}, 0}, "between 1 and 8192");
  rejects(OpKind::kConcat, ConcatParams{OperandList(8193, ref(a)), 0}, "got 8193");
  rejects(OpKind::kConcat, ConcatParams{{ref(a), ref(i)}, 0}, "inputs[1] data type int32");
  rejects(OpKind::kConcat, ConcatParams{{ref(a), ref(r)}, 0}, "inputs[1] rank 3");
  rejects(OpKind::kConcat, ConcatParams{{ref(a), ref(a)}, 2}, "axis 2 is out of range");
  rejects(OpKind::kConcat, ConcatParams{{ref(a), ref(d)}, 0}, "axis 1 differs");
  OperandId s = in({});
  rejects(OpKind::kConcat, ConcatParams{{ref(s)}, 1}, "rank-0");
  OperandId big = in({kMaxDimension - 1});
  rejects(OpKind::kConcat, ConcatParams{{ref(big), ref(big)}, 0}, "not a valid dimension");
}

TEST_F(MovementInferTest, ConcatDerivesDynamicDimensions) {
  OperandId past = in({dyn("past", 8), 4}), one = in({1, 4}), seq = in({dyn("seq", 3), 4});
  EXPECT_EQ(out(OpKind::kConcat, ConcatParams{{ref(past), ref(one)}, 0}).shape,
            (Shape{dyn("past + 1", 9), 4}));
  EXPECT_EQ(out(OpKind::kConcat, ConcatParams{{ref(seq), ref(past), ref(seq), ref(one)}, 0}).shape,
            (Shape{dyn("past + 2*seq + 1", 15), 4}));
  // A derived dim feeds further derivations in canonical form.
  auto grown = b.add_op(OpKind::kConcat, ConcatParams{{ref(past), ref(one)}, 0});
  ASSERT_TRUE(grown.has_value());
  OperandId g = (*grown)[0];
  EXPECT_EQ(out(OpKind::kConcat, ConcatParams{{ref(g), ref(one), ref(past)}, 0}).shape,
            (Shape{dyn("2*past + 2", 18), 4}));
  // Non-axis dynamic dims must be the same dimension.
  OperandId other = in({dyn("other", 8), 4});
  rejects(OpKind::kConcat, ConcatParams{{ref(past), ref(other)}, 1}, "axis 0 differs");
  EXPECT_EQ(out(OpKind::kConcat, ConcatParams{{ref(past), ref(past)}, 1}).shape,
            (Shape{dyn("past", 8), 8}));
}

TEST_F(MovementInferTest, Expand) {
  EXPECT_EQ(out(OpKind::kExpand, NewShapeParams{ref(in({3, 1})), {2, 3, 4}}).shape,
            (Shape{2, 3, 4}));
  EXPECT_EQ(out(OpKind::kExpand, NewShapeParams{ref(in({})), {5}}).shape, (Shape{5}));
  EXPECT_EQ(out(OpKind::kExpand, NewShapeParams{ref(in({1, 4})), {dyn("k", 5), 4}}).shape,
            (Shape{dyn("k", 5), 4}));
  rejects(OpKind::kExpand, NewShapeParams{ref(in({2, 3})), {3, 3}}, "not broadcastable");
  rejects(OpKind::kExpand, NewShapeParams{ref(in({2, 3})), {3}}, "more dimensions");
  rejects(OpKind::kExpand, NewShapeParams{ref(in({dyn("n", 4)})), {4}}, "not broadcastable");
}

TEST_F(MovementInferTest, ReshapeElementCount) {
  EXPECT_EQ(out(OpKind::kReshape, NewShapeParams{ref(in({2, 3, 4})), {4, 6}}).shape, (Shape{4, 6}));
  EXPECT_EQ(out(OpKind::kReshape, NewShapeParams{ref(in({1, 1})), {}}).shape, Shape{});
  OperandId d = in({dyn("b", 4), 4, 8});
  EXPECT_EQ(out(OpKind::kReshape, NewShapeParams{ref(d), {32, dyn("b", 4)}}).shape,
            (Shape{32, dyn("b", 4)}));
  rejects(OpKind::kReshape, NewShapeParams{ref(in({2, 3})), {4, 2}}, "same number of elements");
  rejects(OpKind::kReshape, NewShapeParams{ref(d), {dyn("c", 4), 32}}, "same number of elements");
  rejects(OpKind::kReshape, NewShapeParams{ref(d), {128}}, "same number of elements");
  // The product of huge static dims must not wrap around to a matching count.
  rejects(OpKind::kReshape,
          NewShapeParams{ref(in({1})),
                         {1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30}},
          "same number of elements");
  auto r = b.add_op(OpKind::kReshape, NewShapeParams{ref(in({2, 3})), {6, 0}});
  EXPECT_EQ(r.status().kind(), ErrorKind::kValue);
}

TEST_F(MovementInferTest, Slice) {
  OperandId x = in({3, 5});
  EXPECT_EQ(out(OpKind::kSlice, SliceParams{ref(x), {0, 1}, {3, 4}, IntList{2, 3}}).shape,
            (Shape{2, 2}));
  EXPECT_EQ(out(OpKind::kSlice, SliceParams{ref(in({})), {}, {}, std::nullopt}).shape, Shape{});
  rejects(OpKind::kSlice, SliceParams{ref(x), {0}, {1, 1}, std::nullopt}, "starts length 1");
  rejects(OpKind::kSlice, SliceParams{ref(x), {0, 0}, {1}, std::nullopt}, "sizes length 1");
  rejects(OpKind::kSlice, SliceParams{ref(x), {0, 0}, {1, 1}, IntList{1}}, "strides length 1");
  rejects(OpKind::kSlice, SliceParams{ref(x), {0, 0}, {0, 1}, std::nullopt}, "sizes[0] 0");
  rejects(OpKind::kSlice, SliceParams{ref(x), {0, 0}, {1, 1}, IntList{1, 0}}, "strides[1] 0");
  rejects(OpKind::kSlice, SliceParams{ref(x), {2, 0}, {2, 1}, std::nullopt}, "exceeds");
  rejects(OpKind::kSlice, SliceParams{ref(x), {0, 6}, {1, 1}, std::nullopt}, "exceeds");
}

TEST_F(MovementInferTest, SliceDynamic) {
  OperandId x = in({dyn("n", 8), 4});
  EXPECT_EQ(out(OpKind::kSlice, SliceParams{ref(x), {0, 0}, {dyn("n", 8), 2}, std::nullopt}).shape,
            (Shape{dyn("n", 8), 2}));
  EXPECT_EQ(out(OpKind::kSlice, SliceParams{ref(x), {1, 0}, {dyn("m", 4), 4}, std::nullopt}).shape,
            (Shape{dyn("m", 4), 4}));
  EXPECT_EQ(out(OpKind::kSlice, SliceParams{ref(x), {2, 0}, {3, 4}, std::nullopt}).shape,
            (Shape{3, 4}));
  rejects(OpKind::kSlice, SliceParams{ref(x), {0, 0}, {2, 4}, IntList{2, 1}},
          "dynamic dimension 'n'");
  rejects(OpKind::kSlice, SliceParams{ref(x), {0, 0}, {1, dyn("m", 4)}, IntList{1, 2}},
          "cannot be used with stride");
  rejects(OpKind::kSlice, SliceParams{ref(x), {4, 0}, {dyn("q", 5), 4}, std::nullopt}, "exceeds");
}

TEST_F(MovementInferTest, Split) {
  OperandId x = in({4, 6});
  ASSERT_EQ(outputs(OpKind::kSplit, SplitParams{ref(x), Splits{true, 3, {}}, 1}), 3u);
  EXPECT_EQ(out(OpKind::kSplit, SplitParams{ref(x), Splits{true, 3, {}}, 1}, 2).shape,
            (Shape{4, 2}));
  EXPECT_EQ(out(OpKind::kSplit, SplitParams{ref(x), Splits{false, 0, {1, 3}}, 0}, 1).shape,
            (Shape{3, 6}));
  rejects(OpKind::kSplit, SplitParams{ref(x), Splits{true, 4, {}}, 1}, "not divisible");
  rejects(OpKind::kSplit, SplitParams{ref(x), Splits{true, 0, {}}, 1}, "between 1 and 8192");
  rejects(OpKind::kSplit, SplitParams{ref(x), Splits{false, 0, {2, 3}}, 1}, "sum to 5");
  rejects(OpKind::kSplit, SplitParams{ref(x), Splits{false, 0, {0, 4}}, 0}, "splits[0] 0");
  rejects(OpKind::kSplit, SplitParams{ref(x), Splits{false, 0, {}}, 0}, "between 1 and 8192");
  rejects(OpKind::kSplit, SplitParams{ref(x), Splits{true, 2, {}}, 2}, "axis 2 is out of range");
  rejects(OpKind::kSplit, SplitParams{ref(in({})), Splits{true, 1, {}}, 0}, "rank");
  OperandId d = in({dyn("n", 8), 6});
  rejects(OpKind::kSplit, SplitParams{ref(d), Splits{true, 2, {}}, 0}, "dynamic dimension 'n'");
  EXPECT_EQ(out(OpKind::kSplit, SplitParams{ref(d), Splits{true, 2, {}}, 1}).shape,
            (Shape{dyn("n", 8), 3}));
}

TEST_F(MovementInferTest, Tile) {
  EXPECT_EQ(out(OpKind::kTile, TileParams{ref(in({2, 3})), {3, 1}}).shape, (Shape{6, 3}));
  EXPECT_EQ(out(OpKind::kTile, TileParams{ref(in({})), {}}).shape, Shape{});
  EXPECT_EQ(out(OpKind::kTile, TileParams{ref(in({dyn("s", 4), 2})), {2, 2}}).shape,
            (Shape{dyn("2*s", 8), 4}));
  EXPECT_EQ(out(OpKind::kTile, TileParams{ref(in({dyn("s", 4)})), {1}}).shape,
            (Shape{dyn("s", 4)}));
  rejects(OpKind::kTile, TileParams{ref(in({2, 3})), {2}}, "repetitions length 1");
  rejects(OpKind::kTile, TileParams{ref(in({2, 3})), {1, 0}}, "repetitions[1] 0");
  rejects(OpKind::kTile, TileParams{ref(in({1 << 20})), {1 << 12}}, "not a valid dimension");
}

TEST_F(MovementInferTest, Transpose) {
  OperandId x = in({2, dyn("n", 5), 4});
  EXPECT_EQ(out(OpKind::kTranspose, TransposeParams{ref(x), std::nullopt}).shape,
            (Shape{4, dyn("n", 5), 2}));
  EXPECT_EQ(out(OpKind::kTranspose, TransposeParams{ref(x), IntList{1, 2, 0}}).shape,
            (Shape{dyn("n", 5), 4, 2}));
  rejects(OpKind::kTranspose, TransposeParams{ref(x), IntList{1, 0}}, "permutation length 2");
  rejects(OpKind::kTranspose, TransposeParams{ref(x), IntList{0, 1, 1}}, "duplicate axis 1");
  rejects(OpKind::kTranspose, TransposeParams{ref(x), IntList{0, 1, 3}}, "3 is out of range");
}

TEST_F(MovementInferTest, PadShapesAndCompatForms) {
  OperandId x = in({2, 3});
  EXPECT_EQ(out(OpKind::kPad, PadParams{ref(x), {1, 2}, IntList{0, 3}}).shape, (Shape{3, 8}));
  // pywebnn: a single list of 2*rank entries holds the beginnings then the endings.
  EXPECT_EQ(out(OpKind::kPad, PadParams{ref(x), {1, 2, 0, 3}, std::nullopt}).shape, (Shape{3, 8}));
  // Only beginnings given: endings are zero.
  EXPECT_EQ(out(OpKind::kPad, PadParams{ref(x), {1, 2}, std::nullopt}).shape, (Shape{3, 5}));
  PadParams reflect{ref(x), {1, 2}, IntList{1, 2}, "reflection"};
  EXPECT_EQ(out(OpKind::kPad, reflect).shape, (Shape{4, 7}));
  PadParams symmetric{ref(x), {2, 3}, IntList{0, 0}, "symmetric"};
  EXPECT_EQ(out(OpKind::kPad, symmetric).shape, (Shape{4, 6}));
  OperandId d = in({dyn("past", 8), 4});
  EXPECT_EQ(out(OpKind::kPad, PadParams{ref(d), {1, 0}, IntList{2, 0}}).shape,
            (Shape{dyn("past + 3", 11), 4}));
  EXPECT_EQ(out(OpKind::kPad, PadParams{ref(d), {0, 1}, IntList{0, 0}}).shape,
            (Shape{dyn("past", 8), 5}));
}

TEST_F(MovementInferTest, PadRejections) {
  OperandId x = in({2, 3});
  rejects(OpKind::kPad, PadParams{ref(x), {1, 1, 1}, IntList{1, 1, 1}},
          "must both equal the input rank 2");
  rejects(OpKind::kPad, PadParams{ref(x), {1, 1, 1}, std::nullopt}, "beginning_padding length 3");
  rejects(OpKind::kPad, PadParams{ref(x), {1, 1}, IntList{1, 1}, "wrap"}, "mode 'wrap'");
  rejects(OpKind::kPad, PadParams{ref(x), {2, 0}, IntList{0, 0}, "reflection"},
          "reflection padding 2 on axis 0");
  rejects(OpKind::kPad, PadParams{ref(x), {0, 0}, IntList{0, 4}, "symmetric"},
          "symmetric padding 4 on axis 1");
  rejects(OpKind::kPad, PadParams{ref(x), {0, kMaxDimension}, IntList{0, 0}},
          "not a valid dimension");
}

TEST_F(MovementInferTest, ReverseAndTriangular) {
  OperandId x = in({2, 3});
  EXPECT_EQ(out(OpKind::kReverse, AxesParams{ref(x), std::nullopt}).shape, (Shape{2, 3}));
  EXPECT_EQ(out(OpKind::kReverse, AxesParams{ref(x), IntList{}}).shape, (Shape{2, 3}));
  rejects(OpKind::kReverse, AxesParams{ref(x), IntList{1, 1}}, "duplicate axis 1");
  rejects(OpKind::kReverse, AxesParams{ref(x), IntList{2}}, "2 is out of range");
  EXPECT_EQ(out(OpKind::kTriangular, TriangularParams{ref(x), false, -4}).shape, (Shape{2, 3}));
  rejects(OpKind::kTriangular, TriangularParams{ref(in({3})), true, 0}, "rank");
  rejects(OpKind::kTriangular, TriangularParams{ref(in({2, 2}, DataType::kInt4)), true, 0},
          "data type int4");
}

TEST_F(MovementInferTest, SqueezeUnsqueeze) {
  OperandId x = in({1, 2, 1, dyn("n", 1)});
  EXPECT_EQ(out(OpKind::kSqueeze, AxesParams{ref(x), std::nullopt}).shape, (Shape{2, dyn("n", 1)}));
  EXPECT_EQ(out(OpKind::kSqueeze, AxesParams{ref(x), IntList{2}}).shape,
            (Shape{1, 2, dyn("n", 1)}));
  rejects(OpKind::kSqueeze, AxesParams{ref(x), IntList{1}}, "axis 1 has size 2");
  rejects(OpKind::kSqueeze, AxesParams{ref(x), IntList{3}}, "only axes of size 1");
  rejects(OpKind::kSqueeze, AxesParams{ref(x), IntList{4}}, "4 is out of range");
  OperandId y = in({2, 3});
  EXPECT_EQ(out(OpKind::kUnsqueeze, UnsqueezeParams{ref(y), {3, 0}}).shape, (Shape{1, 2, 3, 1}));
  rejects(OpKind::kUnsqueeze, UnsqueezeParams{ref(y), {3}}, "3 is out of range");
  rejects(OpKind::kUnsqueeze, UnsqueezeParams{ref(y), {0, 0}}, "duplicate axis 0");
  rejects(OpKind::kUnsqueeze, UnsqueezeParams{ref(y), {0, 1, 2, 3, 4, 5, 6}}, "output rank 9");
}

TEST_F(MovementInferTest, ShapeIsInt64Rank) {
  EXPECT_EQ(out(OpKind::kShape, UnaryParams{ref(in({dyn("n", 3), 2, 7}, DataType::kUint4))}),
            (OperandDesc{DataType::kInt64, {3}}));
  rejects(OpKind::kShape, UnaryParams{ref(in({}))}, "rank");
}

}  // namespace
}  // namespace webnn
