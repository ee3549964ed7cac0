// Context, tensors and dispatch from C++, including dynamic-dimension binding.
#include <gtest/gtest.h>

#include <cstring>

#include "webnn/builder.h"
#include "webnn/context.h"

namespace webnn {
namespace {

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<float> floats_of(const std::vector<uint8_t>& b) {
  std::vector<float> out(b.size() / 4);
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}

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

}  // namespace
}  // namespace webnn
