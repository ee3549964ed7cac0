// Infer for the reduction family: reduce*, argMin/argMax, cumulativeSum (spec/ops.md 3.5).
#include <limits>

#include "ops/infer.h"

namespace webnn {

namespace {

constexpr DataTypeMask kWideNumeric =
    kFloatTypes | mask_of(DataType::kInt32, DataType::kUint32, DataType::kInt64, DataType::kUint64);
constexpr DataTypeMask kArgOutputTypes = mask_of(DataType::kInt32, DataType::kInt64);

InferResult infer_reduce(const InferContext& ctx) {
  const auto& p = ctx.params<ReduceParams>();
  const OperandDesc& d = ctx.desc(p.input);
  WEBNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, check_axes(ctx, p.axes, d.rank(), "axes"));
  return std::vector<OperandDesc>{{d.data_type, reduce_shape(d.shape, axes, p.keep_dimensions)}};
}

InferResult infer_arg_min_max(const InferContext& ctx) {
  const auto& p = ctx.params<ArgMinMaxParams>();
  const OperandDesc& d = ctx.desc(p.input);
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, d.rank(), "axis"));
  if (!mask_has(kArgOutputTypes, p.output_data_type)) {
    return ctx.error("output_data_type must be int32 or int64 (got ",
                     data_type_name(p.output_data_type), ")");
  }
  // Every index along the axis must be representable; a dynamic dim is bounded by its maxSize.
  const Dim& len = d.shape[p.axis];
  const int64_t max_index = p.output_data_type == DataType::kInt32
                                ? std::numeric_limits<int32_t>::max()
                                : std::numeric_limits<int64_t>::max();
  if (len.value > max_index) {
    return ctx.error("input size ", dim_to_string(len), " on axis ", p.axis,
                     " exceeds the maximum value of output_data_type ",
                     data_type_name(p.output_data_type), " (", max_index, ")");
  }
  std::vector<int64_t> axes = {p.axis};
  return std::vector<OperandDesc>{
      {p.output_data_type, reduce_shape(d.shape, axes, p.keep_dimensions)}};
}

InferResult infer_cumulative_sum(const InferContext& ctx) {
  const auto& p = ctx.params<CumulativeSumParams>();
  const OperandDesc& d = ctx.desc(p.input);
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, d.rank(), "axis"));
  return std::vector<OperandDesc>{d};
}

}  // namespace

void register_reduction_schemas(SchemaTable& t) {
  for (OpKind k :
       {OpKind::kReduceSum, OpKind::kReduceL1, OpKind::kReduceSumSquare, OpKind::kReduceProduct}) {
    set_schema(t, k, infer_reduce, {{"input", kWideNumeric}, {"output", kWideNumeric}});
  }
  for (OpKind k :
       {OpKind::kReduceL2, OpKind::kReduceLogSum, OpKind::kReduceLogSumExp, OpKind::kReduceMean}) {
    set_schema(t, k, infer_reduce, {{"input", kFloatTypes}, {"output", kFloatTypes}});
  }
  // "any" in ops.md: the 4-bit types are only meaningful for data movement (§1.3).
  for (OpKind k : {OpKind::kReduceMax, OpKind::kReduceMin}) {
    set_schema(t, k, infer_reduce, {{"input", kByteTypes}, {"output", kByteTypes}});
  }
  for (OpKind k : {OpKind::kArgMin, OpKind::kArgMax}) {
    set_schema(t, k, infer_arg_min_max, {{"input", kByteTypes, 1}, {"output", kArgOutputTypes}});
  }
  set_schema(t, OpKind::kCumulativeSum, infer_cumulative_sum,
             {{"input", kWideNumeric, 1}, {"output", kWideNumeric, 1}});
}

}  // namespace webnn
