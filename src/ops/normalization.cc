// Infer for the normalization family: batchNormalization, instanceNormalization,
// layerNormalization (spec/ops.md §3.10, api.md §11.3).
#include <string>

#include "ops/infer.h"

namespace webnn {

namespace {

// A rank-1 parameter operand (mean, variance, scale, bias) of a per-channel normalization:
// same data type as the input and shape [channels].
Status check_channel_param(const InferContext& ctx, OperandRef input, OperandRef param,
                           const char* name, int64_t channels, const char* channel_what) {
  if (!param.present()) return Status::ok();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, input, "input", param, name));
  const Shape& shape = ctx.desc(param).shape;
  if (shape.size() != 1 || shape[0] != Dim(channels)) {
    return ctx.error(name, " shape ", shape_to_string(shape), " must be [", channels, "] (",
                     channel_what, ")");
  }
  return Status::ok();
}

InferResult infer_batch_normalization(const InferContext& ctx) {
  const auto& p = ctx.params<BatchNormalizationParams>();
  const OperandDesc& in = ctx.desc(p.input);
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, in.rank(), "axis"));
  size_t axis = static_cast<size_t>(p.axis);
  // The channel count sizes the parameter tensors, so it cannot be dynamic.
  WEBNN_ASSIGN_OR_RETURN(int64_t channels, require_static(ctx, in.shape[axis], axis, "input"));
  const std::string what = "input.shape[" + std::to_string(axis) + "]";
  WEBNN_RETURN_IF_ERROR(check_channel_param(ctx, p.input, p.mean, "mean", channels, what.c_str()));
  WEBNN_RETURN_IF_ERROR(
      check_channel_param(ctx, p.input, p.variance, "variance", channels, what.c_str()));
  WEBNN_RETURN_IF_ERROR(
      check_channel_param(ctx, p.input, p.scale, "scale", channels, what.c_str()));
  WEBNN_RETURN_IF_ERROR(check_channel_param(ctx, p.input, p.bias, "bias", channels, what.c_str()));
  return std::vector<OperandDesc>{in};
}

InferResult infer_instance_normalization(const InferContext& ctx) {
  const auto& p = ctx.params<InstanceNormalizationParams>();
  const OperandDesc& in = ctx.desc(p.input);
  size_t axis;
  if (p.layout == "nchw") {
    axis = 1;
  } else if (p.layout == "nhwc") {
    axis = 3;
  } else {
    return ctx.error("layout '", p.layout, "' is not one of 'nchw', 'nhwc'");
  }
  WEBNN_ASSIGN_OR_RETURN(int64_t channels, require_static(ctx, in.shape[axis], axis, "input"));
  const std::string what = "channels of the " + p.layout + " input";
  WEBNN_RETURN_IF_ERROR(
      check_channel_param(ctx, p.input, p.scale, "scale", channels, what.c_str()));
  WEBNN_RETURN_IF_ERROR(check_channel_param(ctx, p.input, p.bias, "bias", channels, what.c_str()));
  return std::vector<OperandDesc>{in};
}

// scale/bias of layerNormalization: shape = input dims at `axes`, in the order of `axes`.
Status check_layer_param(const InferContext& ctx, OperandRef input, OperandRef param,
                         const char* name, const std::vector<int64_t>& axes) {
  if (!param.present()) return Status::ok();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, input, "input", param, name));
  const Shape& in = ctx.desc(input).shape;
  const Shape& shape = ctx.desc(param).shape;
  if (shape.size() != axes.size()) {
    return ctx.error(name, " rank ", shape.size(), " (shape ", shape_to_string(shape),
                     ") must equal the number of axes ", axes.size());
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    size_t a = static_cast<size_t>(axes[k]);
    // A dimension normalised with a per-element scale/bias must be known when building.
    WEBNN_ASSIGN_OR_RETURN(int64_t size, require_static(ctx, in[a], a, "input"));
    if (shape[k] != Dim(size)) {
      return ctx.error(name, " shape ", shape_to_string(shape), " does not match the input at axes",
                       " (", name, ".shape[", k, "] = ", dim_to_string(shape[k]), ", input.shape[",
                       a, "] = ", size, ")");
    }
  }
  return Status::ok();
}

InferResult infer_layer_normalization(const InferContext& ctx) {
  const auto& p = ctx.params<LayerNormalizationParams>();
  const OperandDesc& in = ctx.desc(p.input);
  OptIntList axes = p.axes;
  if (!axes) {
    axes = IntList{};
    for (size_t i = 1; i < in.rank(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  WEBNN_ASSIGN_OR_RETURN(std::vector<int64_t> checked, check_axes(ctx, axes, in.rank(), "axes"));
  WEBNN_RETURN_IF_ERROR(check_layer_param(ctx, p.input, p.scale, "scale", checked));
  WEBNN_RETURN_IF_ERROR(check_layer_param(ctx, p.input, p.bias, "bias", checked));
  return std::vector<OperandDesc>{in};
}

}  // namespace

void register_normalization_schemas(SchemaTable& t) {
  set_schema(t, OpKind::kBatchNormalization, infer_batch_normalization,
             {{"input", kFloatTypes, 1},
              {"mean", kFloatTypes, 1, 1},
              {"variance", kFloatTypes, 1, 1},
              {"scale", kFloatTypes, 1, 1},
              {"bias", kFloatTypes, 1, 1},
              {"output", kFloatTypes, 1}});
  set_schema(t, OpKind::kInstanceNormalization, infer_instance_normalization,
             {{"input", kFloatTypes, 4, 4},
              {"scale", kFloatTypes, 1, 1},
              {"bias", kFloatTypes, 1, 1},
              {"output", kFloatTypes, 4, 4}});
  set_schema(t, OpKind::kLayerNormalization, infer_layer_normalization,
             {{"input", kFloatTypes},
              {"scale", kFloatTypes},
              {"bias", kFloatTypes},
              {"output", kFloatTypes}});
}

}  // namespace webnn
