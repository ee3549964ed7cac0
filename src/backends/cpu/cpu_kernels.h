// Factories of the cpu backend's fast kernels. Each returns null when it does not handle the
// node (data type, options or unknown shapes); cpu_backend.cc then uses the reference kernel.
#pragma once

#include <memory>

#include "backends/backend.h"
#include "backends/cpu/simd_kernels.h"
#include "core/thread_pool.h"

namespace webnn {

std::unique_ptr<Kernel> make_matmul_kernel(const Node& node, const CompileContext& cc,
                                           const SimdKernels& simd);
std::unique_ptr<Kernel> make_gemm_kernel(const Node& node, const CompileContext& cc,
                                         const SimdKernels& simd);
std::unique_ptr<Kernel> make_conv2d_kernel(const Node& node, const CompileContext& cc,
                                           const SimdKernels& simd);
std::unique_ptr<Kernel> make_conv_transpose2d_kernel(const Node& node, const CompileContext& cc,
                                                     const SimdKernels& simd);
// A conv2d / convTranspose2d fast kernel that computes a filter with NaN or infinities by the
// definition instead (padded taps add nothing; conv_nonfinite_filter.cc). Null stays null.
std::unique_ptr<Kernel> guard_non_finite_filter(std::unique_ptr<Kernel> fast, const Node& node,
                                                OperandRef filter, const CompileContext& cc);
std::unique_ptr<Kernel> make_resample2d_kernel(const Node& node, const CompileContext& cc,
                                               const SimdKernels& simd);
std::unique_ptr<Kernel> make_normalization_kernel(const Node& node, const CompileContext& cc,
                                                  const SimdKernels& simd);
std::unique_ptr<Kernel> make_movement_kernel(const Node& node, const CompileContext& cc,
                                             const SimdKernels& simd);
std::unique_ptr<Kernel> make_reduce_kernel(const Node& node, const CompileContext& cc,
                                           const SimdKernels& simd);
std::unique_ptr<Kernel> make_arg_min_max_kernel(const Node& node, const CompileContext& cc);
std::unique_ptr<Kernel> make_pow_kernel(const Node& node, const CompileContext& cc,
                                        const SimdKernels& simd);
std::unique_ptr<Kernel> make_prelu_kernel(const Node& node, const CompileContext& cc,
                                          const SimdKernels& simd);
// The float32 fast kernel of a node (cpu_backend.cc), for make_float16_kernel to wrap.
using FastKernelFactory = std::unique_ptr<Kernel> (*)(const Node& node, const CompileContext& cc,
                                                      const SimdKernels& simd);
// A float16 node on the cpu kernels (float16.cc): element-wise ops and casts convert in
// cache-sized blocks around the float32 vector function; the other computing kinds run their
// float32 kernel between whole-tensor conversions.
std::unique_ptr<Kernel> make_float16_kernel(const Node& node, const CompileContext& cc,
                                            const SimdKernels& simd, FastKernelFactory make);
// The element-wise float16 kernels and float16 <-> float32 casts (float16_elementwise.cc);
// null for other nodes and for broadcasts they do not walk.
std::unique_ptr<Kernel> make_float16_elementwise_kernel(const Node& node, const CompileContext& cc,
                                                        const SimdKernels& simd);
std::unique_ptr<Kernel> make_elementwise_kernel(const Node& node, const CompileContext& cc,
                                                const SimdKernels& simd);
// The vector form of a float32 unary / binary element-wise node, as the stand-alone kernels
// use it (shared with fused epilogues so both compute the same function).
bool cpu_unary_args(const Node& node, UnaryArgs* args);
bool cpu_binary_op(OpKind kind, BinaryOpF* op);
// The single input of a unary node (false when its params have no `input`).
bool cpu_unary_input(const Node& node, OperandRef* input);
// The element-wise ops the float16 kernels evaluate in double by the reference's own formulas
// (cos, sin, tan, log, sign, softplus, softsign, elu: reference_unary), so that their float16
// results stay bit-identical; alpha is elu's coefficient already cast to the input type.
bool cpu_scalar_unary_kind(OpKind kind);
double cpu_scalar_unary(OpKind kind, double alpha, double x);
// A node with a fused epilogue: `head` computes the node's own op into its output (null when
// the head is itself an element-wise op folded into the chain); the steps then run over the
// output in cache-sized blocks. Null when a step has no vector form.
std::unique_ptr<Kernel> make_fused_kernel(const Node& node, const CompileContext& cc,
                                          const SimdKernels& simd, std::unique_ptr<Kernel> head);
// Whether the fused node's chain starts from one of its inputs (an element-wise head).
bool fused_head_is_elementwise(const Node& node, const CompileContext& cc);
// transpose: the float32 4-D NCHW <-> NHWC permutations (layout_transpose.cc).
std::unique_ptr<Kernel> make_layout_transpose_kernel(const Node& node, const CompileContext& cc,
                                                     const SimdKernels& simd);
std::unique_ptr<Kernel> make_softmax_kernel(const Node& node, const CompileContext& cc,
                                            const SimdKernels& simd);
// lstm, lstmCell, gru, gruCell: in double, bit-identical to the reference (recurrent.cc), or
// for large products with sigmoid gates in float32 (recurrent_f32.cc, recurrent_spec.h).
std::unique_ptr<Kernel> make_recurrent_kernel(const Node& node, const CompileContext& cc,
                                              const SimdKernels& simd);
// The dynamically quantized LSTM of graph/passes/dynamic_quant_lstm.cc (dynamic_lstm.cc).
std::unique_ptr<Kernel> make_dynamic_lstm_kernel(const Node& node, const CompileContext& cc);
// Per-tensor quantizeLinear / dequantizeLinear of (u)int8 (quantize_linear.cc).
std::unique_ptr<Kernel> make_quantize_linear_kernel(const Node& node, const CompileContext& cc);
// A quantizeLinear fused with its dequantizeLinear (graph/passes/fake_quantize.cc).
std::unique_ptr<Kernel> make_fake_quantize_kernel(const Node& node, const CompileContext& cc);
// gather (gather.cc); null for forms the reference keeps (an empty axis, other index types).
std::unique_ptr<Kernel> make_gather_kernel(const Node& node, const CompileContext& cc);
// Comparisons, logical ops, integer / float16 arithmetic, logicalNot, isNaN, isInfinite and
// cast on the reference's scalar functions, walked as broadcast rows (typed_elementwise.cc).
std::unique_ptr<Kernel> make_typed_elementwise_kernel(const Node& node, const CompileContext& cc);
// where (where.cc): every element type of 1, 2, 4 or 8 bytes, any broadcast.
std::unique_ptr<Kernel> make_where_kernel(const Node& node, const CompileContext& cc);
// conv2d / matmul with Node::Quantized (qconv.cc), on the int8 kernels.
std::unique_ptr<Kernel> make_quantized_kernel(const Node& node, const CompileContext& cc);
std::unique_ptr<Kernel> make_pool_kernel(const Node& node, const CompileContext& cc,
                                         const SimdKernels& simd);

// Runs fn(begin, end) over [0, n) in chunks of at least `grain` items, on the pool if any.
template <class F>
void parallel_chunks(ThreadPool* pool, int64_t n, int64_t grain, F&& fn) {
  if (n <= 0) return;
  const int threads = pool ? pool->num_threads() : 1;
  grain = grain < 1 ? 1 : grain;
  // A few chunks per thread balance uneven progress without much scheduling overhead.
  int64_t chunks = (n + grain - 1) / grain;
  const int64_t max_chunks = static_cast<int64_t>(threads) * 4;
  if (chunks > max_chunks) chunks = max_chunks;
  if (chunks <= 1 || !pool) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t step = (n + chunks - 1) / chunks;
  pool->parallel_for((n + step - 1) / step, [&](int64_t c, int) {
    const int64_t begin = c * step;
    fn(begin, begin + step < n ? begin + step : n);
  });
}

}  // namespace webnn
