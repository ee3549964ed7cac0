// Infer for the quantization family: quantizeLinear, dequantizeLinear (spec/ops.md §3.11).
#include "ops/infer.h"

namespace webnn {

namespace {

// The WPT corpus quantizes to 4-bit zero points too (unpacked one per byte while computing).
constexpr DataTypeMask kQuantizedTypes =
    mask_of(DataType::kUint8, DataType::kInt8, DataType::kUint32, DataType::kInt32, DataType::kInt4,
            DataType::kUint4);

// ops.md §1.4 blockwise broadcast: same rank, and every input dimension is a whole number of
// blocks of the parameter's dimension. A parameter dimension of 1 or one equal to the input's
// (including the same dynamic dimension) always fits; any other split needs static sizes.
Status check_blockwise(const InferContext& ctx, const Shape& from, const char* what,
                       const Shape& to) {
  if (from.size() != to.size()) {
    return ctx.error(what, " rank ", from.size(), " (shape ", shape_to_string(from),
                     ") must equal the input rank ", to.size(), " (shape ", shape_to_string(to),
                     ")");
  }
  for (size_t i = 0; i < from.size(); ++i) {
    const Dim& f = from[i];
    const Dim& t = to[i];
    if (f == t || (f.is_static() && f.value == 1)) continue;
    WEBNN_ASSIGN_OR_RETURN(int64_t fs, require_static(ctx, f, i, what));
    WEBNN_ASSIGN_OR_RETURN(int64_t ts, require_static(ctx, t, i, "input"));
    if (ts % fs != 0) {
      return ctx.error(what, " shape ", shape_to_string(from),
                       " is not blockwise broadcastable to input shape ", shape_to_string(to),
                       " (axis ", i, ": ", ts, " is not a multiple of ", fs, ")");
    }
  }
  return Status::ok();
}

Status check_params(const InferContext& ctx, const QuantizeParams& p) {
  const Shape& in = ctx.desc(p.input).shape;
  const Shape& scale = ctx.desc(p.scale).shape;
  WEBNN_RETURN_IF_ERROR(check_blockwise(ctx, scale, "scale", in));
  if (p.zero_point.present()) {
    const Shape& zp = ctx.desc(p.zero_point).shape;
    if (zp != scale) {
      return ctx.error("zero_point shape ", shape_to_string(zp), " must equal scale shape ",
                       shape_to_string(scale));
    }
  }
  return Status::ok();
}

InferResult infer_quantize(const InferContext& ctx) {
  const auto& p = ctx.params<QuantizeParams>();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.input, "input", p.scale, "scale"));
  WEBNN_RETURN_IF_ERROR(check_params(ctx, p));
  // RustNN extension: an absent zero point means uint8 zeros.
  DataType out = p.zero_point.present() ? ctx.desc(p.zero_point).data_type : DataType::kUint8;
  return std::vector<OperandDesc>{{out, ctx.desc(p.input).shape}};
}

InferResult infer_dequantize(const InferContext& ctx) {
  const auto& p = ctx.params<QuantizeParams>();
  if (p.zero_point.present()) {
    WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.input, "input", p.zero_point, "zero_point"));
  }
  WEBNN_RETURN_IF_ERROR(check_params(ctx, p));
  return std::vector<OperandDesc>{{ctx.desc(p.scale).data_type, ctx.desc(p.input).shape}};
}

}  // namespace

void register_quantization_schemas(SchemaTable& t) {
  set_schema(t, OpKind::kQuantizeLinear, infer_quantize,
             {{"input", kFloatTypes},
              {"scale", kFloatTypes},
              {"zero_point", kQuantizedTypes},
              {"output", kQuantizedTypes}});
  set_schema(t, OpKind::kDequantizeLinear, infer_dequantize,
             {{"input", kQuantizedTypes},
              {"scale", kFloatTypes},
              {"zero_point", kQuantizedTypes},
              {"output", kFloatTypes}});
}

}  // namespace webnn
