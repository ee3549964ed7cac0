// The default CPU backend: float32 fast paths for the hot operations (cpu_kernels.h), the
// reference kernel for everything else, through the same compile/plan/dispatch path as any
// backend.
#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/cpu_kernels.h"
#include "backends/reference/reference_backend.h"

namespace webnn {

namespace {

std::unique_ptr<Kernel> make_float32_kernel(const Node& node, const CompileContext& cc,
                                            const SimdKernels& simd) {
  switch (node.kind) {
    case OpKind::kMatmul:
      return make_matmul_kernel(node, cc, simd);
    case OpKind::kGemm:
      return make_gemm_kernel(node, cc, simd);
    case OpKind::kConv2d:
      return guard_non_finite_filter(make_conv2d_kernel(node, cc, simd), node,
                                     node.as<Conv2dParams>().filter, cc);
    case OpKind::kConvTranspose2d:
      return guard_non_finite_filter(make_conv_transpose2d_kernel(node, cc, simd), node,
                                     node.as<ConvTranspose2dParams>().filter, cc);
    case OpKind::kResample2d:
      return make_resample2d_kernel(node, cc, simd);
    case OpKind::kBatchNormalization:
    case OpKind::kInstanceNormalization:
    case OpKind::kLayerNormalization:
      return make_normalization_kernel(node, cc, simd);
    case OpKind::kTranspose:
      // NCHW <-> NHWC float32 (what layout assignment leaves) on the SIMD matrix transpose;
      // any other permutation and type as a strided copy.
      if (std::unique_ptr<Kernel> k = make_layout_transpose_kernel(node, cc, simd)) return k;
      return make_movement_kernel(node, cc, simd);
    case OpKind::kSlice:
    case OpKind::kExpand:
    case OpKind::kPad:
    case OpKind::kConcat:
    case OpKind::kTile:
    case OpKind::kReverse:
      return make_movement_kernel(node, cc, simd);
    case OpKind::kReduceSum:
    case OpKind::kReduceMean:
    case OpKind::kReduceSumSquare:
    case OpKind::kReduceL1:
    case OpKind::kReduceL2:
    case OpKind::kReduceMax:
    case OpKind::kReduceMin:
      return make_reduce_kernel(node, cc, simd);
    case OpKind::kArgMin:
    case OpKind::kArgMax:
      return make_arg_min_max_kernel(node, cc);
    case OpKind::kPrelu:
      return make_prelu_kernel(node, cc, simd);
    case OpKind::kPow:
      return make_pow_kernel(node, cc, simd);
    case OpKind::kQuantizeLinear:
    case OpKind::kDequantizeLinear:
      return make_quantize_linear_kernel(node, cc);
    case OpKind::kGather:
      return make_gather_kernel(node, cc);
    case OpKind::kWhere:
      return make_where_kernel(node, cc);
    case OpKind::kSoftmax:
      return make_softmax_kernel(node, cc, simd);
    case OpKind::kLstm:
    case OpKind::kLstmCell:
    case OpKind::kGru:
    case OpKind::kGruCell:
      return make_recurrent_kernel(node, cc, simd);
    case OpKind::kMaxPool2d:
    case OpKind::kAveragePool2d:
    case OpKind::kGlobalMaxPool:
    case OpKind::kGlobalAveragePool:
      return make_pool_kernel(node, cc, simd);
    default:
      return make_elementwise_kernel(node, cc, simd);
  }
}

std::unique_ptr<Kernel> make_fast_kernel(const Node& node, const CompileContext& cc) {
  const SimdKernels& simd = simd_kernels();
  if (std::unique_ptr<Kernel> k = make_float16_kernel(node, cc, simd, make_float32_kernel)) {
    return k;
  }
  if (std::unique_ptr<Kernel> k = make_float32_kernel(node, cc, simd)) return k;
  return make_typed_elementwise_kernel(node, cc);
}

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  DataTypeMask supported_types(OpKind kind, const char* field, DataTypeMask schema) const override {
    return reference_backend().supported_types(kind, field, schema);
  }
  // A node form only one cpu kernel computes (no reference fallback): that kernel, with its
  // fused epilogue, or an internal error naming what is missing.
  static Expected<std::unique_ptr<Kernel>> required_kernel(
      const Node& node, const CompileContext& cc,
      std::unique_ptr<Kernel> (*make)(const Node&, const CompileContext&), const char* missing) {
    std::unique_ptr<Kernel> k;
    if (cc.has_views()) k = make(node, cc);
    if (!k) return make_error(ErrorKind::kInternal, op_spec_name(node.kind), ": ", missing);
    if (!node.epilogue.empty()) {
      k = make_fused_kernel(node, cc, simd_kernels(), std::move(k));
      if (!k) {
        return make_error(ErrorKind::kInternal, op_spec_name(node.kind),
                          ": fused epilogue has a step without a vector kernel");
      }
    }
    return k;
  }

  Expected<std::unique_ptr<Kernel>> compile(const Node& node,
                                            const CompileContext& cc) const override {
    // Fast kernels are specialised to concrete shapes; without them (a dynamic graph checked at
    // build time) the reference kernel answers whether the node compiles.
    // A matmul reading / writing through permutations (graph/passes/matmul_transposes.cc):
    // only the cpu matmul kernel takes them.
    if (node.permuted) {
      return required_kernel(node, cc, make_fast_kernel,
                             "permuted operands without a float32 kernel");
    }
    // An integer conv2d / matmul (graph/passes/qdq_fusion.cc): only the int8 kernels compute it;
    // a float-output integer matmul (graph/passes/integer_matmul.cc) takes epilogues.
    // A 1x1 conv2d computing its depthwise input (graph/passes/depthwise_pointwise.cc): only
    // the cpu conv2d kernel does.
    if (node.depthwise_input) {
      return required_kernel(node, cc, make_fast_kernel,
                             "depthwise input without a float32 conv2d kernel");
    }
    if (node.quantized) {
      return required_kernel(node, cc, make_quantized_kernel,
                             "quantized form without an int8 kernel");
    }
    if (!node.epilogue.empty() && cc.has_views()) return compile_fused(node, cc);
    if (cc.has_views()) {
      if (std::unique_ptr<Kernel> k = make_fast_kernel(node, cc)) return k;
    }
    return reference_backend().compile(node, cc);
  }

 private:
  // A node with a fused epilogue (graph/passes/epilogue_fusion.cc): its head op on the fast
  // kernel (or the reference one), then the element-wise steps.
  static Expected<std::unique_ptr<Kernel>> compile_fused(const Node& node,
                                                         const CompileContext& cc) {
    std::unique_ptr<Kernel> head;
    if (!fused_head_is_elementwise(node, cc)) {
      head = make_fast_kernel(node, cc);
      if (!head) {
        // The reference kernel computes the head alone (it never reads the epilogue).
        Node bare{node.kind, node.label, node.params, node.outputs, {}};
        WEBNN_ASSIGN_OR_RETURN(head, reference_backend().compile(bare, cc));
      }
    }
    std::unique_ptr<Kernel> k = make_fused_kernel(node, cc, simd_kernels(), std::move(head));
    if (!k) {
      return make_error(ErrorKind::kInternal, op_spec_name(node.kind),
                        ": fused epilogue has a step without a vector kernel");
    }
    return k;
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace webnn
