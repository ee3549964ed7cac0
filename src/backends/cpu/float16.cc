// float16 nodes on the float32 kernels: the node's float16 operands are converted to float32
// buffers (constants once at compile time, inputs at each run), the float32 fast kernel of the
// same node runs on them, and its result is rounded to float16 (round to nearest even). The
// reference rounds its double result to float16 once; here the float32 result is rounded
// again, which stays far inside float16's tolerances (float32 carries 13 more bits).
// Conversions use F16C when the CPU has it (checked at run time).
#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "backends/cpu/aligned_buffer.h"
#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

__attribute__((target("avx,f16c"))) void widen_f16c(const float16* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

__attribute__((target("avx,f16c"))) void narrow_f16c(const float* s, float16* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
  for (; i < n; ++i) d[i] = static_cast<float16>(s[i]);
}

bool has_f16c() {
  // cpuid leaf 1, ECX: clang 16's __builtin_cpu_supports does not know "f16c" (GCC's does).
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0 && __builtin_cpu_supports("avx");
  }();
  return yes;
}

void widen(const float16* s, float* d, int64_t n) {
  if (has_f16c()) return widen_f16c(s, d, n);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

void narrow(const float* s, float16* d, int64_t n) {
  if (has_f16c()) return narrow_f16c(s, d, n);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float16>(s[i]);
}

constexpr int64_t kGrain = 32768;

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
        widen(reinterpret_cast<const float16*>(v.data), buffer->data(),
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
    inner_ = make(node, CompileContext(*graph, views_), simd);
    return inner_ != nullptr;
  }

  Status run(KernelContext& ctx) override {
    ThreadPool* pool = ctx.pool();
    for (OperandId id : converted_) {
      const float16* src = ctx.in(OperandRef{id}).as<float16>();
      float* dst = views_[id].as<float>();
      parallel_chunks(pool, static_cast<int64_t>(views_[id].count), kGrain,
                      [&](int64_t b, int64_t e) { widen(src + b, dst + b, e - b); });
    }
    for (OperandId id : passthrough_) views_[id].data = ctx.in(OperandRef{id}).data;
    KernelContext inner(ctx.node(), views_, pool);
    WEBNN_RETURN_IF_ERROR(inner_->run(inner));
    float16* y = ctx.out().as<float16>();
    const float* src = out_buffer_.data();
    parallel_chunks(pool, static_cast<int64_t>(ctx.out().count), kGrain,
                    [&](int64_t b, int64_t e) { narrow(src + b, y + b, e - b); });
    return Status::ok();
  }

 private:
  std::vector<TensorView> views_;
  std::vector<OperandId> converted_, passthrough_;
  std::vector<std::unique_ptr<AlignedFloats>> buffers_;
  AlignedFloats out_buffer_;
  std::unique_ptr<Kernel> inner_;
};

}  // namespace

std::unique_ptr<Kernel> make_float16_kernel(const Node& node, const CompileContext& cc,
                                            const SimdKernels& simd, FastKernelFactory make) {
  switch (node.kind) {
    case OpKind::kConv2d:
    case OpKind::kConvTranspose2d:
    case OpKind::kMatmul:
    case OpKind::kGemm:
    case OpKind::kMaxPool2d:
    case OpKind::kAveragePool2d:
    case OpKind::kGlobalMaxPool:
    case OpKind::kGlobalAveragePool:
    case OpKind::kResample2d:
    case OpKind::kSoftmax:
    case OpKind::kBatchNormalization:
    case OpKind::kInstanceNormalization:
    case OpKind::kLayerNormalization:
      break;
    default:
      return nullptr;
  }
  if (node.outputs.size() != 1 ||
      cc.view(OperandRef{node.outputs[0]}).data_type != DataType::kFloat16) {
    return nullptr;
  }
  auto k = std::make_unique<Float16Adapter>();
  if (!k->init(node, cc, simd, make)) return nullptr;
  return k;
}

}  // namespace webnn
