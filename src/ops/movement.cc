// Infer for casting and tensor manipulation (spec/ops.md §3.6) and the RustNN extensions
// squeeze, unsqueeze and shape (§4), including the dynamic-dimension rules of api.md §11.3–11.4.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ops/infer.h"

namespace webnn {

// The pywebnn compat forms of pad's lists (ops.md §3.6), shared with the reference kernel so
// both see the same beginning/ending lists. Returns false when the lengths fit no form.
bool normalize_pad_lists(const PadParams& p, size_t rank, IntList& begin, IntList& end) {
  const IntList& b = p.beginning_padding;
  if (p.ending_padding) {
    begin = b;
    end = *p.ending_padding;
  } else if (b.size() == 2 * rank && rank > 0) {
    begin.assign(b.begin(), b.begin() + rank);
    end.assign(b.begin() + rank, b.end());
  } else {
    begin = b;
    end.assign(b.size(), 0);
  }
  return begin.size() == rank && end.size() == rank;
}

namespace {

constexpr int64_t kMaxTensorCount = 8192;

// A dimension as an affine expression sum(coefficient * name) + constant; derived dynamic
// dimensions (api.md §11.4) are named by the canonical text of such an expression.
struct Affine {
  std::map<std::string, int64_t> terms;  // sorted by name, as the canonical text requires
  int64_t constant = 0;
  int64_t max = 0;  // the expression evaluated at the bounds (maxSize)
};

bool is_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// User names are identifiers, so a name with " + " or "*" is one this file derived earlier.
Affine affine_of(const Dim& d) {
  Affine a;
  a.max = d.value;
  if (d.is_static()) {
    a.constant = d.value;
    return a;
  }
  size_t pos = 0;
  while (pos <= d.name.size()) {
    size_t next = d.name.find(" + ", pos);
    std::string term =
        d.name.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    size_t star = term.find('*');
    if (is_digits(term)) {
      a.constant += std::stoll(term);
    } else if (star != std::string::npos && is_digits(term.substr(0, star))) {
      a.terms[term.substr(star + 1)] += std::stoll(term.substr(0, star));
    } else {
      a.terms[term] += 1;
    }
    if (next == std::string::npos) break;
    pos = next + 3;
  }
  return a;
}

Affine add(Affine a, const Affine& b) {
  for (const auto& [name, k] : b.terms) a.terms[name] += k;
  a.constant += b.constant;
  a.max += b.max;
  return a;
}

Affine scale(Affine a, int64_t r) {
  for (auto& [name, k] : a.terms) k *= r;
  a.constant *= r;
  a.max *= r;
  return a;
}

// Canonical text (api.md §11.4): terms by name, "k*name" when k != 1, constant last.
Dim to_dim(const Affine& a) {
  if (a.terms.empty()) return Dim(a.constant);
  std::string name;
  for (const auto& [n, k] : a.terms) {
    if (!name.empty()) name += " + ";
    name += k == 1 ? n : std::to_string(k) + "*" + n;
  }
  if (a.constant != 0) name += " + " + std::to_string(a.constant);
  return Dim(name, a.max);
}

// Sums and products below stay far from int64 overflow: operands are valid dimensions
// (< 2^31) and repetition/padding counts are checked against the limit before combining.
Status check_dim_limit(const InferContext& ctx, int64_t value, const char* what, size_t axis) {
  if (value > kMaxDimension) {
    return ctx.error(what, " ", value, " on axis ", axis,
                     " is not a valid dimension (must be at most ", kMaxDimension, ")");
  }
  return Status::ok();
}

InferResult one(OperandDesc d) { return std::vector<OperandDesc>{std::move(d)}; }

InferResult infer_cast(const InferContext& ctx) {
  const auto& p = ctx.params<CastParams>();
  OperandDesc d = ctx.desc(p.input);
  d.data_type = p.data_type;
  return one(std::move(d));
}

InferResult infer_concat(const InferContext& ctx) {
  const auto& p = ctx.params<ConcatParams>();
  const int64_t n = static_cast<int64_t>(p.inputs.size());
  if (n < 1 || n > kMaxTensorCount) {
    return ctx.error("inputs must hold between 1 and ", kMaxTensorCount, " operands (got ", n, ")");
  }
  const OperandDesc& first = ctx.desc(p.inputs[0]);
  const size_t rank = first.rank();
  for (int64_t i = 1; i < n; ++i) {
    const OperandDesc& d = ctx.desc(p.inputs[i]);
    if (d.data_type != first.data_type) {
      return ctx.error("inputs[", i, "] data type ", data_type_name(d.data_type),
                       " must match inputs[0] data type ", data_type_name(first.data_type));
    }
    if (d.rank() != rank) {
      return ctx.error("inputs[", i, "] rank ", d.rank(), " must match inputs[0] rank ", rank,
                       " (shapes ", shape_to_string(d.shape), " and ", shape_to_string(first.shape),
                       ")");
    }
  }
  if (rank == 0) {
    // RustNN extension: scalars stack into a 1-D tensor.
    if (p.axis != 0) return ctx.error("axis ", p.axis, " is out of range for rank-0 inputs");
    return one({first.data_type, {Dim(n)}});
  }
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, rank, "axis"));
  Affine sum;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = ctx.desc(p.inputs[i]).shape;
    for (size_t k = 0; k < rank; ++k) {
      if (static_cast<int64_t>(k) != p.axis && s[k] != first.shape[k]) {
        return ctx.error("inputs[", i, "] shape ", shape_to_string(s),
                         " must match inputs[0] shape ", shape_to_string(first.shape),
                         " on every axis but ", p.axis, " (axis ", k, " differs)");
      }
    }
    sum = add(std::move(sum), affine_of(s[p.axis]));
  }
  WEBNN_RETURN_IF_ERROR(check_dim_limit(ctx, sum.max, "concatenated size", p.axis));
  OperandDesc out = first;
  out.shape[p.axis] = to_dim(sum);
  return one(std::move(out));
}

InferResult infer_expand(const InferContext& ctx) {
  const auto& p = ctx.params<NewShapeParams>();
  const OperandDesc& in = ctx.desc(p.input);
  WEBNN_RETURN_IF_ERROR(check_unidirectional_broadcast(ctx, in.shape, p.new_shape, "input"));
  return one({in.data_type, p.new_shape});
}

// Product of the static dims (saturating past the limit) and the multiset of dynamic names.
struct ElementCount {
  int64_t product = 1;
  bool overflow = false;
  std::multiset<std::string> names;
};

ElementCount count_elements(const Shape& s) {
  ElementCount c;
  for (const Dim& d : s) {
    if (d.is_dynamic()) {
      c.names.insert(d.name);
    } else if (__builtin_mul_overflow(c.product, d.value, &c.product)) {
      c.overflow = true;
    }
  }
  return c;
}

InferResult infer_reshape(const InferContext& ctx) {
  const auto& p = ctx.params<NewShapeParams>();
  const OperandDesc& in = ctx.desc(p.input);
  for (size_t i = 0; i < p.new_shape.size(); ++i) {
    if (p.new_shape[i].value < 1 && !ctx.bound_sizes()) {
      return ctx.error("new_shape[", i, "] ", p.new_shape[i].value,
                       " is not a valid dimension (must be >= 1)");
    }
  }
  ElementCount a = count_elements(in.shape), b = count_elements(p.new_shape);
  if (a.overflow || b.overflow || a.product != b.product || a.names != b.names) {
    return ctx.error("new_shape ", shape_to_string(p.new_shape),
                     " must have the same number of elements as the input shape ",
                     shape_to_string(in.shape));
  }
  return one({in.data_type, p.new_shape});
}

InferResult infer_slice(const InferContext& ctx) {
  const auto& p = ctx.params<SliceParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const size_t rank = in.rank();
  if (p.starts.size() != rank) {
    return ctx.error("starts length ", p.starts.size(), " must equal the input rank ", rank);
  }
  if (p.sizes.size() != rank) {
    return ctx.error("sizes length ", p.sizes.size(), " must equal the input rank ", rank);
  }
  if (p.strides && p.strides->size() != rank) {
    return ctx.error("strides length ", p.strides->size(), " must equal the input rank ", rank);
  }
  OperandDesc out{in.data_type, Shape(rank)};
  for (size_t i = 0; i < rank; ++i) {
    const Dim& dim = in.shape[i];
    const Dim& size = p.sizes[i];
    const int64_t start = p.starts[i];
    const int64_t stride = p.strides ? (*p.strides)[i] : 1;
    if (stride < 1) return ctx.error("strides[", i, "] ", stride, " must be at least 1");
    // (A negative start passed the bounds check below and was read before the input: found by
    // the builder fuzz target; the Python bindings refuse it already, files and C++ did not.)
    if (start < 0) return ctx.error("starts[", i, "] ", start, " must not be negative");
    if (size.value < 1 && !ctx.bound_sizes()) {
      return ctx.error("sizes[", i, "] ", size.value, " must be at least 1");
    }
    if (stride != 1 && dim.is_dynamic()) {
      return ctx.error("dynamic dimension '", dim.name, "' is not supported on axis ", i,
                       " of slice with stride ", stride);
    }
    if (stride != 1 && size.is_dynamic()) {
      return ctx.error("dynamic sizes[", i, "] '", size.name, "' cannot be used with stride ",
                       stride);
    }
    // Bounds use maxSize for dynamic dims (api.md §11.3); dispatch re-checks bound sizes.
    if (start > dim.value || size.value > dim.value - start) {
      return ctx.error("starts[", i, "] ", start, " + sizes[", i, "] ", dim_to_string(size),
                       " exceeds the input size ", dim_to_string(dim), " on axis ", i);
    }
    out.shape[i] = size.is_dynamic() ? size : Dim((size.value + stride - 1) / stride);
  }
  return one(std::move(out));
}

InferResult infer_split(const InferContext& ctx) {
  const auto& p = ctx.params<SplitParams>();
  const OperandDesc& in = ctx.desc(p.input);
  WEBNN_RETURN_IF_ERROR(check_axis(ctx, p.axis, in.rank(), "axis"));
  WEBNN_ASSIGN_OR_RETURN(int64_t length, require_static(ctx, in.shape[p.axis], p.axis, "split"));
  std::vector<int64_t> sizes;
  if (p.splits.is_count) {
    const int64_t n = p.splits.count;
    if (n < 1 || n > kMaxTensorCount) {
      return ctx.error("splits ", n, " must be between 1 and ", kMaxTensorCount);
    }
    if (length % n != 0) {
      return ctx.error("input size ", length, " on axis ", p.axis, " is not divisible by splits ",
                       n);
    }
    sizes.assign(n, length / n);
  } else {
    const IntList& s = p.splits.sizes;
    if (s.empty() || static_cast<int64_t>(s.size()) > kMaxTensorCount) {
      return ctx.error("splits must hold between 1 and ", kMaxTensorCount, " sizes (got ", s.size(),
                       ")");
    }
    int64_t total = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] < 1) return ctx.error("splits[", i, "] ", s[i], " must be at least 1");
      if (s[i] > length) {
        return ctx.error("splits[", i, "] ", s[i], " exceeds the input size ", length, " on axis ",
                         p.axis);
      }
      total += s[i];
    }
    if (total != length) {
      return ctx.error("splits sum to ", total, " but the input size on axis ", p.axis, " is ",
                       length);
    }
    sizes = s;
  }
  std::vector<OperandDesc> outs;
  for (int64_t size : sizes) {
    OperandDesc d = in;
    d.shape[p.axis] = Dim(size);
    outs.push_back(std::move(d));
  }
  return outs;
}

InferResult infer_tile(const InferContext& ctx) {
  const auto& p = ctx.params<TileParams>();
  const OperandDesc& in = ctx.desc(p.input);
  if (p.repetitions.size() != in.rank()) {
    return ctx.error("repetitions length ", p.repetitions.size(), " must equal the input rank ",
                     in.rank());
  }
  OperandDesc out = in;
  for (size_t i = 0; i < in.rank(); ++i) {
    const int64_t r = p.repetitions[i];
    if (r < 1) return ctx.error("repetitions[", i, "] ", r, " must be at least 1");
    WEBNN_RETURN_IF_ERROR(check_dim_limit(ctx, r, "repetitions", i));
    if (r == 1) continue;
    Affine a = scale(affine_of(in.shape[i]), r);
    WEBNN_RETURN_IF_ERROR(check_dim_limit(ctx, a.max, "tiled size", i));
    out.shape[i] = to_dim(a);
  }
  return one(std::move(out));
}

InferResult infer_transpose(const InferContext& ctx) {
  const auto& p = ctx.params<TransposeParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const size_t rank = in.rank();
  IntList perm;
  if (p.permutation) {
    perm = *p.permutation;
    if (perm.size() != rank) {
      return ctx.error("permutation length ", perm.size(), " must equal the input rank ", rank);
    }
    std::vector<bool> seen(rank, false);
    for (int64_t a : perm) {
      WEBNN_RETURN_IF_ERROR(check_axis(ctx, a, rank, "permutation entry"));
      if (seen[a]) return ctx.error("permutation contains duplicate axis ", a);
      seen[a] = true;
    }
  } else {
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  OperandDesc out{in.data_type, Shape(rank)};
  for (size_t i = 0; i < rank; ++i) out.shape[i] = in.shape[perm[i]];
  return one(std::move(out));
}

InferResult infer_pad(const InferContext& ctx) {
  const auto& p = ctx.params<PadParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const size_t rank = in.rank();
  IntList begin, end;
  if (!normalize_pad_lists(p, rank, begin, end)) {
    if (p.ending_padding) {
      return ctx.error("beginning_padding length ", p.beginning_padding.size(),
                       " and ending_padding length ", p.ending_padding->size(),
                       " must both equal the input rank ", rank);
    }
    return ctx.error("beginning_padding length ", p.beginning_padding.size(),
                     " must equal the input rank ", rank, " (or ", 2 * rank,
                     " to hold beginning and ending paddings)");
  }
  const std::string& mode = p.mode;
  if (mode != "constant" && mode != "edge" && mode != "reflection" && mode != "symmetric") {
    return ctx.error("mode '", mode,
                     "' is not one of 'constant', 'edge', 'reflection', 'symmetric'");
  }
  OperandDesc out = in;
  for (size_t i = 0; i < rank; ++i) {
    const Dim& dim = in.shape[i];
    for (const int64_t pad : {begin[i], end[i]}) {
      if (pad < 0) return ctx.error("padding ", pad, " on axis ", i, " must not be negative");
      WEBNN_RETURN_IF_ERROR(check_dim_limit(ctx, pad, "padding", i));
      // Reflection mirrors around the edge element, symmetric includes it (numpy semantics).
      if (mode == "reflection" && pad > 0 && pad >= dim.value) {
        return ctx.error("reflection padding ", pad, " on axis ", i,
                         " must be smaller than the input size ", dim_to_string(dim));
      }
      if (mode == "symmetric" && pad > dim.value) {
        return ctx.error("symmetric padding ", pad, " on axis ", i,
                         " must not exceed the input size ", dim_to_string(dim));
      }
      if (mode == "edge" && pad > 0 && dim.value < 1) {
        return ctx.error("edge padding on axis ", i, " needs a non-empty input axis");
      }
    }
    if (begin[i] + end[i] == 0) continue;
    Affine a = add(affine_of(dim), affine_of(Dim(begin[i] + end[i])));
    WEBNN_RETURN_IF_ERROR(check_dim_limit(ctx, a.max, "padded size", i));
    out.shape[i] = to_dim(a);
  }
  return one(std::move(out));
}

InferResult infer_reverse(const InferContext& ctx) {
  const auto& p = ctx.params<AxesParams>();
  const OperandDesc& in = ctx.desc(p.input);
  auto axes = check_axes(ctx, p.axes, in.rank(), "axes entry");
  if (!axes) return axes.status();
  return one(in);
}

InferResult infer_triangular(const InferContext& ctx) {
  return one(ctx.desc(ctx.params<TriangularParams>().input));
}

InferResult infer_squeeze(const InferContext& ctx) {
  const auto& p = ctx.params<AxesParams>();
  const OperandDesc& in = ctx.desc(p.input);
  std::vector<bool> drop(in.rank(), false);
  if (p.axes) {
    WEBNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                           check_axes(ctx, p.axes, in.rank(), "axes entry"));
    for (int64_t a : axes) {
      const Dim& d = in.shape[a];
      if (d.is_dynamic() || d.value != 1) {
        return ctx.error("axis ", a, " has size ", dim_to_string(d),
                         "; only axes of size 1 can be squeezed");
      }
      drop[a] = true;
    }
  } else {
    // A dynamic dim is never known to be 1, so only static size-1 axes are removed.
    for (size_t i = 0; i < in.rank(); ++i)
      drop[i] = in.shape[i].is_static() && in.shape[i].value == 1;
  }
  OperandDesc out{in.data_type, {}};
  for (size_t i = 0; i < in.rank(); ++i) {
    if (!drop[i]) out.shape.push_back(in.shape[i]);
  }
  return one(std::move(out));
}

InferResult infer_unsqueeze(const InferContext& ctx) {
  const auto& p = ctx.params<UnsqueezeParams>();
  const OperandDesc& in = ctx.desc(p.input);
  const size_t out_rank = in.rank() + p.axes.size();
  if (out_rank > kMaxRank) {
    return ctx.error("output rank ", out_rank, " exceeds the maximum of ", kMaxRank);
  }
  WEBNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                         check_axes(ctx, p.axes, out_rank, "axes entry (output rank)"));
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) inserted[a] = true;
  OperandDesc out{in.data_type, Shape(out_rank)};
  size_t next = 0;
  for (size_t i = 0; i < out_rank; ++i) out.shape[i] = inserted[i] ? Dim(1) : in.shape[next++];
  return one(std::move(out));
}

InferResult infer_shape(const InferContext& ctx) {
  const OperandDesc& in = ctx.desc(ctx.params<UnaryParams>().input);
  return one({DataType::kInt64, {Dim(static_cast<int64_t>(in.rank()))}});
}

}  // namespace

void register_movement_schemas(SchemaTable& t) {
  // 4-bit types are allowed where the op only moves elements (kernels see them unpacked).
  const std::vector<OperandLimit> any = {{"input", kAllTypes}, {"output", kAllTypes}};
  set_schema(t, OpKind::kCast, infer_cast, any);
  set_schema(t, OpKind::kConcat, infer_concat, {{"inputs", kAllTypes}, {"output", kAllTypes}});
  set_schema(t, OpKind::kExpand, infer_expand, any);
  set_schema(t, OpKind::kReshape, infer_reshape, any);
  set_schema(t, OpKind::kSlice, infer_slice, any);
  set_schema(t, OpKind::kSplit, infer_split, {{"input", kAllTypes, 1}, {"output", kAllTypes, 1}});
  set_schema(t, OpKind::kTile, infer_tile, any);
  set_schema(t, OpKind::kTranspose, infer_transpose, any);
  // WebNN pad: "If input's rank is 0, then throw a TypeError."
  set_schema(t, OpKind::kPad, infer_pad, {{"input", kAllTypes, 1}, {"output", kAllTypes, 1}});
  set_schema(t, OpKind::kReverse, infer_reverse, any);
  set_schema(t, OpKind::kTriangular, infer_triangular,
             {{"input", kByteTypes, 2}, {"output", kByteTypes, 2}});
  set_schema(t, OpKind::kSqueeze, infer_squeeze, any);
  set_schema(t, OpKind::kUnsqueeze, infer_unsqueeze, any);
  // A rank-0 input would give the invalid output shape [0].
  set_schema(t, OpKind::kShape, infer_shape,
             {{"input", kAllTypes, 1}, {"output", mask_of(DataType::kInt64), 1, 1}});
}

}  // namespace webnn
