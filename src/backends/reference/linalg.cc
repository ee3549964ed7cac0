// Reference kernels: matmul, gemm (spec/ops.md 3.8). Dot products accumulate in double and
// are rounded once to the output type.
#include "backends/reference/kernels.h"

namespace webnn {

namespace {

Status run_matmul(KernelContext& ctx) {
  const auto& p = ctx.params<BinaryParams>();
  const TensorView& a = ctx.in(p.a);
  const TensorView& b = ctx.in(p.b);
  TensorView& out = ctx.out();
  const int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1], n = b.shape[b.rank() - 1];
  const std::vector<int64_t> batch(out.shape.begin(), out.shape.end() - 2);
  // Each operand's batch offset, in whole matrices, under broadcasting of its batch dims.
  const std::vector<int64_t> a_strides =
      broadcast_strides(std::vector<int64_t>(a.shape.begin(), a.shape.end() - 2), batch);
  const std::vector<int64_t> b_strides =
      broadcast_strides(std::vector<int64_t>(b.shape.begin(), b.shape.end() - 2), batch);
  dispatch_float(out.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.as<T>();
    const T* pb = b.as<T>();
    T* po = out.as<T>();
    for_each_index(batch, [&](int64_t flat, const std::vector<int64_t>& idx) {
      const T* ma = pa + dot_index(idx, a_strides) * m * k;
      const T* mb = pb + dot_index(idx, b_strides) * k * n;
      T* mo = po + flat * m * n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t t = 0; t < k; ++t)
            acc += to_double(ma[i * k + t]) * to_double(mb[t * n + j]);
          mo[i * n + j] = static_cast<T>(acc);
        }
      }
    });
  });
  return Status::ok();
}

Status run_gemm(KernelContext& ctx) {
  const auto& p = ctx.params<GemmParams>();
  const TensorView& a = ctx.in(p.a);
  const TensorView& b = ctx.in(p.b);
  TensorView& out = ctx.out();
  const int64_t m = out.shape[0], n = out.shape[1];
  const int64_t k = p.a_transpose ? a.shape[0] : a.shape[1];
  // Element (i, t) of a' and (t, j) of b' as offsets into the stored matrices.
  const int64_t a_i = p.a_transpose ? 1 : k, a_t = p.a_transpose ? m : 1;
  const int64_t b_t = p.b_transpose ? 1 : n, b_j = p.b_transpose ? k : 1;
  const TensorView* c = p.c.present() ? &ctx.in(p.c) : nullptr;
  std::vector<int64_t> c_strides = {0, 0};
  if (c) c_strides = broadcast_strides(c->shape, {m, n});
  dispatch_float(out.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.as<T>();
    const T* pb = b.as<T>();
    T* po = out.as<T>();
    // alpha and beta are cast to the input data type first (WebNN gemm method steps).
    const double alpha = to_double(static_cast<T>(p.alpha));
    const double beta = to_double(static_cast<T>(p.beta));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < k; ++t) {
          acc += to_double(pa[i * a_i + t * a_t]) * to_double(pb[t * b_t + j * b_j]);
        }
        double v = alpha * acc;
        if (c) v += beta * to_double(c->as<T>()[i * c_strides[0] + j * c_strides[1]]);
        po[i * n + j] = static_cast<T>(v);
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_reference_linalg(KernelTable& t) {
  t[static_cast<int>(OpKind::kMatmul)] = run_matmul;
  t[static_cast<int>(OpKind::kGemm)] = run_gemm;
}

}  // namespace webnn
