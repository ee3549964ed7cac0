// Infer for gather, gatherElements, gatherND, scatterElements, scatterND and where
// (spec/ops.md 3.7). Index values are runtime data: Infer only checks shapes and types, the
// kernels normalise negative indices and clamp out-of-range ones.
#include "ops/infer.h"

namespace webnn {

namespace {

// `indices` of gatherElements/scatterElements: same rank as `input` and the same size on
// every axis except `axis` (a dynamic dim only equals the same dynamic dim).
Status check_element_indices(const InferContext& ctx, const Shape& input, const Shape& indices,
                             int64_t axis) {
  if (indices.size() != input.size()) {
    return ctx.error("indices rank ", indices.size(), " must equal input rank ", input.size(),
                     " (indices shape ", shape_to_string(indices), ", input shape ",
                     shape_to_string(input), ")");
  }
  for (size_t i = 0; i < input.size(); ++i) {
    if (static_cast<int64_t>(i) != axis && indices[i] != input[i]) {
      return ctx.error("indices shape ", shape_to_string(indices), " must equal input shape ",
                       shape_to_string(input), " on every axis but axis ", axis, " (axis ", i, ": ",
                       dim_to_string(indices[i]), " vs ", dim_to_string(input[i]), ")");
    }
  }
  return Status::ok();
}

// The static k = indices.shape[-1] of gatherND/scatterND, at most the input rank.
Expected<size_t> index_depth(const InferContext& ctx, const Shape& input, const Shape& indices) {
  WEBNN_ASSIGN_OR_RETURN(int64_t k, require_static(ctx, indices.back(), indices.size() - 1,
                                                   "indices (the index depth k)"));
  if (k > static_cast<int64_t>(input.size())) {
    return ctx.error("indices.shape[-1] (k = ", k, ") must not exceed the input rank ",
                     input.size(), " (indices shape ", shape_to_string(indices), ")");
  }
  return static_cast<size_t>(k);
}

// indices.shape[:-1] + input.shape[k:]
Shape nd_slices_shape(const Shape& input, const Shape& indices, size_t k) {
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), input.begin() + static_cast<std::ptrdiff_t>(k), input.end());
  return out;
}

InferResult infer_gather(const InferContext& ctx) {
  const auto& p = ctx.params<GatherParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const Shape& indices = ctx.desc(p.indices).shape;
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, in.rank(), "axis"));
  const auto axis = static_cast<std::ptrdiff_t>(p.axis);
  Shape out(in.shape.begin(), in.shape.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), in.shape.begin() + axis + 1, in.shape.end());
  return std::vector<OperandDesc>{{in.data_type, std::move(out)}};
}

InferResult infer_gather_elements(const InferContext& ctx) {
  const auto& p = ctx.params<GatherParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const Shape& indices = ctx.desc(p.indices).shape;
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, in.rank(), "axis"));
  WEBNN_RETURN_IF_ERROR(check_element_indices(ctx, in.shape, indices, p.axis));
  return std::vector<OperandDesc>{{in.data_type, indices}};
}

InferResult infer_gather_nd(const InferContext& ctx) {
  const auto& p = ctx.params<GatherNdParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const Shape& indices = ctx.desc(p.indices).shape;
  WEBNN_ASSIGN_OR_RETURN(size_t k, index_depth(ctx, in.shape, indices));
  return std::vector<OperandDesc>{{in.data_type, nd_slices_shape(in.shape, indices, k)}};
}

InferResult infer_scatter_elements(const InferContext& ctx) {
  const auto& p = ctx.params<ScatterElementsParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const Shape& indices = ctx.desc(p.indices).shape;
  const Shape& updates = ctx.desc(p.updates).shape;
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.input, "input", p.updates, "updates"));
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, in.rank(), "axis"));
  WEBNN_RETURN_IF_ERROR(check_element_indices(ctx, in.shape, indices, p.axis));
  if (updates != indices) {
    return ctx.error("updates shape ", shape_to_string(updates), " must equal indices shape ",
                     shape_to_string(indices));
  }
  return std::vector<OperandDesc>{in};
}

InferResult infer_scatter_nd(const InferContext& ctx) {
  const auto& p = ctx.params<ScatterNdParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const Shape& indices = ctx.desc(p.indices).shape;
  const Shape& updates = ctx.desc(p.updates).shape;
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.input, "input", p.updates, "updates"));
  WEBNN_ASSIGN_OR_RETURN(size_t k, index_depth(ctx, in.shape, indices));
  Shape expected = nd_slices_shape(in.shape, indices, k);
  if (updates != expected) {
    return ctx.error("updates shape ", shape_to_string(updates),
                     " must equal indices.shape[:-1] + input.shape[k:] = ",
                     shape_to_string(expected), " (k = ", k, ")");
  }
  return std::vector<OperandDesc>{in};
}

InferResult infer_where(const InferContext& ctx) {
  const auto& p = ctx.params<WhereParams>();
  WEBNN_RETURN_IF_ERROR(
      check_same_type(ctx, p.true_value, "true_value", p.false_value, "false_value"));
  WEBNN_ASSIGN_OR_RETURN(Shape values, broadcast_bidirectional(ctx, ctx.desc(p.true_value).shape,
                                                               ctx.desc(p.false_value).shape));
  WEBNN_ASSIGN_OR_RETURN(Shape shape,
                         broadcast_bidirectional(ctx, ctx.desc(p.condition).shape, values));
  return std::vector<OperandDesc>{{ctx.desc(p.true_value).data_type, std::move(shape)}};
}

}  // namespace

void register_gather_schemas(SchemaTable& t) {
  // Gathers only move elements, so the packed 4-bit types are meaningful for them
  // (spec/ops.md §1.3); scatter and where keep to the byte-sized types.
  set_schema(t, OpKind::kGather, infer_gather,
             {{"input", kAllTypes, 1}, {"indices", kIndexTypes}, {"output", kAllTypes}});
  set_schema(t, OpKind::kGatherElements, infer_gather_elements,
             {{"input", kAllTypes, 1}, {"indices", kIndexTypes, 1}, {"output", kAllTypes, 1}});
  set_schema(t, OpKind::kGatherNd, infer_gather_nd,
             {{"input", kAllTypes, 1}, {"indices", kIndexTypes, 1}, {"output", kAllTypes}});
  set_schema(t, OpKind::kScatterElements, infer_scatter_elements,
             {{"input", kByteTypes, 1},
              {"indices", kIndexTypes, 1},
              {"updates", kByteTypes, 1},
              {"output", kByteTypes, 1}});
  set_schema(t, OpKind::kScatterNd, infer_scatter_nd,
             {{"input", kByteTypes, 1},
              {"indices", kIndexTypes, 1},
              {"updates", kByteTypes},
              {"output", kByteTypes, 1}});
  set_schema(t, OpKind::kWhere, infer_where,
             {{"condition", mask_of(DataType::kUint8)},
              {"true_value", kByteTypes},
              {"false_value", kByteTypes},
              {"output", kByteTypes}});
}

}  // namespace webnn
