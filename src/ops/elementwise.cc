// Infer for element-wise families: binary arithmetic, comparison/logical, unary math,
// activations (spec/ops.md 3.1–3.4).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/infer.h"

namespace webnn {

namespace {

constexpr DataTypeMask kSignedNumeric =
    kFloatTypes | mask_of(DataType::kInt64, DataType::kInt32, DataType::kInt8);

InferResult infer_binary(const InferContext& ctx) {
  const auto& p = ctx.params<BinaryParams>();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.a, "a", p.b, "b"));
  WEBNN_ASSIGN_OR_RETURN(Shape shape,
                         broadcast_bidirectional(ctx, ctx.desc(p.a).shape, ctx.desc(p.b).shape));
  return std::vector<OperandDesc>{{ctx.desc(p.a).data_type, std::move(shape)}};
}

// Comparisons and logical ops produce uint8 booleans.
InferResult infer_predicate(const InferContext& ctx) {
  WEBNN_ASSIGN_OR_RETURN(std::vector<OperandDesc> out, infer_binary(ctx));
  out[0].data_type = DataType::kUint8;
  return out;
}

// Any op whose first field is `input` and whose output copies its type and shape.
template <class P>
InferResult infer_same_as_input(const InferContext& ctx) {
  return std::vector<OperandDesc>{ctx.desc(ctx.params<P>().input)};
}

InferResult infer_unary_predicate(const InferContext& ctx) {
  OperandDesc d = ctx.desc(ctx.params<UnaryParams>().input);
  d.data_type = DataType::kUint8;
  return std::vector<OperandDesc>{d};
}

InferResult infer_logical_not(const InferContext& ctx) {
  return std::vector<OperandDesc>{ctx.desc(ctx.params<LogicalNotParams>().a)};
}

InferResult infer_prelu(const InferContext& ctx) {
  const auto& p = ctx.params<PreluParams>();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.input, "input", p.slope, "slope"));
  WEBNN_ASSIGN_OR_RETURN(
      Shape shape, broadcast_bidirectional(ctx, ctx.desc(p.slope).shape, ctx.desc(p.input).shape));
  return std::vector<OperandDesc>{{ctx.desc(p.input).data_type, std::move(shape)}};
}

// A clamp bound after the spec's "cast" to the input data type, in a form that orders both
// bounds: integer types saturate to the type's range (fractions round half to even, NaN
// gives 0); float types round to float32/float16 (NaN stays NaN and compares false).
struct CastBound {
  __int128 i = 0;
  double f = 0;
};

CastBound cast_bound(const Scalar& s, DataType t) {
  CastBound b;
  if (t == DataType::kFloat32 || t == DataType::kFloat16) {
    const bool half = t == DataType::kFloat16;
    switch (s.kind) {
      case Scalar::Kind::kInt:
        b.f = half ? static_cast<double>(static_cast<float16>(s.i))
                   : static_cast<double>(static_cast<float>(s.i));
        break;
      case Scalar::Kind::kUint:
        b.f = half ? static_cast<double>(static_cast<float16>(s.u))
                   : static_cast<double>(static_cast<float>(s.u));
        break;
      case Scalar::Kind::kFloat:
        b.f = half ? static_cast<double>(static_cast<float16>(s.f))
                   : static_cast<double>(static_cast<float>(s.f));
        break;
    }
    return b;
  }
  __int128 lo = 0, hi = 0;
  switch (t) {
    case DataType::kInt64:
      lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      break;
    case DataType::kUint64:
      hi = std::numeric_limits<uint64_t>::max();
      break;
    case DataType::kInt32:
      lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
      break;
    case DataType::kUint32:
      hi = std::numeric_limits<uint32_t>::max();
      break;
    case DataType::kInt8:
    case DataType::kInt4:
      lo = std::numeric_limits<int8_t>::min(), hi = std::numeric_limits<int8_t>::max();
      break;
    default:
      hi = std::numeric_limits<uint8_t>::max();
      break;
  }
  __int128 v = 0;
  switch (s.kind) {
    case Scalar::Kind::kInt:
      v = s.i;
      break;
    case Scalar::Kind::kUint:
      v = s.u;
      break;
    case Scalar::Kind::kFloat:
      if (std::isnan(s.f)) {
        v = 0;
      } else if (s.f <= static_cast<double>(lo)) {
        v = lo;
      } else if (s.f >= static_cast<double>(hi)) {
        v = hi;
      } else {
        v = static_cast<__int128>(std::nearbyint(s.f));
      }
      break;
  }
  b.i = std::clamp(v, lo, hi);
  return b;
}

InferResult infer_clamp(const InferContext& ctx) {
  const auto& p = ctx.params<ClampParams>();
  const DataType t = ctx.desc(p.input).data_type;
  if (p.min_value && p.max_value) {
    // The spec compares the bounds after casting them to the input type.
    const CastBound lo = cast_bound(*p.min_value, t), hi = cast_bound(*p.max_value, t);
    const bool bad = is_float(t) ? lo.f > hi.f : lo.i > hi.i;
    if (bad) {
      return ctx.error("min_value (", p.min_value->as_double(), ") must not exceed max_value (",
                       p.max_value->as_double(), ") after casting to ", data_type_name(t));
    }
  }
  return std::vector<OperandDesc>{ctx.desc(p.input)};
}

InferResult infer_softmax(const InferContext& ctx) {
  const auto& p = ctx.params<SoftmaxParams>();
  const OperandDesc& d = ctx.desc(p.input);
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, d.rank(), "axis"));
  return std::vector<OperandDesc>{d};
}

}  // namespace

void register_elementwise_schemas(SchemaTable& t) {
  for (OpKind k : ops_in_family(OpFamily::kBinary)) {
    set_schema(t, k, infer_binary, {{"a", kByteTypes}, {"b", kByteTypes}, {"output", kByteTypes}});
  }
  for (OpKind k : ops_in_family(OpFamily::kComparison)) {
    set_schema(t, k, infer_predicate,
               {{"a", kByteTypes}, {"b", kByteTypes}, {"output", mask_of(DataType::kUint8)}});
  }
  const DataTypeMask u8 = mask_of(DataType::kUint8);
  for (OpKind k : ops_in_family(OpFamily::kLogical)) {
    if (k == OpKind::kLogicalNot) {
      set_schema(t, k, infer_logical_not, {{"a", u8}, {"output", u8}});
    } else {
      set_schema(t, k, infer_predicate, {{"a", u8}, {"b", u8}, {"output", u8}});
    }
  }
  for (OpKind k : ops_in_family(OpFamily::kClassification)) {
    set_schema(t, k, infer_unary_predicate, {{"input", kFloatTypes}, {"output", u8}});
  }
  // Unary math and the option-less activations: floating-point only, except the ops.md
  // "signed numeric" ones and identity (any type).
  for (OpKind k : elementwise_unary_ops()) {
    const bool is_signed =
        k == OpKind::kAbs || k == OpKind::kNeg || k == OpKind::kSign || k == OpKind::kRelu;
    const DataTypeMask types = k == OpKind::kIdentity ? kAllTypes
                               : is_signed            ? kSignedNumeric
                                                      : kFloatTypes;
    set_schema(t, k, infer_same_as_input<UnaryParams>, {{"input", types}, {"output", types}});
  }
  const std::vector<OperandLimit> float_only = {{"input", kFloatTypes}, {"output", kFloatTypes}};
  set_schema(t, OpKind::kHardSwish, infer_same_as_input<HardSwishParams>, float_only);
  set_schema(t, OpKind::kElu, infer_same_as_input<EluParams>, float_only);
  set_schema(t, OpKind::kLeakyRelu, infer_same_as_input<LeakyReluParams>, float_only);
  set_schema(t, OpKind::kHardSigmoid, infer_same_as_input<HardSigmoidParams>, float_only);
  set_schema(t, OpKind::kLinear, infer_same_as_input<LinearParams>, float_only);
  set_schema(t, OpKind::kPrelu, infer_prelu,
             {{"input", kSignedNumeric}, {"slope", kSignedNumeric}, {"output", kSignedNumeric}});
  set_schema(t, OpKind::kClamp, infer_clamp, {{"input", kByteTypes}, {"output", kByteTypes}});
  set_schema(t, OpKind::kSoftmax, infer_softmax,
             {{"input", kFloatTypes, 1}, {"output", kFloatTypes, 1}});
}

}  // namespace webnn
