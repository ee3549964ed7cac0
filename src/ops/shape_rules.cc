// Shared inference rules of spec/ops.md §1.4 and api.md §11.3.
#include <algorithm>

#include "ops/infer.h"

namespace webnn {

Status check_same_type(const InferContext& ctx, OperandRef a, const char* a_name, OperandRef b,
                       const char* b_name) {
  DataType ta = ctx.desc(a).data_type, tb = ctx.desc(b).data_type;
  if (ta != tb) {
    return ctx.error(b_name, " data type ", data_type_name(tb), " must match ", a_name,
                     " data type ", data_type_name(ta));
  }
  return Status::ok();
}

Expected<Shape> broadcast_bidirectional(const InferContext& ctx, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right; missing leading axes act as 1.
    const Dim one(1);
    const Dim& da = i < rank - a.size() ? one : a[i - (rank - a.size())];
    const Dim& db = i < rank - b.size() ? one : b[i - (rank - b.size())];
    if (da == db) {
      out[i] = da;
    } else if (da.is_static() && da.value == 1) {
      out[i] = db;
    } else if (db.is_static() && db.value == 1) {
      out[i] = da;
    } else {
      return ctx.error("shapes ", shape_to_string(a), " and ", shape_to_string(b),
                       " are not broadcastable (axis ", i, ": ", dim_to_string(da), " vs ",
                       dim_to_string(db), ")");
    }
  }
  return out;
}

Status check_unidirectional_broadcast(const InferContext& ctx, const Shape& from, const Shape& to,
                                      const char* what) {
  if (from.size() > to.size()) {
    return ctx.error(what, " shape ", shape_to_string(from), " has more dimensions than ",
                     shape_to_string(to));
  }
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    const Dim& f = from[i];
    const Dim& t = to[i + offset];
    if (!(f == t || (f.is_static() && f.value == 1))) {
      return ctx.error(what, " shape ", shape_to_string(from), " is not broadcastable to ",
                       shape_to_string(to));
    }
  }
  return Status::ok();
}

Status check_axis(const InferContext& ctx, int64_t axis, size_t rank, const char* what) {
  if (axis < 0 || static_cast<size_t>(axis) >= rank) {
    return ctx.error(what, " ", axis, " is out of range for rank ", rank);
  }
  return Status::ok();
}

Expected<std::vector<int64_t>> check_axes(const InferContext& ctx, const OptIntList& axes,
                                          size_t rank, const char* what) {
  std::vector<int64_t> out;
  if (!axes) {
    for (size_t i = 0; i < rank; ++i) out.push_back(static_cast<int64_t>(i));
    return out;
  }
  std::vector<bool> seen(rank, false);
  for (int64_t a : *axes) {
    WEBNN_RETURN_IF_ERROR(check_axis(ctx, a, rank, what));
    if (seen[a]) return ctx.error(what, " contains duplicate axis ", a);
    seen[a] = true;
    out.push_back(a);
  }
  return out;
}

Shape reduce_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keep) {
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!reduced) {
      out.push_back(shape[i]);
    } else if (keep) {
      out.push_back(Dim(1));
    }
  }
  return out;
}

Expected<int64_t> require_static(const InferContext& ctx, const Dim& d, size_t axis,
                                 const char* what) {
  if (d.is_dynamic()) {
    return ctx.error("dynamic dimension '", d.name, "' is not supported on axis ", axis, " of ",
                     what);
  }
  return d.value;
}

Status check_valid_dimension(const InferContext& ctx, int64_t size, const char* what) {
  if (size < 1 || size > kMaxDimension) {
    return ctx.error(what, " ", size, " is not a valid dimension (must be in [1, ", kMaxDimension,
                     "])");
  }
  return Status::ok();
}

}  // namespace webnn
