// Infer for element-wise families: binary arithmetic, comparison/logical, unary math,
// activations (spec/ops.md 3.1–3.4).
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

// Casting a bound to the input type: integers must be representable.
double scalar_in_type(const Scalar& s) { return s.as_double(); }

InferResult infer_clamp(const InferContext& ctx) {
  const auto& p = ctx.params<ClampParams>();
  if (p.min_value && p.max_value) {
    const Scalar &lo = *p.min_value, &hi = *p.max_value;
    bool bad = false;
    if (lo.kind == Scalar::Kind::kInt && hi.kind == Scalar::Kind::kInt) {
      bad = lo.i > hi.i;
    } else if (lo.kind == Scalar::Kind::kUint && hi.kind == Scalar::Kind::kUint) {
      bad = lo.u > hi.u;
    } else if (lo.kind == Scalar::Kind::kUint && hi.kind == Scalar::Kind::kInt) {
      bad = true;  // kUint only holds values above INT64_MAX
    } else if (lo.kind == Scalar::Kind::kInt && hi.kind == Scalar::Kind::kUint) {
      bad = false;
    } else {
      bad = scalar_in_type(lo) > scalar_in_type(hi);
    }
    if (bad) {
      return ctx.error("min_value (", lo.as_double(), ") must not exceed max_value (",
                       hi.as_double(), ")");
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
  for (OpKind k : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMax,
                   OpKind::kMin, OpKind::kPow}) {
    set_schema(t, k, infer_binary, {{"a", kByteTypes}, {"b", kByteTypes}, {"output", kByteTypes}});
  }
  for (OpKind k : {OpKind::kEqual, OpKind::kNotEqual, OpKind::kGreater, OpKind::kGreaterOrEqual,
                   OpKind::kLesser, OpKind::kLesserOrEqual}) {
    set_schema(t, k, infer_predicate,
               {{"a", kByteTypes}, {"b", kByteTypes}, {"output", mask_of(DataType::kUint8)}});
  }
  const DataTypeMask u8 = mask_of(DataType::kUint8);
  for (OpKind k : {OpKind::kLogicalAnd, OpKind::kLogicalOr, OpKind::kLogicalXor}) {
    set_schema(t, k, infer_predicate, {{"a", u8}, {"b", u8}, {"output", u8}});
  }
  set_schema(t, OpKind::kLogicalNot, infer_logical_not, {{"a", u8}, {"output", u8}});
  for (OpKind k : {OpKind::kIsNaN, OpKind::kIsInfinite}) {
    set_schema(t, k, infer_unary_predicate, {{"input", kFloatTypes}, {"output", u8}});
  }
  for (OpKind k : {OpKind::kAbs, OpKind::kNeg, OpKind::kSign, OpKind::kRelu}) {
    set_schema(t, k, infer_same_as_input<UnaryParams>,
               {{"input", kSignedNumeric}, {"output", kSignedNumeric}});
  }
  for (OpKind k :
       {OpKind::kCeil, OpKind::kCos, OpKind::kErf, OpKind::kExp, OpKind::kFloor, OpKind::kLog,
        OpKind::kReciprocal, OpKind::kRoundEven, OpKind::kSin, OpKind::kSqrt, OpKind::kTan,
        OpKind::kSigmoid, OpKind::kTanh, OpKind::kSoftplus, OpKind::kSoftsign, OpKind::kGelu}) {
    set_schema(t, k, infer_same_as_input<UnaryParams>,
               {{"input", kFloatTypes}, {"output", kFloatTypes}});
  }
  set_schema(t, OpKind::kIdentity, infer_same_as_input<UnaryParams>,
             {{"input", kAllTypes}, {"output", kAllTypes}});
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
