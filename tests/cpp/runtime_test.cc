// Context, tensors and dispatch from C++, including dynamic-dimension binding.
#include <gtest/gtest.h>

#include <cstring>

#include "float_bytes.h"
#include "webnn/builder.h"
#include "webnn/context.h"

namespace webnn {
namespace {

TEST(ContextTest, CreateSelectsCpuAndRejectsUnknown) {
  auto ctx = Context::create("default", true, "auto");
  ASSERT_TRUE(ctx.has_value());
  EXPECT_STREQ((*ctx)->backend_name(), "cpu");
  EXPECT_FALSE((*ctx)->accelerated());
  EXPECT_FALSE(Context::create("fast", false, "auto").has_value());
  auto unknown = Context::create("default", false, "onnx");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.status().message().find("reference"), std::string::npos);
}

TEST(ContextTest, DispatchWithDynamicBatch) {
  auto ctx = *Context::create("default", false, "reference");
  GraphBuilder b;
  OperandId x = *b.input("x", {Dim("n", 4), 2}, DataType::kFloat32);
  OperandId c = *b.constant({DataType::kFloat32, {2}}, bytes_of({10, 20}));
  OperandId y = (*b.add_op(OpKind::kAdd, BinaryParams{{x}, {c}}))[0];
  auto compiled = *ctx->compile(*b.finish({{"y", y}}));
  for (int64_t n : {1, 3, 2}) {
    auto xt = *ctx->create_tensor(DataType::kFloat32, {n, 2}, false, true, false);
    auto yt = *ctx->create_tensor(DataType::kFloat32, {n, 2}, true, false, false);
    std::vector<float> in(n * 2);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    auto in_bytes = bytes_of(in);
    ASSERT_TRUE(ctx->write_tensor(*xt, in_bytes.data(), in_bytes.size(), in.size()).is_ok());
    ASSERT_TRUE(ctx->dispatch(*compiled, {{"x", xt.get()}}, {{"y", yt.get()}}).is_ok());
    auto out = floats_of(*ctx->read_tensor(*yt));
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], in[i] + (i % 2 ? 20 : 10));
  }
  auto big = *ctx->create_tensor(DataType::kFloat32, {5, 2}, false, true, false);
  auto big_out = *ctx->create_tensor(DataType::kFloat32, {5, 2}, true, false, false);
  Status s = ctx->dispatch(*compiled, {{"x", big.get()}}, {{"y", big_out.get()}});
  EXPECT_EQ(s.kind(), ErrorKind::kRuntime);
  EXPECT_NE(s.message().find("maxSize"), std::string::npos);
}

TEST(TensorTest, ResizeAndCapacity) {
  auto ctx = *Context::create("default", false, "cpu");
  auto t = *ctx->create_tensor(DataType::kInt4, {3}, true, true, false);
  EXPECT_EQ(t->capacity(), 2u);
  ASSERT_TRUE(ctx->set_tensor_capacity(*t, {10}).is_ok());
  EXPECT_EQ(t->capacity(), 5u);
  ASSERT_TRUE(ctx->resize_tensor(*t, {7}).is_ok());
  EXPECT_EQ(t->byte_length(), 4u);
  EXPECT_EQ(t->capacity(), 5u);
  EXPECT_EQ(ctx->resize_tensor(*t, {-1}).kind(), ErrorKind::kOverflow);
  t->destroy();
  EXPECT_EQ(ctx->resize_tensor(*t, {1}).kind(), ErrorKind::kState);
}

// x + c on a [2, 2] float32 input: the graph the compute() tests run.
std::shared_ptr<CompiledGraph> add_constant_graph(const Context& ctx) {
  auto b = ctx.create_graph_builder();
  OperandId x = *b->input("x", {2, 2}, DataType::kFloat32);
  OperandId c = *b->constant({DataType::kFloat32, {2}}, bytes_of({10, 20}));
  OperandId y = (*b->add_op(OpKind::kAdd, BinaryParams{{x}, {c}}))[0];
  OperandId z = (*b->add_op(OpKind::kRelu, UnaryParams{{y}}))[0];
  return *ctx.compile(*b->finish({{"sum", y}, {"relu", z}}));
}

TEST(ComputeTest, RunsOnTemporaryTensorsAndReturnsEveryOutput) {
  for (const char* backend : {"cpu", "reference"}) {
    auto ctx = *Context::create("default", false, backend);
    auto g = add_constant_graph(*ctx);
    std::vector<float> x = {1, -30, 3, 4};
    // An extra name is ignored.
    auto out = ctx->compute(*g, {{"x", DataType::kFloat32, {2, 2}, bytes_of(x)},
                                 {"unused", DataType::kFloat32, {1}, bytes_of({0})}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[0].name, "sum");
    EXPECT_EQ((*out)[1].name, "relu");
    EXPECT_EQ((*out)[0].data_type, DataType::kFloat32);
    EXPECT_EQ((*out)[0].shape, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(floats_of((*out)[0].bytes), (std::vector<float>{11, -10, 13, 24}));
    EXPECT_EQ(floats_of((*out)[1].bytes), (std::vector<float>{11, 0, 13, 24}));
  }
}

TEST(ComputeTest, RejectsMissingMismatchedAndDynamicInputs) {
  auto ctx = *Context::create("default", false, "cpu");
  auto g = add_constant_graph(*ctx);
  auto missing = ctx->compute(*g, {});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().kind(), ErrorKind::kValue);
  EXPECT_EQ(missing.status().message(), "compute: Missing input 'x'");
  auto shape = ctx->compute(*g, {{"x", DataType::kFloat32, {4}, bytes_of({1, 2, 3, 4})}});
  ASSERT_FALSE(shape.has_value());
  EXPECT_EQ(shape.status().kind(), ErrorKind::kValue);
  EXPECT_EQ(shape.status().message(), "compute: input 'x' has shape [4], the graph expects [2,2]");
  auto type = ctx->compute(*g, {{"x", DataType::kInt32, {2, 2}, std::vector<uint8_t>(16)}});
  ASSERT_FALSE(type.has_value());
  EXPECT_EQ(type.status().kind(), ErrorKind::kValue);
  EXPECT_NE(type.status().message().find("data type int32"), std::string::npos);

  auto b = ctx->create_graph_builder();
  OperandId x = *b->input("x", {Dim("n", 4)}, DataType::kFloat32);
  OperandId y = (*b->add_op(OpKind::kRelu, UnaryParams{{x}}))[0];
  auto dynamic = *ctx->compile(*b->finish({{"y", y}}));
  auto d = ctx->compute(*dynamic, {{"x", DataType::kFloat32, {2}, bytes_of({1, 2})}});
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.status().kind(), ErrorKind::kValue);
  EXPECT_NE(d.status().message().find("dynamic dimensions; use resize_tensor + dispatch"),
            std::string::npos);
}

TEST(SupportLimitsTest, GlobalEntriesAndOneEntryPerOperation) {
  auto ctx = *Context::create("default", false, "cpu");
  SupportLimits limits = ctx->support_limits();
  EXPECT_EQ(limits.preferred_input_layout, "nchw");
  EXPECT_EQ(limits.max_tensor_byte_length, kMaxTensorByteLength);
  for (const OperandSupport* s : {&limits.input, &limits.constant, &limits.output}) {
    EXPECT_EQ(s->data_types, mask_to_list(kAllTypes)) << s->name;
    EXPECT_EQ(s->min_rank, 0);
    EXPECT_EQ(s->max_rank, static_cast<int>(kMaxRank));
  }
  EXPECT_EQ(limits.input.name, "input");
  EXPECT_EQ(limits.constant.name, "constant");
  EXPECT_EQ(limits.output.name, "output");
  ASSERT_EQ(limits.operations.size(), static_cast<size_t>(kOpCount));
  for (int i = 0; i < kOpCount; ++i) {
    EXPECT_EQ(limits.operations[i].kind, static_cast<OpKind>(i));
  }
  // The global input limits hold: a graph input of each listed type and of the maximum rank
  // builds; one rank above is rejected.
  auto b = ctx->create_graph_builder();
  for (DataType t : limits.input.data_types) {
    std::string name = std::string("x_") + data_type_name(t);
    EXPECT_TRUE(b->input(name, Shape(limits.input.max_rank, Dim(1)), t).has_value()) << name;
  }
  EXPECT_FALSE(
      b->input("deep", Shape(limits.input.max_rank + 1, Dim(1)), DataType::kFloat32).has_value());
}

}  // namespace
}  // namespace webnn
