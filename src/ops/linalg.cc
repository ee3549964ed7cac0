// Infer for matrix multiplication: matmul, gemm (spec/ops.md 3.8).
#include "ops/infer.h"

namespace webnn {

namespace {

InferResult infer_matmul(const InferContext& ctx) {
  const auto& p = ctx.params<BinaryParams>();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.a, "a", p.b, "b"));
  const Shape& a = ctx.desc(p.a).shape;
  const Shape& b = ctx.desc(p.b).shape;
  // Rank >= 2 is enforced by the limits; WebNN has no NumPy-style 1-D promotion.
  const Dim& k_a = a[a.size() - 1];
  const Dim& k_b = b[b.size() - 2];
  if (k_a != k_b) {
    return ctx.error("a columns ", dim_to_string(k_a), " must equal b rows ", dim_to_string(k_b),
                     " (a ", shape_to_string(a), ", b ", shape_to_string(b), ")");
  }
  Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  WEBNN_ASSIGN_OR_RETURN(Shape out, broadcast_bidirectional(ctx, batch_a, batch_b));
  out.push_back(a[a.size() - 2]);
  out.push_back(b[b.size() - 1]);
  return std::vector<OperandDesc>{{ctx.desc(p.a).data_type, std::move(out)}};
}

InferResult infer_gemm(const InferContext& ctx) {
  const auto& p = ctx.params<GemmParams>();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.a, "a", p.b, "b"));
  const Shape& a = ctx.desc(p.a).shape;
  const Shape& b = ctx.desc(p.b).shape;
  const Dim& m = p.a_transpose ? a[1] : a[0];
  const Dim& k_a = p.a_transpose ? a[0] : a[1];
  const Dim& k_b = p.b_transpose ? b[1] : b[0];
  const Dim& n = p.b_transpose ? b[0] : b[1];
  if (k_a != k_b) {
    return ctx.error("inner dimensions differ: a", shape_to_string(a),
                     p.a_transpose ? " (transposed)" : "", " has ", dim_to_string(k_a),
                     " columns but b", shape_to_string(b), p.b_transpose ? " (transposed)" : "",
                     " has ", dim_to_string(k_b), " rows");
  }
  Shape out = {m, n};
  if (p.c.present()) {
    WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.a, "a", p.c, "c"));
    WEBNN_RETURN_IF_ERROR(check_unidirectional_broadcast(ctx, ctx.desc(p.c).shape, out, "c"));
  }
  return std::vector<OperandDesc>{{ctx.desc(p.a).data_type, std::move(out)}};
}

}  // namespace

void register_linalg_schemas(SchemaTable& t) {
  t[static_cast<int>(OpKind::kMatmul)] = OpSchema{
      infer_matmul, {{"a", kFloatTypes, 2}, {"b", kFloatTypes, 2}, {"output", kFloatTypes, 2}}};
  t[static_cast<int>(OpKind::kGemm)] = OpSchema{infer_gemm,
                                                {{"a", kFloatTypes, 2, 2},
                                                 {"b", kFloatTypes, 2, 2},
                                                 {"c", kFloatTypes, 0, 2},
                                                 {"output", kFloatTypes, 2, 2}}};
}

}  // namespace webnn
