// float16 nodes on the float32 kernels: the node's float16 operands are converted to float32
// buffers (constants once at compile time, inputs at each run), the float32 fast kernel of the
// same node runs on them, and its result is rounded to float16 (round to nearest even). The
// reference rounds its double result to float16 once; here the float32 result is rounded
// again, which stays far inside float16's tolerances (float32 carries 13 more bits).
// Conversions use F16C when the CPU has it (float16_convert.cc). Element-wise nodes and casts
// take the block-wise kernels of float16_elementwise.cc instead.
#include <algorithm>
#include <vector>

#include "backends/cpu/aligned_buffer.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/float16_convert.h"

namespace webnn {

namespace {

constexpr int64_t kGrain = 32768;

// The node as the float32 kernel must see it: the reference casts a float16 node's
// coefficients to float16 before use (gemm's alpha and beta, the normalizations' epsilon),
// which the float32 kernel would otherwise read unrounded.
Node with_float16_coefficients(const Node& node) {
  Node out = node;
  auto round = [](double& v) { v = static_cast<double>(static_cast<float16>(v)); };
  std::visit(
      [&](auto& p) {
        if constexpr (requires { p.epsilon; }) round(p.epsilon);
        if constexpr (requires {
                        p.alpha;
                        p.beta;
                        p.a_transpose;
                      })
          round(p.alpha), round(p.beta);
      },
      out.params);
  return out;
}

class Float16Adapter final : public Kernel {
 public:
  bool init(const Node& node, const CompileContext& cc, const SimdKernels& simd,
            FastKernelFactory make) {
    const Graph* graph = cc.graph();
    if (!graph || node.outputs.size() != 1) return false;
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (y.data_type != DataType::kFloat16) return false;
    views_.resize(graph->operands.size());
    for (OperandId id : node.inputs()) {
      const TensorView& v = cc.view(OperandRef{id});
      TensorView& w = views_[id];
      w = v;
      if (v.data_type != DataType::kFloat16) {
        passthrough_.push_back(id);
        continue;
      }
      const bool constant = cc.is_constant(OperandRef{id});
      // The float32 kernel prepares constants at compile time: their data must be here.
      if (constant && !v.data) return false;
      auto buffer = std::make_unique<AlignedFloats>(std::max<uint64_t>(1, v.count));
      w.data_type = DataType::kFloat32;
      w.data = reinterpret_cast<uint8_t*>(buffer->data());
      if (constant) {
        widen_f16(reinterpret_cast<const float16*>(v.data), buffer->data(),
                  static_cast<int64_t>(v.count));
      } else {
        converted_.push_back(id);
      }
      buffers_.push_back(std::move(buffer));
    }
    TensorView& out = views_[node.outputs[0]];
    out = y;
    out.data_type = DataType::kFloat32;
    out_buffer_.reserve(static_cast<size_t>(std::max<uint64_t>(1, y.count)));
    out.data = reinterpret_cast<uint8_t*>(out_buffer_.data());
    node_ = with_float16_coefficients(node);
    inner_ = make(node_, CompileContext(*graph, views_), simd);
    return inner_ != nullptr;
  }

  Status run(KernelContext& ctx) override {
    ThreadPool* pool = ctx.pool();
    for (OperandId id : converted_) {
      const float16* src = ctx.in(OperandRef{id}).as<float16>();
      float* dst = views_[id].as<float>();
      parallel_chunks(pool, static_cast<int64_t>(views_[id].count), kGrain,
                      [&](int64_t b, int64_t e) { widen_f16(src + b, dst + b, e - b); });
    }
    for (OperandId id : passthrough_) views_[id].data = ctx.in(OperandRef{id}).data;
    KernelContext inner(node_, views_, pool);
    WEBNN_RETURN_IF_ERROR(inner_->run(inner));
    float16* y = ctx.out().as<float16>();
    const float* src = out_buffer_.data();
    parallel_chunks(pool, static_cast<int64_t>(ctx.out().count), kGrain,
                    [&](int64_t b, int64_t e) { narrow_f16(src + b, y + b, e - b); });
    return Status::ok();
  }

 private:
  Node node_;  // the node with its coefficients in float16 (with_float16_coefficients)
  std::vector<TensorView> views_;
  std::vector<OperandId> converted_, passthrough_;
  std::vector<std::unique_ptr<AlignedFloats>> buffers_;
  AlignedFloats out_buffer_;
  std::unique_ptr<Kernel> inner_;
};

// The kinds whose float32 kernel computes a float16 node between whole-tensor conversions
// (the float32 factory declines the forms it has no kernel for, e.g. l2Pool2d). Reductions
// sum in double and round to float32, then to float16: within one float16 step. prelu's
// slope * x is exact in float32; binary ops get here with the broadcasts the block-wise
// kernel does not walk (exact for the reasons float16_elementwise.cc gives).
bool on_float32_kernel(OpKind kind) {
  switch (op_family(kind)) {
    case OpFamily::kConv:
    case OpFamily::kLinalg:
    case OpFamily::kPool2d:
    case OpFamily::kGlobalPool:
    case OpFamily::kResample:
    case OpFamily::kNormalization:
    case OpFamily::kReduction:
    case OpFamily::kBinary:
      return true;
    default:
      return kind == OpKind::kSoftmax || kind == OpKind::kPrelu;
  }
}

}  // namespace

std::unique_ptr<Kernel> make_float16_kernel(const Node& node, const CompileContext& cc,
                                            const SimdKernels& simd, FastKernelFactory make) {
  if (std::unique_ptr<Kernel> k = make_float16_elementwise_kernel(node, cc, simd)) return k;
  if (!on_float32_kernel(node.kind)) return nullptr;
  if (node.outputs.size() != 1 ||
      cc.view(OperandRef{node.outputs[0]}).data_type != DataType::kFloat16) {
    return nullptr;
  }
  auto k = std::make_unique<Float16Adapter>();
  if (!k->init(node, cc, simd, make)) return nullptr;
  return k;
}

}  // namespace webnn
