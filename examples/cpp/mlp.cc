// A two-layer perceptron built, compiled and run through the public C++ API alone
// (include/webnn/*.h): y = softmax(relu(x·W1 + b1)·W2 + b2).
//
// Build: part of the CMake build (target webnn_example_mlp); ctest runs it, and it exits
// non-zero when the engine's result differs from the same network computed here with loops.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "webnn/builder.h"
#include "webnn/context.h"

namespace {

constexpr int kBatch = 2, kIn = 3, kHidden = 4, kOut = 2;

std::vector<uint8_t> to_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Exits with a message when a webnn call fails: every call returns Status or Expected.
template <class T>
T value_or_die(webnn::Expected<T> e, const char* what) {
  if (!e.has_value()) {
    std::fprintf(stderr, "%s failed: %s\n", what, e.status().message().c_str());
    std::exit(1);
  }
  return std::move(e).value();
}

webnn::OperandId add(webnn::GraphBuilder& b, webnn::OpKind kind, webnn::OpParams params) {
  return value_or_die(b.add_op(kind, std::move(params)), "add_op")[0];
}

// The same network with plain loops, in double.
std::vector<float> expected_output(const std::vector<float>& x, const std::vector<float>& w1,
                                   const std::vector<float>& b1, const std::vector<float>& w2,
                                   const std::vector<float>& b2) {
  std::vector<float> y(kBatch * kOut);
  for (int n = 0; n < kBatch; ++n) {
    double h[kHidden], z[kOut], sum = 0, max = -INFINITY;
    for (int j = 0; j < kHidden; ++j) {
      h[j] = b1[j];
      for (int i = 0; i < kIn; ++i) h[j] += double{x[n * kIn + i]} * w1[i * kHidden + j];
      h[j] = h[j] > 0 ? h[j] : 0;
    }
    for (int k = 0; k < kOut; ++k) {
      z[k] = b2[k];
      for (int j = 0; j < kHidden; ++j) z[k] += h[j] * w2[j * kOut + k];
      max = std::fmax(max, z[k]);
    }
    for (int k = 0; k < kOut; ++k) sum += std::exp(z[k] - max);
    for (int k = 0; k < kOut; ++k) y[n * kOut + k] = static_cast<float>(std::exp(z[k] - max) / sum);
  }
  return y;
}

}  // namespace

int main() {
  using namespace webnn;
  const std::vector<float> x = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};
  const std::vector<float> w1 = {0.1f, -0.2f, 0.3f, 0.4f,  -0.5f, 0.6f,
                                 0.7f, -0.8f, 0.9f, -1.0f, 0.2f,  0.1f};
  const std::vector<float> b1 = {0.01f, -0.02f, 0.03f, 0.5f};
  const std::vector<float> w2 = {1.0f, -1.0f, 0.5f, 0.25f, -0.3f, 0.8f, 0.6f, -0.4f};
  const std::vector<float> b2 = {0.1f, -0.1f};

  std::shared_ptr<Context> ctx = value_or_die(Context::create("default", false, "auto"), "create");
  std::shared_ptr<GraphBuilder> b = ctx->create_graph_builder();
  auto constant = [&](std::vector<int64_t> shape, const std::vector<float>& v) {
    return value_or_die(b->constant({DataType::kFloat32, to_shape(shape)}, to_bytes(v)),
                        "constant");
  };
  OperandId in = value_or_die(b->input("x", {kBatch, kIn}, DataType::kFloat32), "input");
  OperandId c_w1 = constant({kIn, kHidden}, w1), c_b1 = constant({kHidden}, b1);
  OperandId c_w2 = constant({kHidden, kOut}, w2), c_b2 = constant({kOut}, b2);

  GemmParams layer1;
  layer1.a = {in};
  layer1.b = {c_w1};
  layer1.c = {c_b1};
  OperandId hidden = add(*b, OpKind::kRelu, UnaryParams{{add(*b, OpKind::kGemm, layer1)}});
  GemmParams layer2;
  layer2.a = {hidden};
  layer2.b = {c_w2};
  layer2.c = {c_b2};
  SoftmaxParams softmax;
  softmax.input = {add(*b, OpKind::kGemm, layer2)};
  softmax.axis = 1;
  OperandId y = add(*b, OpKind::kSoftmax, softmax);

  Graph graph = value_or_die(b->finish({{"y", y}}), "build");
  std::shared_ptr<CompiledGraph> compiled = value_or_die(ctx->compile(std::move(graph)), "compile");
  std::vector<HostTensor> outputs = value_or_die(
      ctx->compute(*compiled, {{"x", DataType::kFloat32, {kBatch, kIn}, to_bytes(x)}}), "compute");

  std::vector<float> got(kBatch * kOut);
  std::memcpy(got.data(), outputs.at(0).bytes.data(), got.size() * sizeof(float));
  const std::vector<float> want = expected_output(x, w1, b1, w2, b2);
  int errors = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    std::printf("y[%zu] = %.6f (expected %.6f)\n", i, got[i], want[i]);
    if (std::fabs(got[i] - want[i]) > 1e-5f) ++errors;
  }
  std::printf("%s on backend '%s'\n", errors ? "MISMATCH" : "ok", ctx->backend_name());
  return errors ? 1 : 0;
}
