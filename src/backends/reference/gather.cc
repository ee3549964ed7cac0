// Reference kernels: gather, gatherElements, gatherND, scatterElements, scatterND, where
// (spec/ops.md 3.7). These ops only move elements, so they copy raw bytes of the (unpacked)
// element size and need no per-type dispatch. Index values come from runtime data: negative
// values count from the end and anything still out of range is clamped, so no access ever
// leaves the buffers.
#include <algorithm>

#include "backends/reference/kernels.h"

namespace webnn {

namespace {

int64_t product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= shape[i];
  return n;
}

// Index value i into an axis of size n: [-n, n) maps onto [0, n); the rest is clamped.
// Callers make sure n > 0 before any element is accessed.
int64_t normalize_index(int64_t i, int64_t n) {
  if (i < 0) i += n;
  return std::clamp<int64_t>(i, 0, std::max<int64_t>(n - 1, 0));
}

// A dynamic dimension may be bound to 0 at dispatch: indexing into an empty axis has no
// element to read or write, so a non-empty result is an error instead of a clamp.
Status check_indexed_axes(KernelContext& ctx, const std::vector<int64_t>& shape, size_t begin,
                          size_t end, uint64_t accesses) {
  for (size_t d = begin; d < end; ++d) {
    if (shape[d] == 0 && accesses > 0) {
      return ctx.error("cannot index into axis ", d, " of size 0 (input shape ",
                       shape_to_string(shape), ")");
    }
  }
  return Status::ok();
}

void copy_elements(uint8_t* dst, int64_t dst_index, const uint8_t* src, int64_t src_index,
                   int64_t count, size_t element) {
  if (count <= 0) return;  // empty tensors may have no buffer at all
  std::memmove(dst + dst_index * element, src + src_index * element,
               static_cast<size_t>(count) * element);
}

Status run_gather(KernelContext& ctx) {
  const auto& p = ctx.params<GatherParams>();
  const TensorView& in = ctx.in(p.input);
  const TensorView& indices = ctx.in(p.indices);
  TensorView& out = ctx.out();
  const size_t element = element_size(in.data_type);
  const auto axis = static_cast<size_t>(p.axis);
  const int64_t outer = product(in.shape, 0, axis);
  const int64_t axis_size = in.shape[axis];
  const int64_t inner = product(in.shape, axis + 1, in.rank());
  const auto count = static_cast<int64_t>(indices.count);
  WEBNN_RETURN_IF_ERROR(check_indexed_axes(ctx, in.shape, axis, axis + 1, out.count));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t i = normalize_index(read_index(indices, j), axis_size);
      copy_elements(out.data, (o * count + j) * inner, in.data, (o * axis_size + i) * inner, inner,
                    element);
    }
  }
  return Status::ok();
}

Status run_gather_elements(KernelContext& ctx) {
  const auto& p = ctx.params<GatherParams>();
  const TensorView& in = ctx.in(p.input);
  const TensorView& indices = ctx.in(p.indices);
  TensorView& out = ctx.out();
  const size_t element = element_size(in.data_type);
  const auto axis = static_cast<size_t>(p.axis);
  const std::vector<int64_t> strides = strides_of(in.shape);
  WEBNN_RETURN_IF_ERROR(check_indexed_axes(ctx, in.shape, axis, axis + 1, indices.count));
  for_each_index(indices.shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = d == axis ? normalize_index(read_index(indices, flat), in.shape[d]) : idx[d];
      src += i * strides[d];
    }
    copy_elements(out.data, flat, in.data, src, 1, element);
  });
  return Status::ok();
}

Status run_scatter_elements(KernelContext& ctx) {
  const auto& p = ctx.params<ScatterElementsParams>();
  const TensorView& in = ctx.in(p.input);
  const TensorView& indices = ctx.in(p.indices);
  const TensorView& updates = ctx.in(p.updates);
  TensorView& out = ctx.out();
  const size_t element = element_size(in.data_type);
  const auto axis = static_cast<size_t>(p.axis);
  const std::vector<int64_t> strides = strides_of(in.shape);
  WEBNN_RETURN_IF_ERROR(check_indexed_axes(ctx, in.shape, axis, axis + 1, indices.count));
  copy_elements(out.data, 0, in.data, 0, static_cast<int64_t>(in.count), element);
  // Row-major order makes the last duplicate win.
  for_each_index(indices.shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    int64_t dst = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = d == axis ? normalize_index(read_index(indices, flat), in.shape[d]) : idx[d];
      dst += i * strides[d];
    }
    copy_elements(out.data, dst, updates.data, flat, 1, element);
  });
  return Status::ok();
}

// Calls f(tuple, offset) for every index tuple of gatherND/scatterND indices: `offset` is
// the flat element offset of the input slice the tuple selects.
template <class F>
void for_each_nd_tuple(const TensorView& in, const TensorView& indices, F&& f) {
  const auto k = static_cast<size_t>(indices.shape.back());
  const std::vector<int64_t> strides = strides_of(in.shape);
  const auto tuples = static_cast<int64_t>(indices.count) / static_cast<int64_t>(k);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (size_t d = 0; d < k; ++d) {
      int64_t v = read_index(indices, t * static_cast<int64_t>(k) + static_cast<int64_t>(d));
      offset += normalize_index(v, in.shape[d]) * strides[d];
    }
    f(t, offset);
  }
}

Status run_gather_nd(KernelContext& ctx) {
  const auto& p = ctx.params<GatherNdParams>();
  const TensorView& in = ctx.in(p.input);
  const TensorView& indices = ctx.in(p.indices);
  TensorView& out = ctx.out();
  const size_t element = element_size(in.data_type);
  const auto k = static_cast<size_t>(indices.shape.back());
  const int64_t slice = product(in.shape, k, in.rank());
  WEBNN_RETURN_IF_ERROR(check_indexed_axes(ctx, in.shape, 0, k, out.count));
  for_each_nd_tuple(in, indices, [&](int64_t t, int64_t offset) {
    copy_elements(out.data, t * slice, in.data, offset, slice, element);
  });
  return Status::ok();
}

Status run_scatter_nd(KernelContext& ctx) {
  const auto& p = ctx.params<ScatterNdParams>();
  const TensorView& in = ctx.in(p.input);
  const TensorView& indices = ctx.in(p.indices);
  const TensorView& updates = ctx.in(p.updates);
  TensorView& out = ctx.out();
  const size_t element = element_size(in.data_type);
  const auto k = static_cast<size_t>(indices.shape.back());
  const int64_t slice = product(in.shape, k, in.rank());
  WEBNN_RETURN_IF_ERROR(check_indexed_axes(ctx, in.shape, 0, k, updates.count));
  copy_elements(out.data, 0, in.data, 0, static_cast<int64_t>(in.count), element);
  // Tuples are applied in order, so the last duplicate wins.
  for_each_nd_tuple(in, indices, [&](int64_t t, int64_t offset) {
    copy_elements(out.data, offset, updates.data, t * slice, slice, element);
  });
  return Status::ok();
}

Status run_where(KernelContext& ctx) {
  const auto& p = ctx.params<WhereParams>();
  const TensorView& cond = ctx.in(p.condition);
  const TensorView& on_true = ctx.in(p.true_value);
  const TensorView& on_false = ctx.in(p.false_value);
  TensorView& out = ctx.out();
  const size_t element = element_size(on_true.data_type);
  const auto sc = broadcast_strides(cond.shape, out.shape);
  const auto st = broadcast_strides(on_true.shape, out.shape);
  const auto sf = broadcast_strides(on_false.shape, out.shape);
  const auto* c = cond.as<uint8_t>();
  for_each_index(out.shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    if (c[dot_index(idx, sc)] != 0) {
      copy_elements(out.data, flat, on_true.data, dot_index(idx, st), 1, element);
    } else {
      copy_elements(out.data, flat, on_false.data, dot_index(idx, sf), 1, element);
    }
  });
  return Status::ok();
}

}  // namespace

void register_reference_gather(KernelTable& t) {
  auto set = [&](OpKind k, KernelFn fn) { t[static_cast<int>(k)] = fn; };
  set(OpKind::kGather, run_gather);
  set(OpKind::kGatherElements, run_gather_elements);
  set(OpKind::kGatherNd, run_gather_nd);
  set(OpKind::kScatterElements, run_scatter_elements);
  set(OpKind::kScatterNd, run_scatter_nd);
  set(OpKind::kWhere, run_where);
}

}  // namespace webnn
