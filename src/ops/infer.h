// Shape/type inference: one pure Infer function per operation (family), plus the shared
// rules of spec/ops.md §1.4 (broadcasting, reductions, axes, dynamic dimensions).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "webnn/graph.h"
#include "webnn/status.h"

namespace webnn {

// What an Infer function sees: the node being added and the descriptors of its operands.
class InferContext {
 public:
  using Lookup = std::function<const OperandDesc&(OperandId)>;
  InferContext(const Node& node, Lookup lookup, bool bound_sizes = false)
      : node_(node), lookup_(std::move(lookup)), bound_sizes_(bound_sizes) {}

  // True when re-inferring at dispatch with dynamic dimensions bound to real sizes (which
  // may be 0); false while building, where every dimension must be >= 1.
  bool bound_sizes() const { return bound_sizes_; }

  const Node& node() const { return node_; }
  OpKind kind() const { return node_.kind; }
  template <class P>
  const P& params() const {
    return node_.as<P>();
  }
  const OperandDesc& desc(OperandRef r) const { return lookup_(r.id); }

  // "conv2d 'stem': " — every message starts with the op's spec name and the user's label.
  std::string prefix() const;
  template <class... Args>
  Status error(const Args&... args) const {
    return Status(ErrorKind::kValue, prefix() + str_cat(args...));
  }
  template <class... Args>
  Status error_of(ErrorKind kind, const Args&... args) const {
    return Status(kind, prefix() + str_cat(args...));
  }

 private:
  const Node& node_;
  Lookup lookup_;
  bool bound_sizes_ = false;
};

using InferResult = Expected<std::vector<OperandDesc>>;
using InferFn = InferResult (*)(const InferContext&);

// Allowed data types and ranks of one operand argument (or "output"); the single source for
// the generic checks in the builder and for op_support_limits().
struct OperandLimit {
  const char* field;  // params field name (snake_case) or "output"
  DataTypeMask types;
  int min_rank = 0;
  int max_rank = static_cast<int>(kMaxRank);
};

struct OpSchema {
  InferFn infer = nullptr;
  std::vector<OperandLimit> limits;
  const OperandLimit* limit(std::string_view field) const;
};

using SchemaTable = std::array<OpSchema, kOpCount>;
const OpSchema& op_schema(OpKind kind);

inline void set_schema(SchemaTable& t, OpKind kind, InferFn infer,
                       std::vector<OperandLimit> limits) {
  t[static_cast<int>(kind)] = OpSchema{infer, std::move(limits)};
}

// Family registration functions (one per src/ops/*.cc file).
void register_elementwise_schemas(SchemaTable& t);
void register_reduction_schemas(SchemaTable& t);
void register_movement_schemas(SchemaTable& t);
void register_gather_schemas(SchemaTable& t);
void register_linalg_schemas(SchemaTable& t);
void register_conv_schemas(SchemaTable& t);
void register_pool_schemas(SchemaTable& t);
void register_normalization_schemas(SchemaTable& t);
void register_quantization_schemas(SchemaTable& t);
void register_recurrent_schemas(SchemaTable& t);

// Runs the generic limit checks (data types, ranks) and then the op's Infer. At dispatch
// (`bound_sizes`), dynamic dimensions bound to 0 are legal (spec/api.md §11.5), so output
// dimensions may be 0 there; at build time every dimension must be valid (>= 1).
// A backend may execute fewer data types than an op's schema allows; the builder of a
// context rejects the others at build time, exactly as op_support_limits() reports them.
InferResult infer_node(const Node& node, const InferContext::Lookup& lookup,
                       bool bound_sizes = false, const TypeFilter& filter = {});

// ---- shared rules -------------------------------------------------------------------------

Status check_same_type(const InferContext& ctx, OperandRef a, const char* a_name, OperandRef b,
                       const char* b_name);
Expected<Shape> broadcast_bidirectional(const InferContext& ctx, const Shape& a, const Shape& b);
// `from` broadcast to `to` (len(from) <= len(to), each from[i] == to[i] or 1).
Status check_unidirectional_broadcast(const InferContext& ctx, const Shape& from, const Shape& to,
                                      const char* what);
Status check_axis(const InferContext& ctx, int64_t axis, size_t rank, const char* what);
// Distinct, in range. Returns the axes (all axes when absent).
Expected<std::vector<int64_t>> check_axes(const InferContext& ctx, const OptIntList& axes,
                                          size_t rank, const char* what);
Shape reduce_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keep);
// The static value of a dimension; ValueError when it is dynamic.
Expected<int64_t> require_static(const InferContext& ctx, const Dim& d, size_t axis,
                                 const char* what);
Status check_valid_dimension(const InferContext& ctx, int64_t size, const char* what);

}  // namespace webnn
