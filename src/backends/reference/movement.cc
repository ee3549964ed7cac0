// Reference kernels for casting and tensor manipulation (spec/ops.md §3.6, §4).
// Data movement copies whole elements as bytes, so one kernel serves every data type; 4-bit
// tensors arrive unpacked one element per byte and the executor packs the outputs.
#include <algorithm>
#include <limits>

#include "backends/reference/kernels.h"
#include "core/pad_source.h"

namespace webnn {

// Defined in src/ops/movement.cc: the one place pad's compat list forms are resolved.
bool normalize_pad_lists(const PadParams& p, size_t rank, IntList& begin, IntList& end);

namespace {

size_t byte_size(DataType t) { return static_cast<size_t>(element_size(unpacked_type(t))); }

// Fills every output element from the input element at the multi-index `src` that
// map(out_index, src) chooses; when map returns false the element is `fill` instead.
template <class F>
void copy_mapped(const TensorView& in, TensorView& out, const uint8_t* fill, F&& map) {
  const size_t es = byte_size(in.data_type);
  const std::vector<int64_t> in_strides = strides_of(in.shape);
  std::vector<int64_t> src(in.rank(), 0);
  for_each_index(out.shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    uint8_t* dst = out.data + flat * es;
    if (map(idx, src)) {
      std::memcpy(dst, in.data + dot_index(src, in_strides) * es, es);
    } else {
      std::memcpy(dst, fill, es);
    }
  });
}

// ---- cast -------------------------------------------------------------------------------

Status run_cast(KernelContext& ctx) {
  const TensorView& in = ctx.in(ctx.params<CastParams>().input);
  TensorView& out = ctx.out();
  const DataType to = out.data_type;
  dispatch_type(in.data_type, [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_type(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* src = in.as<From>();
      To* dst = out.as<To>();
      for (uint64_t i = 0; i < in.count; ++i) dst[i] = cast_value<To, From>(src[i], to);
    });
  });
  return Status::ok();
}

// ---- whole-buffer copies: reshape, squeeze, unsqueeze ----------------------------------

template <class P>
Status run_copy(KernelContext& ctx) {
  const TensorView& in = ctx.in(ctx.params<P>().input);
  // The cpu memory plan gives a reshape's output its dying input's buffer (an alias).
  if (ctx.out().data == in.data) return Status::ok();
  std::memcpy(ctx.out().data, in.data, in.count * byte_size(in.data_type));
  return Status::ok();
}

// ---- concat / split: blocks of (axis slice x inner) elements ----------------------------

// Number of elements before `axis` (outer) and after it (inner).
void outer_inner(const std::vector<int64_t>& shape, size_t axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
}

Status run_concat(KernelContext& ctx) {
  const auto& p = ctx.params<ConcatParams>();
  TensorView& out = ctx.out();
  const size_t es = byte_size(out.data_type);
  if (ctx.in(p.inputs[0]).rank() == 0) {
    for (size_t i = 0; i < p.inputs.size(); ++i)
      std::memcpy(out.data + i * es, ctx.in(p.inputs[i]).data, es);
    return Status::ok();
  }
  int64_t outer, inner;
  outer_inner(out.shape, p.axis, outer, inner);
  const int64_t out_row = out.shape[p.axis] * inner;
  int64_t offset = 0;  // elements of the axis already written, times inner
  for (OperandRef r : p.inputs) {
    const TensorView& in = ctx.in(r);
    const int64_t row = in.shape[p.axis] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out.data + (o * out_row + offset) * es, in.data + o * row * es, row * es);
    }
    offset += row;
  }
  return Status::ok();
}

Status run_split(KernelContext& ctx) {
  const auto& p = ctx.params<SplitParams>();
  const TensorView& in = ctx.in(p.input);
  const size_t es = byte_size(in.data_type);
  int64_t outer, inner;
  outer_inner(in.shape, p.axis, outer, inner);
  const int64_t in_row = in.shape[p.axis] * inner;
  int64_t offset = 0;
  for (size_t k = 0; k < ctx.output_count(); ++k) {
    TensorView& out = ctx.out(k);
    const int64_t row = out.shape[p.axis] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out.data + o * row * es, in.data + (o * in_row + offset) * es, row * es);
    }
    offset += row;
  }
  return Status::ok();
}

// ---- index-mapped copies ----------------------------------------------------------------

Status run_expand(KernelContext& ctx) {
  const TensorView& in = ctx.in(ctx.params<NewShapeParams>().input);
  TensorView& out = ctx.out();
  const size_t offset = out.rank() - in.rank();
  copy_mapped(in, out, nullptr, [&](const std::vector<int64_t>& idx, std::vector<int64_t>& src) {
    for (size_t i = 0; i < in.rank(); ++i) src[i] = in.shape[i] == 1 ? 0 : idx[i + offset];
    return true;
  });
  return Status::ok();
}

Status run_slice(KernelContext& ctx) {
  const auto& p = ctx.params<SliceParams>();
  const TensorView& in = ctx.in(p.input);
  copy_mapped(in, ctx.out(), nullptr,
              [&](const std::vector<int64_t>& idx, std::vector<int64_t>& src) {
                for (size_t i = 0; i < in.rank(); ++i) {
                  const int64_t stride = p.strides ? (*p.strides)[i] : 1;
                  src[i] = p.starts[i] + idx[i] * stride;
                }
                return true;
              });
  return Status::ok();
}

Status run_tile(KernelContext& ctx) {
  const TensorView& in = ctx.in(ctx.params<TileParams>().input);
  copy_mapped(in, ctx.out(), nullptr,
              [&](const std::vector<int64_t>& idx, std::vector<int64_t>& src) {
                for (size_t i = 0; i < in.rank(); ++i) src[i] = idx[i] % in.shape[i];
                return true;
              });
  return Status::ok();
}

Status run_transpose(KernelContext& ctx) {
  const auto& p = ctx.params<TransposeParams>();
  const TensorView& in = ctx.in(p.input);
  const size_t rank = in.rank();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) {
    perm[i] = p.permutation ? (*p.permutation)[i] : static_cast<int64_t>(rank - 1 - i);
  }
  copy_mapped(in, ctx.out(), nullptr,
              [&](const std::vector<int64_t>& idx, std::vector<int64_t>& src) {
                for (size_t i = 0; i < rank; ++i) src[perm[i]] = idx[i];
                return true;
              });
  return Status::ok();
}

Status run_reverse(KernelContext& ctx) {
  const auto& p = ctx.params<AxesParams>();
  const TensorView& in = ctx.in(p.input);
  std::vector<bool> flip(in.rank(), !p.axes.has_value());
  if (p.axes) {
    for (int64_t a : *p.axes) flip[a] = true;
  }
  copy_mapped(in, ctx.out(), nullptr,
              [&](const std::vector<int64_t>& idx, std::vector<int64_t>& src) {
                for (size_t i = 0; i < in.rank(); ++i) {
                  src[i] = flip[i] ? in.shape[i] - 1 - idx[i] : idx[i];
                }
                return true;
              });
  return Status::ok();
}

// ---- pad ---------------------------------------------------------------------------------

// The pad value cast to T with the spec's "cast" algorithm (ops.md §1.4): integers stay
// exact and saturate at T's range (the nibble's range for 4-bit inputs); fractions round
// half to even.
template <class T>
T pad_value(const Scalar& s, DataType t) {
  if constexpr (kIsFloat<T>) {
    // Straight from the integer so that large int64 values round once.
    if (s.kind == Scalar::Kind::kInt) return static_cast<T>(s.i);
    if (s.kind == Scalar::Kind::kUint) return static_cast<T>(s.u);
    return static_cast<T>(s.f);
  } else {
    const bool four = is_4bit(t);
    const int64_t lo = four ? four_bit_range(t).lo : std::numeric_limits<T>::min();
    const uint64_t hi = four ? four_bit_range(t).hi : std::numeric_limits<T>::max();
    switch (s.kind) {
      case Scalar::Kind::kInt:
        if (s.i < lo) return static_cast<T>(lo);
        return s.i > 0 && static_cast<uint64_t>(s.i) > hi ? static_cast<T>(hi)
                                                          : static_cast<T>(s.i);
      case Scalar::Kind::kUint:
        return static_cast<T>(std::min(s.u, hi));
      case Scalar::Kind::kFloat: {
        // The spec's ConvertToInt: NaN gives 0, then clamp and round half to even.
        if (std::isnan(s.f)) return T(0);
        if (s.f <= static_cast<double>(lo)) return static_cast<T>(lo);
        if (s.f >= static_cast<double>(hi)) return static_cast<T>(hi);
        const double r = std::nearbyint(s.f);
        return r < 0 ? static_cast<T>(static_cast<int64_t>(r))
                     : static_cast<T>(static_cast<uint64_t>(r));
      }
    }
    return T(0);
  }
}

Status run_pad(KernelContext& ctx) {
  const auto& p = ctx.params<PadParams>();
  const TensorView& in = ctx.in(p.input);
  IntList begin, end;
  if (!normalize_pad_lists(p, in.rank(), begin, end)) {
    return ctx.error("padding lengths do not match the input rank ", in.rank());
  }
  uint8_t fill[8] = {};
  dispatch_type(in.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T v = pad_value<T>(p.value, in.data_type);
    std::memcpy(fill, &v, sizeof(T));
  });
  copy_mapped(in, ctx.out(), fill, [&](const std::vector<int64_t>& idx, std::vector<int64_t>& src) {
    for (size_t i = 0; i < in.rank(); ++i) {
      src[i] = pad_source(idx[i] - begin[i], in.shape[i], p.mode);
      if (src[i] < 0) return false;
    }
    return true;
  });
  return Status::ok();
}

// ---- triangular, shape --------------------------------------------------------------------

Status run_triangular(KernelContext& ctx) {
  const auto& p = ctx.params<TriangularParams>();
  const TensorView& in = ctx.in(p.input);
  const size_t es = byte_size(in.data_type);
  const int64_t rows = in.shape[in.rank() - 2], cols = in.shape[in.rank() - 1];
  TensorView& out = ctx.out();
  std::memset(out.data, 0, in.count * es);  // zero is all-zero bytes for every data type
  for (uint64_t base = 0; base < in.count; base += rows * cols) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const bool keep = p.upper ? j - i >= p.diagonal : j - i <= p.diagonal;
        if (!keep) continue;
        const uint64_t at = (base + i * cols + j) * es;
        std::memcpy(out.data + at, in.data + at, es);
      }
    }
  }
  return Status::ok();
}

Status run_shape(KernelContext& ctx) {
  const TensorView& in = ctx.in(ctx.params<UnaryParams>().input);
  int64_t* out = ctx.out().as<int64_t>();
  for (size_t i = 0; i < in.rank(); ++i) out[i] = in.shape[i];
  return Status::ok();
}

}  // namespace

void register_reference_movement(KernelTable& t) {
  auto set = [&](OpKind k, KernelFn fn) { t[static_cast<int>(k)] = fn; };
  set(OpKind::kCast, run_cast);
  set(OpKind::kConcat, run_concat);
  set(OpKind::kExpand, run_expand);
  set(OpKind::kReshape, run_copy<NewShapeParams>);
  set(OpKind::kSlice, run_slice);
  set(OpKind::kSplit, run_split);
  set(OpKind::kTile, run_tile);
  set(OpKind::kTranspose, run_transpose);
  set(OpKind::kPad, run_pad);
  set(OpKind::kReverse, run_reverse);
  set(OpKind::kTriangular, run_triangular);
  set(OpKind::kSqueeze, run_copy<AxesParams>);
  set(OpKind::kUnsqueeze, run_copy<UnsqueezeParams>);
  set(OpKind::kShape, run_shape);
}

}  // namespace webnn
