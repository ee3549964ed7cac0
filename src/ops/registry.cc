#include <array>
#include <cstring>

#include "ops/infer.h"

namespace webnn {

namespace {

struct OpInfo {
  const char* spec;
  const char* python;
  bool multi;
};

constexpr OpInfo kOpInfo[] = {
#define WEBNN_OP(kind, spec, py, params, multi) {spec, py, multi},
#include "webnn/op_table.def"
#undef WEBNN_OP
};

constexpr int kOpFamilyCount = 0
#define WEBNN_FAMILY(name) +1
#define WEBNN_OP(kind, spec, py, params, multi)
#include "webnn/op_table.def"
#undef WEBNN_OP
    ;

// Each row's family is the WEBNN_FAMILY marker above it.
constexpr std::array<OpFamily, kOpCount> kOpFamilies = [] {
  std::array<OpFamily, kOpCount> families{};
  OpFamily current{};
  int i = 0;
#define WEBNN_FAMILY(name) current = OpFamily::k##name;
#define WEBNN_OP(kind, spec, py, params, multi) families[i++] = current;
#include "webnn/op_table.def"
#undef WEBNN_OP
  return families;
}();

SchemaTable build_schemas() {
  SchemaTable t;
  register_elementwise_schemas(t);
  register_reduction_schemas(t);
  register_movement_schemas(t);
  register_gather_schemas(t);
  register_linalg_schemas(t);
  register_conv_schemas(t);
  register_pool_schemas(t);
  register_normalization_schemas(t);
  register_quantization_schemas(t);
  register_recurrent_schemas(t);
  return t;
}

}  // namespace

const char* op_spec_name(OpKind kind) { return kOpInfo[static_cast<int>(kind)].spec; }
const char* op_python_name(OpKind kind) { return kOpInfo[static_cast<int>(kind)].python; }
bool op_multi_output(OpKind kind) { return kOpInfo[static_cast<int>(kind)].multi; }

OpFamily op_family(OpKind kind) { return kOpFamilies[static_cast<int>(kind)]; }

const std::vector<OpKind>& ops_in_family(OpFamily family) {
  static const std::vector<std::vector<OpKind>> members = [] {
    std::vector<std::vector<OpKind>> m(kOpFamilyCount);
    for (int i = 0; i < kOpCount; ++i) {
      m[static_cast<int>(kOpFamilies[i])].push_back(static_cast<OpKind>(i));
    }
    return m;
  }();
  return members[static_cast<int>(family)];
}

const std::vector<OpKind>& elementwise_unary_ops() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> k;
    for (OpFamily f : {OpFamily::kUnary, OpFamily::kActivation}) {
      for (OpKind kind : ops_in_family(f)) {
        if (op_params_are<UnaryParams>(kind)) k.push_back(kind);
      }
    }
    return k;
  }();
  return kinds;
}

std::optional<OpKind> op_from_spec_name(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i) {
    if (name == kOpInfo[i].spec) return static_cast<OpKind>(i);
  }
  return std::nullopt;
}

OpParams default_params(OpKind kind) {
  switch (kind) {
#define WEBNN_OP(kind, spec, py, params, multi) \
  case OpKind::k##kind:                         \
    return params{};
#include "webnn/op_table.def"
#undef WEBNN_OP
  }
  return std::monostate{};
}

const OperandLimit* OpSchema::limit(std::string_view field) const {
  for (const OperandLimit& l : limits) {
    if (field == l.field) return &l;
  }
  return nullptr;
}

const OpSchema& op_schema(OpKind kind) {
  static const SchemaTable table = build_schemas();  // immutable after first use
  return table[static_cast<int>(kind)];
}

std::string InferContext::prefix() const {
  std::string p = op_spec_name(node_.kind);
  if (!node_.label.empty()) p += " '" + node_.label + "'";
  return p + ": ";
}

namespace {

// The data types a field accepts: the schema's, narrowed by the target backend if any.
DataTypeMask allowed_types(const InferContext& ctx, const TypeFilter& filter,
                           const OperandLimit& limit) {
  return filter ? filter(ctx.kind(), limit.field, limit.types) : limit.types;
}

// Checks one operand against its declared limit.
Status check_limit(const InferContext& ctx, const TypeFilter& filter, const char* field,
                   const OperandLimit* limit, OperandRef r) {
  if (!limit) return Status::ok();
  const OperandDesc& d = ctx.desc(r);
  DataTypeMask types = allowed_types(ctx, filter, *limit);
  if (!mask_has(types, d.data_type)) {
    return ctx.error(field, " data type ", data_type_name(d.data_type),
                     " is not supported (allowed: ", mask_to_string(types), ")");
  }
  int rank = static_cast<int>(d.rank());
  if (rank < limit->min_rank || rank > limit->max_rank) {
    return ctx.error(field, " rank must be in [", limit->min_rank, ", ", limit->max_rank, "] (got ",
                     rank, ", shape ", shape_to_string(d.shape), ")");
  }
  return Status::ok();
}

struct LimitChecker {
  const InferContext& ctx;
  const TypeFilter& filter;
  const OpSchema& schema;
  Status status;
  void operator()(const char* name, OperandRef& r, unsigned = 0, const char* = nullptr) {
    if (status.is_ok() && r.present()) {
      status = check_limit(ctx, filter, name, schema.limit(name), r);
    }
  }
  void operator()(const char* name, OperandList& l, unsigned = 0, const char* = nullptr) {
    for (OperandRef& r : l) {
      if (status.is_ok()) status = check_limit(ctx, filter, name, schema.limit(name), r);
    }
  }
  template <class T>
  void operator()(const char*, T&, unsigned = 0, const char* = nullptr) {}
};

}  // namespace

InferResult infer_node(const Node& node, const InferContext::Lookup& lookup, bool bound_sizes,
                       const TypeFilter& filter) {
  InferContext ctx(node, lookup, bound_sizes);
  const OpSchema& schema = op_schema(node.kind);
  if (!schema.infer) {
    return ctx.error_of(ErrorKind::kNotSupported, "operation is not implemented");
  }
  LimitChecker checker{ctx, filter, schema, Status::ok()};
  visit_params(node.params, checker);
  WEBNN_RETURN_IF_ERROR(checker.status);
  WEBNN_ASSIGN_OR_RETURN(std::vector<OperandDesc> outs, schema.infer(ctx));
  const OperandLimit* out_limit = schema.limit("output");
  for (const OperandDesc& d : outs) {
    if (d.rank() > kMaxRank) {
      return ctx.error("output rank ", d.rank(), " exceeds the maximum of ", kMaxRank);
    }
    for (const Dim& dim : d.shape) {
      if (dim.value < (bound_sizes ? 0 : 1) || dim.value > kMaxDimension) {
        return ctx.error("output dimension ", dim.value, " is not a valid dimension (shape ",
                         shape_to_string(d.shape), ")");
      }
    }
    auto bytes = element_count(d.shape);
    if (!bytes.has_value() || *bytes > kMaxTensorByteLength / element_size(d.data_type)) {
      return ctx.error("output ", desc_to_string(d), " exceeds the maximum tensor byte length ",
                       kMaxTensorByteLength);
    }
    if (out_limit && !mask_has(allowed_types(ctx, filter, *out_limit), d.data_type)) {
      return ctx.error("output data type ", data_type_name(d.data_type),
                       " is not supported (allowed: ",
                       mask_to_string(allowed_types(ctx, filter, *out_limit)), ")");
    }
  }
  return outs;
}

}  // namespace webnn
