// Layout assignment, for the cpu backend: its convolutions run on NHWC data (an NCHW conv2d or
// convTranspose2d transposes its input and output around the kernel on every run). Each NCHW
// conv2d (likewise convTranspose2d) becomes
//   transpose(NCHW -> NHWC) -> conv2d(nhwc) -> transpose(NHWC -> NCHW)
// and, in one forward walk, transposes are sunk through the layout-agnostic nodes that follow
// (element-wise ops, prelu, quantizeLinear / dequantizeLinear, batch normalization, pools,
// resample2d, concat, reductions — their axes or constants permuted once here) until they meet
// the inverse transpose of the next convolution and cancel. A reshape that only inserts or
// removes size-1 axes (an importer's squeeze / unsqueeze) is moved through too: the walk then
// carries a view (View: the source's axes relabelled, some size-1 axes dropped or added), and
// element-wise ops and reductions on it run on the source in its shape — a 1-D conv's NHWC
// output [n,w,1,c], squeezed from NCHW [n,c,w,1] to [n,c,w], keeps its activation chain in the
// conv's shape, where epilogue fusion can take it. What remains are transposes (and reshapes)
// where the graph's layout is observed (its inputs and outputs, or an op this pass does not move
// through). Element-wise results are unchanged (the same values meet), reductions too (they
// visit the same elements in the same order: the reduced axes keep their relative order);
// convolutions may sum in another order (tested against the reference).
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

using Perm = std::vector<int64_t>;
const Perm kToNhwc = {0, 2, 3, 1};
const Perm kToNchw = {0, 3, 1, 2};

// transpose(x, perm): out[i] = in[perm[i]].
Shape permuted(const Shape& s, const Perm& p) {
  Shape out;
  for (int64_t a : p) out.push_back(s[a]);
  return out;
}

Shape unpermuted(const Shape& s, const Perm& p) {
  Shape out(s.size());
  for (size_t i = 0; i < p.size(); ++i) out[p[i]] = s[i];
  return out;
}

Perm inverse(const Perm& p) {
  Perm inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

bool is_identity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Element-wise ops, whose layout does not matter: the cpu vector ones plus the rest.
bool is_elementwise_unary(OpKind k) {
  return is_cpu_vector_unary(k) || k == OpKind::kLog || k == OpKind::kErf || k == OpKind::kElu ||
         k == OpKind::kGelu || k == OpKind::kSoftplus || k == OpKind::kSoftsign;
}

bool is_elementwise_binary(OpKind k) { return is_cpu_vector_binary(k) || k == OpKind::kPow; }

bool is_reduction(OpKind k) {
  switch (k) {
    case OpKind::kReduceL1:
    case OpKind::kReduceL2:
    case OpKind::kReduceLogSum:
    case OpKind::kReduceLogSumExp:
    case OpKind::kReduceMax:
    case OpKind::kReduceMean:
    case OpKind::kReduceMin:
    case OpKind::kReduceProduct:
    case OpKind::kReduceSum:
    case OpKind::kReduceSumSquare:
      return true;
    default:
      return false;
  }
}

bool is_unit(const Dim& d) { return d.value == 1; }  // static graphs only (assign_layouts)

// Whether `axes` (a view's, below) relabels all `rank` axes of its source: a transpose.
bool is_permutation(const std::vector<int64_t>& axes, size_t rank) {
  if (axes.size() != rank) return false;
  for (int64_t a : axes) {
    if (a < 0) return false;
  }
  return true;
}

// A constant broadcast into a value V that is a view of a source of shape `src` (axes[i]: the
// source axis of V's axis i, -1 for a size-1 axis the source lacks), rewritten to broadcast
// into the source: its axis i becomes source axis axes[i]. -1 when the constant is larger than
// V along an axis the source lacks.
OperandId remap_constant(Graph& graph, OperandId id, const std::vector<int64_t>& axes,
                         const Shape& src) {
  const Operand& c = graph.operands[id];
  std::vector<int64_t> shape = static_sizes(c.desc.shape);
  if (shape.size() > axes.size()) return -1;
  while (shape.size() < axes.size()) shape.insert(shape.begin(), 1);
  const size_t rank = src.size();
  std::vector<int64_t> out_shape(rank, 1), in_axis(rank, -1);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0) {
      if (shape[i] != 1) return -1;
      continue;
    }
    out_shape[axes[i]] = shape[i];
    in_axis[axes[i]] = static_cast<int64_t>(i);
  }
  std::vector<int64_t> in_strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) in_strides[i - 1] = in_strides[i] * shape[i];
  const size_t es = static_cast<size_t>(element_size(c.desc.data_type));
  size_t count = 1;
  for (int64_t d : out_shape) count *= static_cast<size_t>(d);
  std::vector<uint8_t> bytes(count * es);
  std::vector<int64_t> idx(rank, 0);  // index into the result
  for (size_t k = 0; k < count; ++k) {
    int64_t from = 0;
    for (size_t j = 0; j < rank; ++j) {
      if (in_axis[j] >= 0) from += idx[j] * in_strides[in_axis[j]];
    }
    std::memcpy(bytes.data() + k * es, c.constant->data() + from * es, es);
    for (size_t a = rank; a-- > 0;) {
      if (++idx[a] < out_shape[a]) break;
      idx[a] = 0;
    }
  }
  OperandDesc d{c.desc.data_type, to_shape(out_shape)};
  return add_constant(graph, d, std::move(bytes));
}

// A constant of rank <= perm.size(), broadcast-aligned to the permuted value, rewritten for the
// unpermuted one: leading ones added, then its axes permuted by inverse(perm) (remap_constant
// with every axis kept).
OperandId permute_constant(Graph& graph, OperandId id, const Perm& p) {
  return remap_constant(graph, id, p, Shape(p.size()));
}

class LayoutWalk {
 public:
  explicit LayoutWalk(Graph& graph) : g_(graph) {}

  int64_t run() {
    std::vector<Node> old = std::move(g_.nodes);
    g_.nodes.clear();
    for (Node& node : old) visit(std::move(node));
    renumber_producers(g_);
    return rewrites_;
  }

 private:
  struct Transposed {
    OperandId src;
    Perm perm;
  };
  // A value holding the elements of `src` in the same order of the non-1 axes up to a
  // relabelling: its axis i is source axis axes[i] (the same size) or, with -1, a size-1 axis
  // the source lacks; every axis of src not of size 1 is some axes[i]. A transposed value is
  // the view whose axes are its permutation; reshapes that insert or remove size-1 axes make
  // the others (kept in views_).
  struct View {
    OperandId src;
    std::vector<int64_t> axes;
  };

  std::optional<View> view_of(OperandId id) const {
    if (const Transposed* t = transposed(id)) return View{t->src, t->perm};
    auto it = views_.find(id);
    if (it == views_.end()) return std::nullopt;
    return it->second;
  }

  // Writes `out` (of its recorded descriptor) as the view (src, axes): a transpose when that
  // is one, else a reshape of src when the non-1 axes keep their order, else a transpose of
  // src bringing them into V's order, then a reshape.
  void emit_view(OperandId src, const std::vector<int64_t>& axes, OperandId out) {
    const Shape ss = g_.desc(src).shape;  // copies: emit_transpose adds operands
    if (is_permutation(axes, ss.size())) {
      emit_transpose(src, axes, out);
      return;
    }
    const Shape vs = g_.desc(out).shape;
    Perm q;
    std::vector<bool> used(ss.size(), false);
    for (int64_t a : axes) {
      if (a >= 0) q.push_back(a), used[a] = true;
    }
    for (size_t j = 0; j < ss.size(); ++j) {
      if (!used[j]) q.push_back(static_cast<int64_t>(j));  // size 1
    }
    int64_t last = -1;
    bool ordered = true;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (is_unit(vs[i])) continue;
      ordered = ordered && axes[i] > last;
      last = axes[i];
    }
    const OperandId from = ordered ? src : emit_transpose(src, q);
    Node r{OpKind::kReshape, "", NewShapeParams{{from}, vs}, {out}, {}};
    g_.nodes.push_back(std::move(r));
    views_[out] = View{src, axes};
  }

  // `node` (already rewired to read the views' sources) computes the value of the view (its
  // output, of `inner` descriptor; axes `axes`); the original output id becomes that view.
  void emit_sunk_view(Node node, const OperandDesc& inner, const std::vector<int64_t>& axes) {
    const OperandId orig = node.outputs[0];
    const OperandId value = add_value(g_, inner);
    node.outputs[0] = value;
    g_.nodes.push_back(std::move(node));
    emit_view(value, axes, orig);
    ++rewrites_;
  }

  const Transposed* transposed(OperandId id) const {
    auto it = tof_.find(id);
    return it == tof_.end() ? nullptr : &it->second;
  }

  OperandId resolve(OperandId id) const {
    auto it = alias_.find(id);
    return it == alias_.end() ? id : it->second;
  }

  // transpose(x, q) as a value: cancels against a transpose x already is, and is made once per
  // (x, q) (a graph input read by several convolutions).
  OperandId emit_transpose(OperandId x, const Perm& q, OperandId out = -1) {
    if (out < 0) {
      auto it = memo_.find({x, q});
      if (it != memo_.end()) return it->second;
      const OperandId made = make_transpose(x, q, -1);
      memo_[{x, q}] = made;
      return made;
    }
    return make_transpose(x, q, out);
  }

  OperandId make_transpose(OperandId x, const Perm& q, OperandId out) {
    Perm p = q;
    OperandId src = x;
    if (const Transposed* t = transposed(x)) {
      Perm r(q.size());
      for (size_t i = 0; i < q.size(); ++i) r[i] = t->perm[q[i]];
      if (is_identity(r) && out < 0) return t->src;
      src = t->src;
      p = r;
    }
    if (out < 0) {
      out = add_value(g_, OperandDesc{g_.desc(x).data_type, permuted(g_.desc(x).shape, q)});
    }
    Node t{OpKind::kTranspose, "", TransposeParams{{src}, p}, {out}, {}};
    g_.nodes.push_back(std::move(t));
    tof_[out] = {src, p};
    return out;
  }

  // `node` (already rewired to unpermuted operands) computes the unpermuted form of its output;
  // the original output id becomes a transpose of it.
  void emit_sunk(Node node, const Perm& p) {
    const OperandId orig = node.outputs[0];
    const OperandDesc& d = g_.desc(orig);
    const OperandId inner = add_value(g_, OperandDesc{d.data_type, unpermuted(d.shape, p)});
    node.outputs[0] = inner;
    g_.nodes.push_back(std::move(node));
    emit_transpose(inner, p, orig);
    ++rewrites_;
  }

  // emit_sunk for a node of several outputs (split): each one a transpose of its unpermuted form.
  void emit_sunk_outputs(Node node, const Perm& p) {
    std::vector<OperandId> orig = node.outputs;
    for (OperandId& o : node.outputs) {
      const OperandDesc& d = g_.desc(o);
      o = add_value(g_, OperandDesc{d.data_type, unpermuted(d.shape, p)});
    }
    std::vector<OperandId> inner = node.outputs;
    g_.nodes.push_back(std::move(node));
    for (size_t i = 0; i < orig.size(); ++i) emit_transpose(inner[i], p, orig[i]);
    ++rewrites_;
  }

  void visit(Node node) {
    for_each_operand(node.params, [&](OperandRef& r) { r.id = resolve(r.id); });
    if (node.kind == OpKind::kSplit) {
      // A split of a transposed value splits the source along the permuted axis (YOLOv8's C2f
      // blocks split their NHWC conv output by channels: two transposes around every split).
      auto& p = std::get<SplitParams>(node.params);
      const Transposed* t = transposed(p.input.id);
      bool static_outputs = true;
      for (OperandId o : node.outputs) static_outputs &= is_static_shape(g_.desc(o).shape);
      if (!t || !static_outputs || t->perm.size() != g_.desc(p.input.id).shape.size()) {
        return keep(std::move(node));
      }
      Perm perm = t->perm;
      p.input.id = t->src;
      p.axis = perm[p.axis];
      return emit_sunk_outputs(std::move(node), perm);
    }
    if (node.outputs.size() != 1 || !is_static_shape(g_.desc(node.outputs[0]).shape)) {
      return keep(std::move(node));
    }
    const OperandId out = node.outputs[0];
    switch (node.kind) {
      case OpKind::kTranspose: {
        const auto& p = node.as<TransposeParams>();
        const Transposed* t = transposed(p.input.id);
        auto v = views_.find(p.input.id);
        if (!t && p.permutation && v != views_.end()) {
          std::vector<int64_t> axes;
          for (int64_t a : *p.permutation) axes.push_back(v->second.axes[a]);
          return emit_relabelled(v->second.src, axes, out);
        }
        if (!t || !p.permutation) return keep_transpose(std::move(node));
        Perm r(p.permutation->size());
        for (size_t i = 0; i < r.size(); ++i) r[i] = t->perm[(*p.permutation)[i]];
        if (is_identity(r) && !is_graph_output(g_, out)) {
          alias_[out] = t->src;
          ++rewrites_;
          return;
        }
        return keep_transpose(std::move(node));
      }
      case OpKind::kConv2d: {
        auto& p = std::get<Conv2dParams>(node.params);
        const OperandDesc& y = g_.desc(out);
        if (p.input_layout != "nchw" || y.shape.size() != 4 || y.data_type != DataType::kFloat32) {
          break;
        }
        p.input = {emit_transpose(p.input.id, kToNhwc)};
        p.input_layout = "nhwc";
        return emit_sunk(std::move(node), kToNchw);
      }
      case OpKind::kConvTranspose2d: {  // the same NHWC kernels (conv_transpose.cc)
        auto& p = std::get<ConvTranspose2dParams>(node.params);
        const OperandDesc& y = g_.desc(out);
        if (p.input_layout != "nchw" || y.shape.size() != 4 || y.data_type != DataType::kFloat32) {
          break;
        }
        if (keeps_planar_nchw(p, y)) break;
        p.input = {emit_transpose(p.input.id, kToNhwc)};
        p.input_layout = "nhwc";
        return emit_sunk(std::move(node), kToNchw);
      }
      case OpKind::kGather: {
        // A byte-indexed table (byte_index_gathers.cc): element-wise in its indices.
        auto& p = std::get<GatherParams>(node.params);
        const DataType it = g_.desc(p.indices.id).data_type;
        const Transposed* t = transposed(p.indices.id);
        if (!t || p.axis != 0 || g_.desc(p.input.id).shape.size() != 1 ||
            (it != DataType::kUint8 && it != DataType::kInt8)) {
          break;
        }
        Perm perm = t->perm;
        p.indices.id = t->src;
        return emit_sunk(std::move(node), perm);
      }
      case OpKind::kReshape:
      case OpKind::kSqueeze:
      case OpKind::kUnsqueeze:
        return visit_unit_reshape(std::move(node));
      default:
        break;
    }
    if (is_reduction(node.kind)) return visit_reduction(std::move(node));
    if (is_elementwise_unary(node.kind)) {
      OperandRef* in = nullptr;
      std::visit(
          [&](auto& p) {
            if constexpr (requires { p.input; }) in = &p.input;
          },
          node.params);
      const Transposed* t = in ? transposed(in->id) : nullptr;
      if (!t && in && views_.count(in->id)) {
        const View v = views_.at(in->id);
        in->id = v.src;
        const OperandDesc inner{g_.desc(out).data_type, g_.desc(v.src).shape};
        return emit_sunk_view(std::move(node), inner, v.axes);
      }
      if (!t) return keep(std::move(node));
      Perm perm = t->perm;
      in->id = t->src;
      return emit_sunk(std::move(node), perm);
    }
    if (is_elementwise_binary(node.kind)) {
      auto& p = std::get<BinaryParams>(node.params);
      const Transposed* ta = transposed(p.a.id);
      const Transposed* tb = transposed(p.b.id);
      const size_t rank = g_.desc(out).shape.size();
      auto constant_ok = [&](OperandId id) {
        return is_constant(g_, id) && is_static_shape(g_.desc(id).shape) &&
               g_.desc(id).shape.size() <= rank && !is_4bit(g_.desc(id).data_type);
      };
      if (ta && tb && ta->perm == tb->perm && g_.desc(p.a.id).shape.size() == rank &&
          g_.desc(p.b.id).shape.size() == rank) {
        Perm perm = ta->perm;
        p.a.id = ta->src;
        p.b.id = tb->src;
        return emit_sunk(std::move(node), perm);
      }
      // A value in the other layout meets it through the inverse transpose when that one exists
      // already (a residual read from the graph input the first conv transposed too); making a
      // new one would only trade this transpose for another.
      const bool a_full = g_.desc(p.a.id).shape.size() == rank;
      const bool b_full = g_.desc(p.b.id).shape.size() == rank;
      auto memoized = [&](OperandId id, const Perm& q) { return memo_.count({id, q}) > 0; };
      if (ta && !tb && a_full && b_full && !is_constant(g_, p.b.id) &&
          memoized(p.b.id, inverse(ta->perm))) {
        Perm perm = ta->perm;
        p.a.id = ta->src;
        p.b.id = emit_transpose(p.b.id, inverse(perm));
        return emit_sunk(std::move(node), perm);
      }
      if (tb && !ta && a_full && b_full && !is_constant(g_, p.a.id) &&
          memoized(p.a.id, inverse(tb->perm))) {
        Perm perm = tb->perm;
        p.b.id = tb->src;
        p.a.id = emit_transpose(p.a.id, inverse(perm));
        return emit_sunk(std::move(node), perm);
      }
      if (ta && ta->perm.size() == rank && constant_ok(p.b.id)) {
        Perm perm = ta->perm;
        p.a.id = ta->src;
        p.b.id = permute_constant(g_, p.b.id, perm);
        return emit_sunk(std::move(node), perm);
      }
      if (tb && tb->perm.size() == rank && constant_ok(p.a.id)) {
        Perm perm = tb->perm;
        p.b.id = tb->src;
        p.a.id = permute_constant(g_, p.a.id, perm);
        return emit_sunk(std::move(node), perm);
      }
      return visit_binary_views(std::move(node), constant_ok);
    }
    if (node.kind == OpKind::kPrelu) {
      // x >= 0 ? x : slope * x, the slope broadcast into x like a binary op's operand: a
      // constant slope is permuted once, a transposed one meets in the same layout.
      auto& p = std::get<PreluParams>(node.params);
      const Transposed* t = transposed(p.input.id);
      const size_t rank = g_.desc(out).shape.size();
      if (!t || t->perm.size() != rank) return keep(std::move(node));
      const OperandDesc& slope = g_.desc(p.slope.id);
      const Transposed* ts = transposed(p.slope.id);
      Perm perm = t->perm;
      if (ts && ts->perm == perm && slope.shape.size() == rank) {
        p.slope.id = ts->src;
      } else if (is_constant(g_, p.slope.id) && is_static_shape(slope.shape) &&
                 slope.shape.size() <= rank && !is_4bit(slope.data_type)) {
        p.slope.id = permute_constant(g_, p.slope.id, perm);
      } else {
        return keep(std::move(node));
      }
      p.input.id = t->src;
      return emit_sunk(std::move(node), perm);
    }
    if (node.kind == OpKind::kBatchNormalization) {
      auto& p = std::get<BatchNormalizationParams>(node.params);
      const Transposed* t = transposed(p.input.id);
      if (!t) return keep(std::move(node));
      Perm perm = t->perm;
      p.input.id = t->src;
      p.axis = perm[p.axis];
      return emit_sunk(std::move(node), perm);
    }
    const bool pool = node.kind == OpKind::kMaxPool2d || node.kind == OpKind::kAveragePool2d ||
                      node.kind == OpKind::kL2Pool2d;
    const bool global =
        node.kind == OpKind::kGlobalAveragePool || node.kind == OpKind::kGlobalMaxPool;
    if (pool || global) {
      std::string& layout = pool ? std::get<Pool2dParams>(node.params).layout
                                 : std::get<GlobalPoolParams>(node.params).layout;
      OperandRef& in = pool ? std::get<Pool2dParams>(node.params).input
                            : std::get<GlobalPoolParams>(node.params).input;
      const Transposed* t = transposed(in.id);
      if (!t || layout != "nchw" || t->perm != kToNchw) return keep(std::move(node));
      in.id = t->src;
      layout = "nhwc";
      return emit_sunk(std::move(node), kToNchw);
    }
    if (node.kind == OpKind::kResample2d) {
      auto& p = std::get<Resample2dParams>(node.params);
      const Transposed* t = transposed(p.input.id);
      if (!t) return keep(std::move(node));
      Perm perm = t->perm;
      std::vector<int64_t> axes = p.axes ? *p.axes : std::vector<int64_t>{2, 3};
      std::vector<int64_t> moved;
      for (int64_t a : axes) moved.push_back(perm[a]);
      // Keep the axes ascending and consecutive as resample2d requires; scales/sizes follow.
      if (moved.size() != 2 || moved[1] != moved[0] + 1) return keep(std::move(node));
      p.input.id = t->src;
      p.axes = moved;
      return emit_sunk(std::move(node), perm);
    }
    if (node.kind == OpKind::kConcat) {
      auto& p = std::get<ConcatParams>(node.params);
      const Transposed* first = p.inputs.empty() ? nullptr : transposed(p.inputs[0].id);
      if (!first) return keep(std::move(node));
      Perm perm = first->perm;
      for (const OperandRef& r : p.inputs) {
        const Transposed* t = transposed(r.id);
        if (!t || t->perm != perm) return keep(std::move(node));
      }
      for (OperandRef& r : p.inputs) r.id = transposed(r.id)->src;
      p.axis = perm[p.axis];
      return emit_sunk(std::move(node), perm);
    }
    if (node.kind == OpKind::kSlice) {
      // starts / sizes / strides of the transposed value's axes, written for the source's.
      auto& p = std::get<SliceParams>(node.params);
      const Transposed* t = transposed(p.input.id);
      const size_t rank = g_.desc(out).shape.size();
      if (!t || t->perm.size() != rank || p.starts.size() != rank || p.sizes.size() != rank ||
          (p.strides && p.strides->size() != rank)) {
        return keep(std::move(node));
      }
      Perm perm = t->perm;
      IntList starts(rank);
      Shape sizes(rank);
      std::vector<int64_t> strides(rank, 1);
      for (size_t i = 0; i < rank; ++i) {
        starts[perm[i]] = p.starts[i];
        sizes[perm[i]] = p.sizes[i];
        if (p.strides) strides[perm[i]] = (*p.strides)[i];
      }
      p.starts = std::move(starts);
      p.sizes = std::move(sizes);
      if (p.strides) p.strides = std::move(strides);
      p.input.id = t->src;
      return emit_sunk(std::move(node), perm);
    }
    if (node.kind == OpKind::kQuantizeLinear || node.kind == OpKind::kDequantizeLinear) {
      // Element-wise with scale and zero point of the value's rank (per tensor, per axis or
      // per block along each axis): with both permuted too, the result is the same.
      auto& p = std::get<QuantizeParams>(node.params);
      const Transposed* t = transposed(p.input.id);
      const size_t rank = g_.desc(out).shape.size();
      auto permutable = [&](OperandRef r) {
        if (!r.present()) return true;
        const OperandDesc& d = g_.desc(r.id);
        return is_constant(g_, r.id) && is_static_shape(d.shape) && d.shape.size() == rank &&
               !is_4bit(d.data_type);
      };
      if (!t || t->perm.size() != rank || !permutable(p.scale) || !permutable(p.zero_point)) {
        return keep(std::move(node));
      }
      Perm perm = t->perm;
      p.input.id = t->src;
      p.scale.id = permute_constant(g_, p.scale.id, perm);
      if (p.zero_point.present()) p.zero_point.id = permute_constant(g_, p.zero_point.id, perm);
      return emit_sunk(std::move(node), perm);
    }
    keep(std::move(node));
  }

  void keep(Node node) { g_.nodes.push_back(std::move(node)); }

  // `out`, a value of src's elements relabelled by `axes` (a view): as src itself when that is
  // the identity, else made from src directly (the view's transpose or reshape).
  void emit_relabelled(OperandId src, const std::vector<int64_t>& axes, OperandId out) {
    ++rewrites_;
    if (is_permutation(axes, g_.desc(src).shape.size()) && is_identity(axes) &&
        !is_graph_output(g_, out)) {
      alias_[out] = src;
      return;
    }
    emit_view(src, axes, out);
  }

  // A reshape (squeeze, unsqueeze) of a view that only inserts or removes size-1 axes is a
  // view of the same source: its non-1 axes are the input's, in order.
  void visit_unit_reshape(Node node) {
    OperandId in = -1;
    std::visit(
        [&](const auto& p) {
          if constexpr (requires { p.input; }) in = p.input.id;
        },
        node.params);
    const std::optional<View> v = in >= 0 ? view_of(in) : std::nullopt;
    if (!v) return keep(std::move(node));
    const OperandId out = node.outputs[0];
    const Shape& xs = g_.desc(in).shape;
    const Shape& rs = g_.desc(out).shape;
    std::vector<size_t> xi, ri;  // the non-1 axes of input and output
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!is_unit(xs[i])) xi.push_back(i);
    }
    for (size_t i = 0; i < rs.size(); ++i) {
      if (!is_unit(rs[i])) ri.push_back(i);
    }
    if (xi.size() != ri.size()) return keep(std::move(node));
    for (size_t k = 0; k < xi.size(); ++k) {
      if (xs[xi[k]].value != rs[ri[k]].value) return keep(std::move(node));
    }
    std::vector<int64_t> axes(rs.size(), -1);
    for (size_t k = 0; k < xi.size(); ++k) axes[ri[k]] = v->axes[xi[k]];
    // Of the source's rank: its unused (size-1) axes fill the size-1 ones in order, so the view
    // is a transpose again (which cancels against the next convolution's).
    const size_t src_rank = g_.desc(v->src).shape.size();
    if (rs.size() == src_rank) {
      std::vector<bool> used(src_rank, false);
      for (int64_t a : axes) {
        if (a >= 0) used[a] = true;
      }
      size_t next = 0;
      for (int64_t& a : axes) {
        if (a >= 0) continue;
        while (used[next]) ++next;
        a = static_cast<int64_t>(next++);
      }
    }
    emit_relabelled(v->src, axes, out);
  }

  // A binary op on views the transpose rules above did not take: both operands the same view
  // of sources of one shape, or one a view and the other a constant broadcast into it (remapped
  // onto the source). The result has the view operand's shape.
  template <class ConstantOk>
  void visit_binary_views(Node node, const ConstantOk& constant_ok) {
    auto& p = std::get<BinaryParams>(node.params);
    const OperandId out = node.outputs[0];
    const Shape& os = g_.desc(out).shape;
    const std::optional<View> va = view_of(p.a.id), vb = view_of(p.b.id);
    if (!va && !vb) return keep(std::move(node));
    if (!views_.count(p.a.id) && !views_.count(p.b.id)) return keep(std::move(node));
    const OperandDesc inner_a{g_.desc(out).data_type, va ? g_.desc(va->src).shape : Shape{}};
    if (va && vb) {
      if (va->axes != vb->axes || g_.desc(va->src).shape != g_.desc(vb->src).shape ||
          g_.desc(p.a.id).shape != os || g_.desc(p.b.id).shape != os) {
        return keep(std::move(node));
      }
      const View v = *va;
      p.a.id = va->src;
      p.b.id = vb->src;
      return emit_sunk_view(std::move(node), inner_a, v.axes);
    }
    const bool a_view = va.has_value();
    const View v = a_view ? *va : *vb;
    OperandRef& viewed = a_view ? p.a : p.b;
    OperandRef& other = a_view ? p.b : p.a;
    if (g_.desc(viewed.id).shape != os || !constant_ok(other.id)) return keep(std::move(node));
    const OperandId c = remap_constant(g_, other.id, v.axes, g_.desc(v.src).shape);
    if (c < 0) return keep(std::move(node));
    viewed.id = v.src;
    other.id = c;
    const OperandDesc inner{g_.desc(out).data_type, g_.desc(v.src).shape};
    return emit_sunk_view(std::move(node), inner, v.axes);
  }

  // A reduction of a view reduces its source over the corresponding axes, when those visit the
  // elements in the same order (the reduced non-1 axes keep their relative order) and form one
  // run of the source's non-1 axes (what the cpu kernel reduces in place: rows or columns).
  // keepDimensions as given: with it the view's axes stay (the reduced ones now of size 1),
  // without it the reduced axes leave the view and the source.
  void visit_reduction(Node node) {
    auto& p = std::get<ReduceParams>(node.params);
    const std::optional<View> v = view_of(p.input.id);
    if (!v) return keep(std::move(node));
    const Shape& xs = g_.desc(p.input.id).shape;
    const Shape& ss = g_.desc(v->src).shape;
    std::vector<bool> reduced(xs.size(), !p.axes.has_value());
    if (p.axes) {
      if (p.axes->empty()) return keep(std::move(node));
      for (int64_t a : *p.axes) reduced[a] = true;
    }
    std::vector<bool> src_reduced(ss.size(), false);
    int64_t last = -1;
    bool any = false;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!reduced[i] || v->axes[i] < 0) continue;  // a size-1 axis the source lacks: no element
      src_reduced[v->axes[i]] = true;
      any = true;
      if (is_unit(xs[i])) continue;
      if (v->axes[i] < last) return keep(std::move(node));
      last = v->axes[i];
    }
    if (!any) return keep(std::move(node));
    int first_s = -1, last_s = -1;
    for (size_t j = 0; j < ss.size(); ++j) {
      if (!src_reduced[j] || is_unit(ss[j])) continue;
      if (first_s < 0) first_s = static_cast<int>(j);
      last_s = static_cast<int>(j);
    }
    for (int j = first_s; first_s >= 0 && j <= last_s; ++j) {
      if (!src_reduced[j] && !is_unit(ss[j])) return keep(std::move(node));
    }
    std::vector<int64_t> src_axes, renumber(ss.size(), -1);
    Shape inner_shape;
    for (size_t j = 0; j < ss.size(); ++j) {
      if (src_reduced[j]) src_axes.push_back(static_cast<int64_t>(j));
      if (!src_reduced[j] || p.keep_dimensions) {
        renumber[j] = static_cast<int64_t>(inner_shape.size());
        inner_shape.push_back(src_reduced[j] ? Dim(1) : ss[j]);
      }
    }
    std::vector<int64_t> axes;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (reduced[i] && !p.keep_dimensions) continue;
      axes.push_back(v->axes[i] < 0 ? -1 : renumber[v->axes[i]]);
    }
    p.input.id = v->src;
    p.axes = src_axes;
    const OperandDesc inner{g_.desc(node.outputs[0]).data_type, inner_shape};
    return emit_sunk_view(std::move(node), inner, axes);
  }

  // An NCHW convTranspose2d whose taps never overlap, with 2-15 output channels per group
  // (e.g. a segmentation head's 64 -> 3): the cpu planar kernel makes the pixels its GEMM's N,
  // where the NHWC kernel's N would be those few channels, so it stays NCHW. (With one output
  // channel both layouts are the same planar kernel, and more channels fill the NHWC tiles.)
  bool keeps_planar_nchw(const ConvTranspose2dParams& p, const OperandDesc& y) const {
    const Shape& f = g_.desc(p.filter.id).shape;
    const size_t h = p.filter_layout.find('h'), w = p.filter_layout.find('w');
    if (f.size() != 4 || h == std::string::npos || w == std::string::npos) return false;
    const int64_t per_group = y.shape[1].value / std::max<int64_t>(1, p.groups);
    auto at = [](const OptIntList& l, size_t i) { return l && l->size() > i ? (*l)[i] : 1; };
    const bool apart = (f[h].value - 1) * at(p.dilations, 0) < at(p.strides, 0) &&
                       (f[w].value - 1) * at(p.dilations, 1) < at(p.strides, 1);
    return apart && per_group > 1 && per_group < 16;
  }

  void keep_transpose(Node node) {
    const auto& p = node.as<TransposeParams>();
    if (p.permutation) tof_[node.outputs[0]] = {p.input.id, *p.permutation};
    g_.nodes.push_back(std::move(node));
  }

  Graph& g_;
  std::unordered_map<OperandId, Transposed> tof_;   // value -> transpose(src, perm)
  std::unordered_map<OperandId, View> views_;       // value -> a view that is no transpose
  std::unordered_map<OperandId, OperandId> alias_;  // cancelled transpose -> its source
  std::map<std::pair<OperandId, Perm>, OperandId> memo_;
  int64_t rewrites_ = 0;
};

}  // namespace

Expected<int64_t> assign_layouts(Graph& graph) {
  for (const Operand& op : graph.operands) {
    if (!is_static_shape(op.desc.shape)) return 0;  // plans re-infer shapes: keep it simple
  }
  return LayoutWalk(graph).run();
}

}  // namespace webnn
