// The compiler passes (src/graph/passes) and the memory plan (src/runtime/memory_plan.h):
// structure of rewritten graphs, and their results against the unoptimised graph.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "float_bytes.h"
#include "graph/passes/pass.h"
#include "ops/fused_chain.h"
#include "runtime/memory_plan.h"
#include "webnn/builder.h"
#include "webnn/context.h"

namespace webnn {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

OperandId op(GraphBuilder& b, OpKind kind, OpParams params) {
  auto out = b.add_op(kind, std::move(params));
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return (*out)[0];
}

OperandId constant(GraphBuilder& b, const Shape& shape, const std::vector<float>& v) {
  return *b.constant({DataType::kFloat32, shape}, bytes_of(v));
}

int count_kind(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.kind == kind;
  return n;
}

// Runs `graph` (one float32 input "x", one output "y") on `backend` with WEBNN_PASSES=`passes`.
std::vector<float> run(const Graph& graph, const char* backend, const char* passes,
                       const std::vector<float>& x, const char* memory_plan = "all") {
  setenv("WEBNN_PASSES", passes, 1);
  setenv("WEBNN_MEMORY_PLAN", memory_plan, 1);
  auto ctx = *Context::create("default", false, backend);
  auto compiled = ctx->compile(graph);
  unsetenv("WEBNN_PASSES");
  unsetenv("WEBNN_MEMORY_PLAN");
  EXPECT_TRUE(compiled.has_value()) << compiled.status().message();
  const Graph& g = (*compiled)->graph();
  auto in_shape = static_sizes(g.desc(g.inputs[0]).shape);
  auto out_shape = static_sizes(g.desc(g.outputs[0].id).shape);
  auto xt = *ctx->create_tensor(DataType::kFloat32, in_shape, false, true, false);
  auto yt = *ctx->create_tensor(DataType::kFloat32, out_shape, true, false, false);
  auto xb = bytes_of(x);
  EXPECT_TRUE(ctx->write_tensor(*xt, xb.data(), xb.size(), x.size()).is_ok());
  Status s = ctx->dispatch(**compiled, {{"x", xt.get()}}, {{"y", yt.get()}});
  EXPECT_TRUE(s.is_ok()) << s.message();
  return floats_of(*ctx->read_tensor(*yt));
}

Graph optimized(const Graph& graph, const char* backend, const char* passes = "all") {
  Graph g = graph;
  auto report = optimize(g, backend, passes);
  EXPECT_TRUE(report.has_value()) << report.status().message();
  return g;
}

// x[1,8,6,6] -> conv 3x3 (bias) -> batchNorm -> hardSwish -> add(x-branch conv 1x1) -> relu
Graph conv_block(bool nhwc = false) {
  GraphBuilder b;
  const int64_t c = 8;
  Shape xs = nhwc ? Shape{1, 6, 6, c} : Shape{1, c, 6, 6};
  OperandId x = *b.input("x", xs, DataType::kFloat32);
  Conv2dParams p;
  p.input = {x};
  p.filter = {constant(b, {c, c, 3, 3}, random_floats(c * c * 9, 1, -0.3f, 0.3f))};
  p.bias = {constant(b, {c}, random_floats(c, 2))};
  p.padding = std::vector<int64_t>{1, 1, 1, 1};
  if (nhwc) p.input_layout = "nhwc";
  OperandId y = op(b, OpKind::kConv2d, p);
  BatchNormalizationParams bn;
  bn.input = {y};
  bn.mean = {constant(b, {c}, random_floats(c, 3))};
  bn.variance = {constant(b, {c}, random_floats(c, 4, 0.5f, 2.0f))};
  bn.scale = {constant(b, {c}, random_floats(c, 5))};
  bn.bias = {constant(b, {c}, random_floats(c, 6))};
  bn.axis = nhwc ? 3 : 1;
  y = op(b, OpKind::kBatchNormalization, bn);
  y = op(b, OpKind::kHardSwish, HardSwishParams{{y}});
  Conv2dParams q;
  q.input = {x};
  q.filter = {constant(b, {c, c, 1, 1}, random_floats(c * c, 7))};
  if (nhwc) q.input_layout = "nhwc";
  OperandId r = op(b, OpKind::kConv2d, q);
  y = op(b, OpKind::kAdd, BinaryParams{{y}, {r}});
  y = op(b, OpKind::kRelu, UnaryParams{{y}});
  return *b.finish({{"y", y}});
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
  }
}

TEST(PassesTest, SelectPassesRejectsUnknownNames) {
  auto bad = select_passes("dead_code,fuse_everything");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("fuse_everything"), std::string::npos);
  auto none = *select_passes("none");
  ASSERT_FALSE(none.empty());
  for (const Pass* p : none) EXPECT_STREQ(p->name, "dead_code");
}

TEST(PassesTest, DeadCodeRemovesNodesNoOutputReaches) {
  GraphBuilder b;
  OperandId x = *b.input("x", {4}, DataType::kFloat32);
  OperandId y = op(b, OpKind::kRelu, UnaryParams{{x}});
  OperandId z = op(b, OpKind::kExp, UnaryParams{{x}});
  Graph g = *b.finish({{"y", y}, {"z", z}});
  g.outputs.pop_back();  // z is no longer wanted: its node is dead
  EXPECT_EQ(*remove_dead_code(g), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].kind, OpKind::kRelu);
  EXPECT_EQ(g.operands[y].producer, 0);
  EXPECT_EQ(g.inputs.size(), 1u);  // inputs stay declared
}

TEST(PassesTest, ReferenceGetsOnlyDeadCodeRemoval) {
  Graph g = optimized(conv_block(), "reference");
  EXPECT_EQ(g.nodes.size(), conv_block().nodes.size());
  for (const Node& n : g.nodes) EXPECT_TRUE(n.epilogue.empty());
}

TEST(PassesTest, ConstantFoldingEvaluatesConstantSubgraphs) {
  GraphBuilder b;
  OperandId x = *b.input("x", {2, 3}, DataType::kFloat32);
  OperandId c1 = constant(b, {2, 3}, {1, 2, 3, 4, 5, 6});
  OperandId c2 = constant(b, {3}, {10, 20, 30});
  OperandId c = op(b, OpKind::kMul, BinaryParams{{c1}, {c2}});
  OperandId y = op(b, OpKind::kSub, BinaryParams{{x}, {c}});
  Graph built = *b.finish({{"y", y}});
  Graph g = optimized(built, "cpu", "constant_folding");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].kind, OpKind::kSub);
  EXPECT_EQ(g.operands[c].kind, OperandKind::kConstant);
  std::vector<float> folded(6);
  std::memcpy(folded.data(), g.operands[c].constant->data(), 24);
  EXPECT_EQ(folded, (std::vector<float>{10, 40, 90, 40, 100, 180}));
  std::vector<float> xv = {1, 1, 1, 1, 1, 1};
  EXPECT_EQ(run(built, "cpu", "all", xv), (std::vector<float>{-9, -39, -89, -39, -99, -179}));
}

TEST(PassesTest, ConstantFoldingKeepsLargeExpansions) {
  GraphBuilder b;
  OperandId x = *b.input("x", {256, 256}, DataType::kFloat32);
  OperandId c = constant(b, {1}, {2});
  NewShapeParams e;
  e.input = {c};
  e.new_shape = {256, 256};
  OperandId big = op(b, OpKind::kExpand, e);
  OperandId y = op(b, OpKind::kMul, BinaryParams{{x}, {big}});
  Graph g = optimized(*b.finish({{"y", y}}), "cpu", "constant_folding");
  EXPECT_EQ(count_kind(g, OpKind::kExpand), 1);  // 256 KB from 4 bytes: not folded
}

TEST(PassesTest, BatchNormFoldsIntoConvolution) {
  for (bool nhwc : {false, true}) {
    Graph built = conv_block(nhwc);
    Graph g = optimized(built, "cpu", "batch_norm_folding");
    EXPECT_EQ(count_kind(g, OpKind::kBatchNormalization), 0);
    EXPECT_EQ(count_kind(g, OpKind::kConv2d), 2);
    EXPECT_EQ(g.nodes.size(), built.nodes.size() - 1);
    std::vector<float> x = random_floats(8 * 36, 9);
    expect_close(run(built, "cpu", "batch_norm_folding", x), run(built, "reference", "none", x),
                 1e-5f);
  }
}

TEST(PassesTest, PerChannelMulAddFoldIntoConvolution) {
  GraphBuilder b;
  OperandId x = *b.input("x", {1, 4, 5, 5}, DataType::kFloat32);
  Conv2dParams p;
  p.input = {x};
  p.filter = {constant(b, {4, 4, 3, 3}, random_floats(144, 11))};
  OperandId y = op(b, OpKind::kConv2d, p);
  y = op(b, OpKind::kMul, BinaryParams{{constant(b, {4, 1, 1}, {1, 2, 3, 4})}, {y}});
  y = op(b, OpKind::kAdd, BinaryParams{{y}, {constant(b, {1, 4, 1, 1}, {0.5, -1, 2, 0})}});
  Graph built = *b.finish({{"y", y}});
  Graph g = optimized(built, "cpu", "batch_norm_folding");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(g.nodes[0].as<Conv2dParams>().bias.present());
  std::vector<float> xv = random_floats(100, 12);
  expect_close(run(built, "cpu", "batch_norm_folding", xv), run(built, "reference", "none", xv),
               1e-5f);
}

TEST(PassesTest, EpilogueFusionMovesTheChainIntoTheConvolution) {
  Graph built = conv_block();
  Graph g = optimized(built, "cpu");
  // x to NHWC once; the 1x1 conv (the residual branch, built later); the 3x3 conv with
  // batchNorm folded and hardSwish, add and relu fused, run where the add was; back to NCHW.
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].kind, OpKind::kTranspose);
  EXPECT_EQ(g.nodes[1].kind, OpKind::kConv2d);
  EXPECT_TRUE(g.nodes[1].epilogue.empty());
  EXPECT_EQ(g.nodes[2].kind, OpKind::kConv2d);
  ASSERT_EQ(g.nodes[2].epilogue.size(), 3u);
  EXPECT_EQ(g.nodes[2].epilogue[0].op.kind, OpKind::kHardSwish);
  EXPECT_EQ(g.nodes[2].epilogue[1].op.kind, OpKind::kAdd);
  EXPECT_EQ(g.nodes[2].epilogue[2].op.kind, OpKind::kRelu);
  EXPECT_EQ(g.nodes[2].as<Conv2dParams>().filter_layout, "oihw");
  EXPECT_EQ(g.nodes[3].kind, OpKind::kTranspose);
  EXPECT_EQ(g.nodes[3].outputs[0], built.outputs[0].id);
}

TEST(PassesTest, FusedGraphIsBitIdenticalToUnfused) {
  for (bool nhwc : {false, true}) {
    Graph built = conv_block(nhwc);
    std::vector<float> x = random_floats(8 * 36, 13, -3, 3);
    const char* unfused = "constant_folding,batch_norm_folding,layout_assignment";
    std::vector<float> want = run(built, "cpu", unfused, x, "none");
    EXPECT_EQ(run(built, "cpu", "all", x), want);
    EXPECT_EQ(run(built, "cpu", "all", x, "none"), want);
    expect_close(want, run(built, "reference", "none", x), 1e-5f);
  }
}

TEST(PassesTest, ElementwiseChainWithBroadcastConstantsFuses) {
  GraphBuilder b;
  OperandId x = *b.input("x", {2, 3, 4, 5}, DataType::kFloat32);
  OperandId y = op(b, OpKind::kMul, BinaryParams{{x}, {constant(b, {1}, {0.5f})}});
  y = op(b, OpKind::kAdd, BinaryParams{{constant(b, {3, 1, 1}, {1, 2, 3})}, {y}});
  y = op(b, OpKind::kSub, BinaryParams{{y}, {constant(b, {5}, {1, 2, 3, 4, 5})}});
  y = op(b, OpKind::kSigmoid, UnaryParams{{y}});
  y = op(b, OpKind::kDiv, BinaryParams{{x}, {y}});
  y = op(b, OpKind::kClamp, ClampParams{{y}, Scalar::from_double(-2), Scalar::from_double(2)});
  Graph built = *b.finish({{"y", y}});
  Graph g = optimized(built, "cpu");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].epilogue.size(), 5u);
  std::vector<float> xv = random_floats(120, 14, -4, 4);
  EXPECT_EQ(run(built, "cpu", "all", xv), run(built, "cpu", "none", xv, "none"));
  expect_close(run(built, "cpu", "all", xv), run(built, "reference", "none", xv), 1e-5f);
}

// NHWC conv x -> x * clamp(x + 3, 0, 6) / 6 (ONNX's decomposed hardSwish: x is read twice)
// -> per-channel mul and add -> y.
Graph conv_decomposed_hard_swish(int64_t c, int64_t hw) {
  GraphBuilder b;
  OperandId in = *b.input("x", {1, hw, hw, c}, DataType::kFloat32);
  Conv2dParams p;
  p.input = {in};
  p.filter = {constant(b, {c, c, 3, 3}, random_floats(c * c * 9, 41, -0.3f, 0.3f))};
  p.padding = std::vector<int64_t>{1, 1, 1, 1};
  p.input_layout = "nhwc";
  OperandId x = op(b, OpKind::kConv2d, p);
  OperandId t = op(b, OpKind::kAdd, BinaryParams{{x}, {constant(b, {}, {3.0f})}});
  t = op(b, OpKind::kClamp, ClampParams{{t}, Scalar::from_double(0), Scalar::from_double(6)});
  t = op(b, OpKind::kMul, BinaryParams{{x}, {t}});
  t = op(b, OpKind::kDiv, BinaryParams{{t}, {constant(b, {}, {6.0f})}});
  t = op(b, OpKind::kMul, BinaryParams{{t}, {constant(b, {c}, random_floats(c, 42))}});
  t = op(b, OpKind::kAdd, BinaryParams{{constant(b, {c}, random_floats(c, 43))}, {t}});
  return *b.finish({{"y", t}});
}

TEST(PassesTest, StepsReadingAnEarlierChainValueFuseIntoTheConvolution) {
  for (int64_t c : {5, 40}) {
    Graph built = conv_decomposed_hard_swish(c, c == 5 ? 6 : 23);
    Graph g = optimized(built, "cpu");
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].kind, OpKind::kConv2d);
    ASSERT_EQ(g.nodes[0].epilogue.size(), 6u);
    EXPECT_EQ(g.nodes[0].outputs[0], built.outputs[0].id);
    std::vector<int> reg;
    ASSERT_TRUE(assign_chain_registers(g.nodes[0], &reg));
    EXPECT_EQ(reg, (std::vector<int>{0, 1, 1, 0, 0, 0, 0}));  // x stays in the output block
    const Shape& xs = built.desc(built.inputs[0]).shape;
    std::vector<float> xv = random_floats(xs[1].value * xs[2].value * c, 44, -4, 4);
    const char* unfused = "constant_folding,batch_norm_folding,layout_assignment";
    std::vector<float> want = run(built, "cpu", unfused, xv, "none");
    EXPECT_EQ(run(built, "cpu", "all", xv), want);
    EXPECT_EQ(run(built, "cpu", "all", xv, "none"), want);
    // 40 channels run on the Winograd kernel, whose sums of 360 products of |x| <= 4 are a few
    // 1e-5 from the reference's.
    expect_close(want, run(built, "reference", "none", xv), c == 40 ? 1e-4f : 1e-5f);
  }
}

TEST(PassesTest, ChainValueReadOutsideTheChainEndsTheGroup) {
  // x = conv; a = x + 1; r = reduceMean(x) (not element-wise); y = a * r. x has a reader that
  // cannot join, so x must stay a buffer: conv + add cannot fuse (a's chain would need x).
  GraphBuilder b;
  OperandId in = *b.input("x", {1, 4, 4, 3}, DataType::kFloat32);
  Conv2dParams p;
  p.input = {in};
  p.filter = {constant(b, {3, 1, 1, 3}, random_floats(9, 51))};
  p.input_layout = "nhwc";
  p.filter_layout = "ohwi";
  OperandId x = op(b, OpKind::kConv2d, p);
  OperandId a = op(b, OpKind::kAdd, BinaryParams{{x}, {constant(b, {1}, {1.0f})}});
  ReduceParams rp;
  rp.input = {x};
  rp.axes = IntList{1, 2};
  rp.keep_dimensions = true;
  OperandId r = op(b, OpKind::kReduceMean, rp);
  OperandId y = op(b, OpKind::kMul, BinaryParams{{a}, {r}});
  Graph built = *b.finish({{"y", y}});
  Graph g = optimized(built, "cpu");
  for (const Node& n : g.nodes) {
    if (n.kind == OpKind::kConv2d) EXPECT_TRUE(n.epilogue.empty());
  }
  std::vector<float> xv = random_floats(48, 52);
  EXPECT_EQ(run(built, "cpu", "all", xv), run(built, "cpu", "none", xv, "none"));
  expect_close(run(built, "cpu", "all", xv), run(built, "reference", "none", xv), 1e-5f);
}

TEST(PassesTest, ChainsNeedingMoreScratchBlocksThanThereAreStayCorrect) {
  // y = (x+1)*(x+2)*...: k values live at once; beyond kMaxChainSlots the group is cut.
  for (int k : {3, kMaxChainSlots + 3}) {
    GraphBuilder b;
    OperandId x = *b.input("x", {3, 700}, DataType::kFloat32);
    OperandId e = op(b, OpKind::kExp, UnaryParams{{x}});
    std::vector<OperandId> terms;
    for (int i = 0; i < k; ++i) {
      terms.push_back(op(b, OpKind::kAdd, BinaryParams{{e}, {constant(b, {1}, {float(i)})}}));
    }
    OperandId y = terms[0];
    for (int i = 1; i < k; ++i) y = op(b, OpKind::kMul, BinaryParams{{y}, {terms[i]}});
    y = op(b, OpKind::kSub, BinaryParams{{y}, {e}});
    Graph built = *b.finish({{"y", y}});
    Graph g = optimized(built, "cpu");
    for (const Node& n : g.nodes) {
      std::vector<int> reg;
      if (!n.epilogue.empty()) EXPECT_TRUE(assign_chain_registers(n, &reg));
    }
    if (k == 3) EXPECT_EQ(g.nodes.size(), 1u);
    std::vector<float> xv = random_floats(2100, 53, -2, 2);
    std::vector<float> want = run(built, "cpu", "none", xv, "none");
    EXPECT_EQ(run(built, "cpu", "all", xv), want);
    EXPECT_EQ(run(built, "cpu", "all", xv, "none"), want);
    expect_close(want, run(built, "reference", "none", xv), 1e-5f);
  }
}

// x[2,5,12] -> heads [2,5,3,4] -> transpose [0,2,1,3] -> matmul with itself transposed
// [0,2,3,1] (the scores) -> softmax -> matmul by the heads (P V) -> transpose [0,2,1,3] ->
// reshape [2,5,12]: a self-attention core with the exports' transposes.
Graph attention_core() {
  GraphBuilder b;
  OperandId x = *b.input("x", {2, 5, 12}, DataType::kFloat32);
  OperandId h = op(b, OpKind::kReshape, NewShapeParams{{x}, {2, 5, 3, 4}});
  OperandId q = op(b, OpKind::kTranspose, TransposeParams{{h}, IntList{0, 2, 1, 3}});
  OperandId kt = op(b, OpKind::kTranspose, TransposeParams{{h}, IntList{0, 2, 3, 1}});
  OperandId v = op(b, OpKind::kTranspose, TransposeParams{{h}, IntList{0, 2, 1, 3}});
  OperandId s = op(b, OpKind::kMatmul, BinaryParams{{q}, {kt}});
  OperandId p = op(b, OpKind::kSoftmax, SoftmaxParams{{s}, 3});
  OperandId c = op(b, OpKind::kMatmul, BinaryParams{{p}, {v}});
  OperandId m = op(b, OpKind::kTranspose, TransposeParams{{c}, IntList{0, 2, 1, 3}});
  OperandId y = op(b, OpKind::kReshape, NewShapeParams{{m}, {2, 5, 12}});
  return *b.finish({{"y", y}});
}

TEST(PassesTest, MatmulTransposesFoldIntoTheMatmuls) {
  Graph g = optimized(attention_core(), "cpu");
  // All four fold: Q's and K^T's into the scores, V's and the merge into P V.
  EXPECT_EQ(count_kind(g, OpKind::kTranspose), 0);
  int permuted = 0;
  for (const Node& n : g.nodes) {
    if (n.kind != OpKind::kMatmul) continue;
    ASSERT_NE(n.permuted, nullptr);
    ++permuted;
    if (!n.permuted->out.empty()) {
      EXPECT_EQ(n.permuted->out, (std::vector<int64_t>{0, 2, 1, 3}));
      EXPECT_EQ(n.permuted->b, (std::vector<int64_t>{0, 2, 1, 3}));
      EXPECT_EQ(g.desc(n.outputs[0]).shape, (Shape{2, 5, 3, 4}));  // stored transposed
    } else {
      EXPECT_EQ(n.permuted->a, (std::vector<int64_t>{0, 2, 1, 3}));
      EXPECT_EQ(n.permuted->b, (std::vector<int64_t>{0, 2, 3, 1}));
    }
  }
  EXPECT_EQ(permuted, 2);
  EXPECT_EQ(count_kind(optimized(attention_core(), "reference"), OpKind::kTranspose), 4);

  const std::vector<float> x = random_floats(2 * 5 * 12, 21, -2, 2);
  const char* without = "constant_folding,layout_assignment,epilogue_fusion";
  std::vector<float> want = run(attention_core(), "cpu", without, x);
  EXPECT_EQ(run(attention_core(), "cpu", "all", x), want);
  EXPECT_EQ(run(attention_core(), "cpu", "all", x, "none"), want);
  expect_close(want, run(attention_core(), "reference", "none", x), 1e-5f);
}

TEST(PassesTest, CanonicalizationWritesDefaultOptionsIntoTheNodes) {
  GraphBuilder b;
  OperandId x = *b.input("x", {1, 3, 7, 9}, DataType::kFloat32);
  Conv2dParams c;
  c.input = {x};
  c.filter = {constant(b, {4, 3, 3, 3}, random_floats(108, 61))};
  OperandId y = op(b, OpKind::kConv2d, c);
  ConvTranspose2dParams t;
  t.input = {y};
  t.filter = {constant(b, {4, 2, 2, 2}, random_floats(32, 62))};
  y = op(b, OpKind::kConvTranspose2d, t);
  Pool2dParams mp;
  mp.input = {y};
  mp.window_dimensions = IntList{2, 2};
  y = op(b, OpKind::kMaxPool2d, mp);
  Pool2dParams ap;
  ap.input = {y};
  y = op(b, OpKind::kAveragePool2d, ap);  // the whole plane
  Graph built = *b.finish({{"y", y}});
  Graph g = optimized(built, "cpu", "canonicalization");
  ASSERT_EQ(g.nodes.size(), 4u);
  const auto& cp = g.nodes[0].as<Conv2dParams>();
  EXPECT_EQ(*cp.strides, (IntList{1, 1}));
  EXPECT_EQ(*cp.dilations, (IntList{1, 1}));
  EXPECT_EQ(*cp.padding, (IntList{0, 0, 0, 0}));
  const auto& tp = g.nodes[1].as<ConvTranspose2dParams>();
  EXPECT_EQ(*tp.output_padding, (IntList{0, 0}));
  EXPECT_EQ(*tp.padding, (IntList{0, 0, 0, 0}));
  EXPECT_EQ(*g.nodes[2].as<Pool2dParams>().strides, (IntList{1, 1}));
  // conv 7x9 -> 5x7, convTranspose 2x2 -> 6x8, max pool 2x2 -> 5x7.
  EXPECT_EQ(*g.nodes[3].as<Pool2dParams>().window_dimensions, (IntList{5, 7}));
  // The reference backend (the oracle) keeps the graph as built.
  Graph r = optimized(built, "reference", "canonicalization");
  EXPECT_FALSE(r.nodes[0].as<Conv2dParams>().strides.has_value());
  std::vector<float> xv = random_floats(189, 63);
  EXPECT_EQ(run(built, "cpu", "canonicalization", xv), run(built, "cpu", "none", xv));
  expect_close(run(built, "cpu", "all", xv), run(built, "reference", "none", xv), 1e-5f);
}

TEST(PassesTest, LayoutAssignmentKeepsConvolutionsInNhwc) {
  // NCHW: conv -> batchNorm (not folded: variable mean) -> relu -> mul [C,1,1] -> conv -> add
  // with the first conv's output -> max pool -> y.
  GraphBuilder b;
  OperandId x = *b.input("x", {1, 4, 6, 6}, DataType::kFloat32);
  OperandId mean = *b.input("mean", {4}, DataType::kFloat32);
  (void)mean;
  Conv2dParams p;
  p.input = {x};
  p.filter = {constant(b, {4, 4, 3, 3}, random_floats(144, 31))};
  p.padding = std::vector<int64_t>{1, 1, 1, 1};
  OperandId c1 = op(b, OpKind::kConv2d, p);
  OperandId y = op(b, OpKind::kRelu, UnaryParams{{c1}});
  y = op(b, OpKind::kMul, BinaryParams{{y}, {constant(b, {4, 1, 1}, {1, -2, 3, 0.5})}});
  p.input = {y};
  p.groups = 4;
  p.filter = {constant(b, {4, 1, 3, 3}, random_floats(36, 32))};
  y = op(b, OpKind::kConv2d, p);
  y = op(b, OpKind::kAdd, BinaryParams{{y}, {c1}});
  Pool2dParams pool;
  pool.input = {y};
  pool.window_dimensions = std::vector<int64_t>{2, 2};
  pool.strides = std::vector<int64_t>{2, 2};
  y = op(b, OpKind::kMaxPool2d, pool);
  Graph built = *b.finish({{"y", y}});
  Graph g = optimized(built, "cpu", "layout_assignment");
  EXPECT_EQ(count_kind(g, OpKind::kTranspose), 2);  // at the input and at the output
  for (const Node& n : g.nodes) {
    if (n.kind == OpKind::kConv2d) EXPECT_EQ(n.as<Conv2dParams>().input_layout, "nhwc");
    if (n.kind == OpKind::kMaxPool2d) EXPECT_EQ(n.as<Pool2dParams>().layout, "nhwc");
  }
  EXPECT_EQ(g.nodes.back().kind, OpKind::kTranspose);
  EXPECT_EQ(g.nodes.back().outputs[0], built.outputs[0].id);
  std::vector<float> xv = random_floats(144, 33);
  expect_close(run(built, "cpu", "all", xv), run(built, "reference", "none", xv), 1e-5f);
}

TEST(PassesTest, StatsReportPassesAndArena) {
  auto ctx = *Context::create("default", false, "cpu");
  auto compiled = *ctx->compile(conv_block(/*nhwc=*/true));
  CompileStats s = compiled->stats();
  EXPECT_EQ(s.nodes_before, 6);
  EXPECT_EQ(s.nodes_after, 2);
  EXPECT_EQ(s.plans, 1u);
  // Intermediates: the 1x1 conv's output only (the fused 3x3 conv writes the graph output).
  EXPECT_EQ(s.unshared_bytes, 8u * 36 * 4);
  EXPECT_GE(s.arena_bytes, s.unshared_bytes);
}

TEST(PassesTest, PackedWeightsAreSharedByEveryPlan) {
  GraphBuilder b;
  OperandId x = *b.input("x", {Dim("n", 4), 6, 6, 8}, DataType::kFloat32);
  Conv2dParams p;
  p.input = {x};
  p.filter = {constant(b, {16, 3, 3, 8}, random_floats(16 * 72, 41))};
  p.input_layout = "nhwc";
  p.filter_layout = "ohwi";
  OperandId y = op(b, OpKind::kConv2d, p);
  Graph graph = *b.finish({{"y", y}});
  auto cpu = *Context::create("default", false, "cpu");
  auto ref = *Context::create("default", false, "reference");
  auto compiled = *cpu->compile(graph);
  auto oracle = *ref->compile(graph);
  for (int64_t n : {1, 3, 2}) {
    std::vector<float> xv = random_floats(static_cast<size_t>(n * 288), 42 + n);
    auto xb = bytes_of(xv);
    std::vector<std::vector<float>> outs;
    for (auto& [ctx, g] : {std::pair{cpu, compiled}, std::pair{ref, oracle}}) {
      auto xt = *ctx->create_tensor(DataType::kFloat32, {n, 6, 6, 8}, false, true, false);
      auto yt = *ctx->create_tensor(DataType::kFloat32, {n, 4, 4, 16}, true, false, false);
      ASSERT_TRUE(ctx->write_tensor(*xt, xb.data(), xb.size(), xv.size()).is_ok());
      ASSERT_TRUE(ctx->dispatch(*g, {{"x", xt.get()}}, {{"y", yt.get()}}).is_ok());
      outs.push_back(floats_of(*ctx->read_tensor(*yt)));
    }
    expect_close(outs[0], outs[1], 1e-5f);
  }
  CompileStats s = compiled->stats();
  EXPECT_EQ(s.plans, 3u);
  EXPECT_EQ(s.shared_constants, 1u);  // the filter, packed by the first plan only
}

// Random chains: no two values whose lifetimes overlap share bytes (except an in-place output
// over its input), and the arena is smaller than the sum of buffers.
TEST(MemoryPlanTest, LiveValuesNeverOverlap) {
  std::mt19937 rng(21);
  uint64_t arena = 0, unshared = 0;
  for (int trial = 0; trial < 20; ++trial) {
    GraphBuilder b;
    OperandId x = *b.input("x", {64}, DataType::kFloat32);
    std::vector<OperandId> values = {x};
    for (int i = 0; i < 30; ++i) {
      OperandId a = values[rng() % values.size()];
      OperandId c = values[rng() % values.size()];
      values.push_back(rng() % 2 ? op(b, OpKind::kAdd, BinaryParams{{a}, {c}})
                                 : op(b, OpKind::kRelu, UnaryParams{{a}}));
    }
    Graph g = *b.finish({{"y", values.back()}});
    std::vector<OperandDesc> descs;
    std::vector<uint64_t> bytes;
    for (const Operand& o : g.operands) {
      descs.push_back(o.desc);
      bytes.push_back(256);
    }
    MemoryPlan mp = plan_memory(g, descs, bytes, "cpu");
    EXPECT_LE(mp.arena_bytes, mp.unshared_bytes);
    arena += mp.arena_bytes;
    unshared += mp.unshared_bytes;
    // Lifetimes [def, last read].
    std::vector<int64_t> first(g.operands.size(), -1), last(g.operands.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (OperandId id : g.nodes[i].outputs) first[id] = last[id] = static_cast<int64_t>(i);
      for (OperandId id : g.nodes[i].inputs()) last[id] = static_cast<int64_t>(i);
    }
    for (size_t a = 0; a < g.operands.size(); ++a) {
      for (size_t c = a + 1; c < g.operands.size(); ++c) {
        if (mp.offset[a] < 0 || mp.offset[c] < 0 || mp.offset[a] != mp.offset[c]) continue;
        // Sharing bytes is allowed only when one dies where the other is born (in place).
        const bool disjoint = last[a] < first[c] || last[c] < first[a];
        const bool in_place = last[a] == first[c] || last[c] == first[a];
        EXPECT_TRUE(disjoint || in_place) << "operands " << a << " and " << c;
      }
    }
  }
  EXPECT_LT(arena * 2, unshared);
}

// Reshapes of graph inputs and constants are views of their buffers (aliases, not in the
// arena), through chains of reshapes; an element-wise reader never writes over them; a graph
// output that is a reshape of an input keeps its own bytes; inside the arena a reshape shares
// its input's slot even when the input lives on, and then nothing writes over that slot early.
TEST(MemoryPlanTest, ReshapesAliasInputsAndConstantsAndBlockInPlaceWrites) {
  GraphBuilder b;
  OperandId x = *b.input("x", {2, 1, 3, 4}, DataType::kFloat32);
  OperandId c = constant(b, {1, 24}, random_floats(24, 7));
  OperandId r1 = op(b, OpKind::kReshape, NewShapeParams{{x}, {2, 3, 4}});
  OperandId r2 = op(b, OpKind::kReshape, NewShapeParams{{r1}, {24}});
  OperandId a = op(b, OpKind::kRelu, UnaryParams{{r2}});  // would be in place over r2
  OperandId rc = op(b, OpKind::kReshape, NewShapeParams{{c}, {24}});
  OperandId v = op(b, OpKind::kAdd, BinaryParams{{a}, {rc}});
  OperandId w = op(b, OpKind::kReshape, NewShapeParams{{v}, {4, 6}});
  OperandId z = op(b, OpKind::kNeg, UnaryParams{{v}});  // v's bytes live on as w
  OperandId wz = op(b, OpKind::kReshape, NewShapeParams{{z}, {4, 6}});
  OperandId y = op(b, OpKind::kAdd, BinaryParams{{w}, {wz}});
  OperandId out_view = op(b, OpKind::kReshape, NewShapeParams{{x}, {24}});
  Graph g = *b.finish({{"y", y}, {"x_flat", out_view}});
  std::vector<OperandDesc> descs;
  std::vector<uint64_t> bytes;
  for (const Operand& o : g.operands) {
    descs.push_back(o.desc);
    bytes.push_back(96);
  }
  MemoryPlan mp = plan_memory(g, descs, bytes, "cpu");
  EXPECT_EQ(mp.alias[r1], x);
  EXPECT_EQ(mp.alias[r2], x);
  EXPECT_EQ(mp.alias[rc], c);
  for (OperandId id : {r1, r2, rc, out_view}) EXPECT_EQ(mp.offset[id], -1) << id;
  EXPECT_EQ(mp.alias[out_view], -1);  // a graph output: its own bytes
  for (OperandId id : {a, v, w, z, wz}) {
    EXPECT_GE(mp.offset[id], 0) << id;
    EXPECT_EQ(mp.alias[id], -1) << id;
  }
  EXPECT_EQ(mp.offset[w], mp.offset[v]);   // a reshape of a value that lives on: same bytes
  EXPECT_EQ(mp.offset[wz], mp.offset[z]);  // and of one that dies there
  EXPECT_NE(mp.offset[z], mp.offset[v]);   // not over v: w reads those bytes after it
  // The reference backend (the oracle) copies every reshape.
  MemoryPlan ref = plan_memory(g, descs, bytes, "reference");
  for (OperandId id : {r1, r2, rc}) {
    EXPECT_EQ(ref.alias[id], -1);
    EXPECT_GE(ref.offset[id], 0);
  }

  // Dispatched: the results are the reference's, and the input tensor is unchanged.
  std::vector<float> xv = random_floats(24, 8);
  std::vector<std::vector<float>> ys, flats;
  for (const char* backend : {"cpu", "reference"}) {
    auto ctx = *Context::create("default", false, backend);
    auto compiled = *ctx->compile(g);
    auto xt = *ctx->create_tensor(DataType::kFloat32, {2, 1, 3, 4}, true, true, false);
    auto yt = *ctx->create_tensor(DataType::kFloat32, {4, 6}, true, false, false);
    auto ft = *ctx->create_tensor(DataType::kFloat32, {24}, true, false, false);
    auto xb = bytes_of(xv);
    ASSERT_TRUE(ctx->write_tensor(*xt, xb.data(), xb.size(), xv.size()).is_ok());
    for (int run = 0; run < 2; ++run) {
      Status s =
          ctx->dispatch(*compiled, {{"x", xt.get()}}, {{"y", yt.get()}, {"x_flat", ft.get()}});
      ASSERT_TRUE(s.is_ok()) << s.message();
      EXPECT_EQ(floats_of(*ctx->read_tensor(*xt)), xv) << backend;
    }
    ys.push_back(floats_of(*ctx->read_tensor(*yt)));
    flats.push_back(floats_of(*ctx->read_tensor(*ft)));
  }
  EXPECT_EQ(ys[0], ys[1]);
  EXPECT_EQ(flats[0], xv);
  EXPECT_EQ(flats[1], xv);
}

}  // namespace
}  // namespace webnn
