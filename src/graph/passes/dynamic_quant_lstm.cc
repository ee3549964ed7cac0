// Dynamically quantized LSTM, for the cpu backend: the ONNX importer unrolls com.microsoft
// DynamicQuantizeLSTM (python/webnn/onnx/ops/quantized_recurrent.py) into ~40 nodes per step
// (the uint8 quantization of h, the exact integer product by R, ORT's u8s8 saturation
// correction, the scale, the cell), which as separate kernels cost far more than their
// arithmetic. This pass finds runs of consecutive steps of that form and replaces each run by
// one lstm node marked Node::Quantized::dynamic_lstm (cpu/dynamic_lstm.cc).
//
// Why the results are unchanged: every value up to the scaled product is an exact integer or
// an exact float operation the kernel repeats in the same order (min/max, the scale's division,
// round half to even, quantizeLinear with scale 1, the integer sums), the pass requires
// 255 * sum|r| < 2^24 per column so that the float32 product the graph states is that exact
// integer, and the float steps after it (scale, x W, bias, the gates on the same vector
// sigmoid / tanh as the element-wise kernels, the cell) are the graph's float32 operations in
// its order. A step whose h is a constant (the first one, from a zero initial state, folded by
// constant_folding) stays as it is and the run starts after it.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

constexpr double kExactFloatInt = 16777216.0;  // 2^24

struct Matcher {
  const Graph& g;
  const std::vector<std::vector<int>>& consumers;
  std::vector<int> nodes;  // the step's nodes

  // The node producing `id` when it is a plain node of kind k (no epilogue, no integer form).
  const Node* prod(OperandId id, OpKind k) {
    if (id < 0) return nullptr;
    const int32_t p = g.operands[id].producer;
    if (p < 0) return nullptr;
    const Node& n = g.nodes[p];
    if (n.kind != k || !n.epilogue.empty() || n.quantized || n.outputs.size() != 1) return nullptr;
    nodes.push_back(p);
    return &n;
  }

  const OperandDesc& desc(OperandId id) const { return g.desc(id); }

  // A constant float32 operand's values (empty when not one).
  std::vector<float> floats(OperandId id) const {
    if (id < 0 || !is_constant(g, id) || desc(id).data_type != DataType::kFloat32) return {};
    const ConstantData& c = *g.operands[id].constant;
    std::vector<float> v(c.size() / sizeof(float));
    std::memcpy(v.data(), c.data(), v.size() * sizeof(float));
    return v;
  }

  bool all_equal(OperandId id, float value) const {
    const std::vector<float> v = floats(id);
    if (v.empty()) return false;
    for (float x : v) {
      if (!(x == value) || std::signbit(x) != std::signbit(value)) return false;
    }
    return true;
  }

  int64_t count(OperandId id) const {
    int64_t n = 1;
    for (const Dim& d : desc(id).shape) n *= d.value;
    return n;
  }
};

bool is_shape(const OperandDesc& d, std::initializer_list<int64_t> dims) {
  if (d.shape.size() != dims.size()) return false;
  size_t i = 0;
  for (int64_t v : dims) {
    if (d.shape[i++].value != v) return false;
  }
  return true;
}

bool clamp_is(const Node& n, double lo, double hi) {
  const auto& p = n.as<ClampParams>();
  return p.min_value && p.max_value && p.min_value->as_double() == lo &&
         p.max_value->as_double() == hi;
}

bool reduces_all(const Matcher& m, const Node& n, OperandId input) {
  const auto& p = n.as<ReduceParams>();
  if (p.input.id != input || p.keep_dimensions || !p.axes) return false;
  const size_t rank = m.desc(input).shape.size();
  if (p.axes->size() != rank) return false;
  for (size_t i = 0; i < rank; ++i) {
    if ((*p.axes)[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// One matched step: (h, c) -> (h_out, c_out).
struct Step {
  OperandId h = -1, c = -1, h_out = -1, c_out = -1;
  OperandId xw = -1, r = -1, r_scale = -1, bias = -1;
  OperandId idx0 = -1, idx1 = -1, w0 = -1, w1 = -1;
  int64_t slots = 0, t = 0, batch = 0, hidden = 0;
  std::array<int64_t, 4> gate_col{};
  std::vector<int> nodes;
  int h_node = -1;  // the node computing h_out
};

// Matches the dynamic quantization of h (quantized_recurrent.py _dynamic_uint8) that feeds
// `shifted` and `raw`; returns h and scale, or -1.
bool match_quantize(Matcher& m, OperandId shifted, OperandId* h, OperandId* raw_out,
                    OperandId* scale_out) {
  const Node* sub = m.prod(shifted, OpKind::kSub);
  if (!sub) return false;
  const auto& sp = sub->as<BinaryParams>();
  const Node* cast = m.prod(sp.a.id, OpKind::kCast);
  if (!cast || cast->as<CastParams>().data_type != DataType::kFloat32) return false;
  const OperandId raw = sp.a.id;
  const Node* q = m.prod(cast->as<CastParams>().input.id, OpKind::kQuantizeLinear);
  if (!q || m.desc(q->outputs[0]).data_type != DataType::kUint8) return false;
  const auto& qp = q->as<QuantizeParams>();
  if (!m.all_equal(qp.scale.id, 1.0f) || !qp.zero_point.present()) return false;
  const Node* div = m.prod(qp.input.id, OpKind::kDiv);
  if (!div) return false;
  const OperandId hv = div->as<BinaryParams>().a.id;
  const Node* s_r = m.prod(div->as<BinaryParams>().b.id, OpKind::kReshape);
  if (!s_r) return false;
  const OperandId scale = s_r->as<NewShapeParams>().input.id;
  // Zero point: reshape(cast(zp -> uint8)) for quantizeLinear, reshape(zp) subtracted.
  const Node* zp_r = m.prod(qp.zero_point.id, OpKind::kReshape);
  const Node* zpf = m.prod(sp.b.id, OpKind::kReshape);
  if (!zp_r || !zpf) return false;
  const Node* zp8 = m.prod(zp_r->as<NewShapeParams>().input.id, OpKind::kCast);
  if (!zp8 || zp8->as<CastParams>().data_type != DataType::kUint8) return false;
  const OperandId zp = zp8->as<CastParams>().input.id;
  if (zpf->as<NewShapeParams>().input.id != zp) return false;
  // zp = clamp(round_even(0 - lo / scale), 0, 255)
  const Node* cl = m.prod(zp, OpKind::kClamp);
  if (!cl || !clamp_is(*cl, 0.0, 255.0)) return false;
  const Node* re = m.prod(cl->as<ClampParams>().input.id, OpKind::kRoundEven);
  if (!re) return false;
  const Node* neg = m.prod(re->as<UnaryParams>().input.id, OpKind::kSub);
  if (!neg || !m.all_equal(neg->as<BinaryParams>().a.id, 0.0f)) return false;
  const Node* lo_div = m.prod(neg->as<BinaryParams>().b.id, OpKind::kDiv);
  if (!lo_div || lo_div->as<BinaryParams>().b.id != scale) return false;
  const OperandId lo = lo_div->as<BinaryParams>().a.id;
  // scale = where(equal(hi, lo), 1, (hi - lo) / 255)
  const Node* wh = m.prod(scale, OpKind::kWhere);
  if (!wh) return false;
  const auto& wp = wh->as<WhereParams>();
  if (!m.all_equal(wp.true_value.id, 1.0f)) return false;
  const Node* eq = m.prod(wp.condition.id, OpKind::kEqual);
  const Node* spread = m.prod(wp.false_value.id, OpKind::kDiv);
  if (!eq || !spread || !m.all_equal(spread->as<BinaryParams>().b.id, 255.0f)) return false;
  const Node* span = m.prod(spread->as<BinaryParams>().a.id, OpKind::kSub);
  if (!span) return false;
  const OperandId hi = span->as<BinaryParams>().a.id;
  if (span->as<BinaryParams>().b.id != lo || eq->as<BinaryParams>().a.id != hi ||
      eq->as<BinaryParams>().b.id != lo) {
    return false;
  }
  // lo = min(reshape(reduce_min(h)), 0), hi = max(reshape(reduce_max(h)), 0)
  const Node* mn = m.prod(lo, OpKind::kMin);
  const Node* mx = m.prod(hi, OpKind::kMax);
  if (!mn || !mx || !m.all_equal(mn->as<BinaryParams>().b.id, 0.0f) ||
      !m.all_equal(mx->as<BinaryParams>().b.id, 0.0f)) {
    return false;
  }
  const Node* rmn_r = m.prod(mn->as<BinaryParams>().a.id, OpKind::kReshape);
  const Node* rmx_r = m.prod(mx->as<BinaryParams>().a.id, OpKind::kReshape);
  if (!rmn_r || !rmx_r) return false;
  const Node* rmn = m.prod(rmn_r->as<NewShapeParams>().input.id, OpKind::kReduceMin);
  const Node* rmx = m.prod(rmx_r->as<NewShapeParams>().input.id, OpKind::kReduceMax);
  if (!rmn || !rmx || !reduces_all(m, *rmn, hv) || !reduces_all(m, *rmx, hv)) return false;
  for (OperandId id : {scale, lo, hi, zp}) {
    if (m.count(id) != 1 || m.desc(id).data_type != DataType::kFloat32) return false;
  }
  *h = hv, *raw_out = raw, *scale_out = scale;
  return true;
}

// Matches ORT's saturation correction (ort_u8s8.py correction) added to the product.
bool match_correction(Matcher& m, OperandId fix, OperandId raw, int64_t batch, int64_t n, Step* s) {
  OperandId d = -1;
  if (const Node* rs = m.prod(fix, OpKind::kReshape)) {
    d = rs->as<NewShapeParams>().input.id;
  } else if (const Node* sum = m.prod(fix, OpKind::kReduceSum)) {
    const auto& p = sum->as<ReduceParams>();
    if (p.keep_dimensions || !p.axes || *p.axes != IntList{1}) return false;
    d = p.input.id;
  } else {
    return false;
  }
  const Node* sub = m.prod(d, OpKind::kSub);
  if (!sub) return false;
  const OperandId p = sub->as<BinaryParams>().b.id;
  const Node* cl = m.prod(sub->as<BinaryParams>().a.id, OpKind::kClamp);
  if (!cl || cl->as<ClampParams>().input.id != p || !clamp_is(*cl, -32768.0, 32767.0)) {
    return false;
  }
  const Node* add = m.prod(p, OpKind::kAdd);
  if (!add) return false;
  const OperandDesc& pd = m.desc(p);
  if (pd.shape.size() != 3 || pd.shape[0].value != batch || pd.shape[2].value != n) return false;
  const int64_t slots = pd.shape[1].value;
  OperandId idx[2], w[2];
  const OperandId terms[2] = {add->as<BinaryParams>().a.id, add->as<BinaryParams>().b.id};
  for (int i = 0; i < 2; ++i) {
    const Node* mul = m.prod(terms[i], OpKind::kMul);
    if (!mul) return false;
    w[i] = mul->as<BinaryParams>().b.id;
    if (!is_shape(m.desc(w[i]), {1, slots, n}) || m.floats(w[i]).empty()) return false;
    const Node* rs = m.prod(mul->as<BinaryParams>().a.id, OpKind::kReshape);
    if (!rs) return false;
    const Node* ga = m.prod(rs->as<NewShapeParams>().input.id, OpKind::kGather);
    if (!ga) return false;
    const auto& gp = ga->as<GatherParams>();
    if (gp.input.id != raw || gp.axis != 1) return false;
    idx[i] = gp.indices.id;
    const OperandDesc& id = m.desc(idx[i]);
    if (!is_constant(m.g, idx[i]) || !is_shape(id, {slots * n}) ||
        (id.data_type != DataType::kInt32 && id.data_type != DataType::kInt64)) {
      return false;
    }
  }
  s->slots = slots, s->idx0 = idx[0], s->idx1 = idx[1], s->w0 = w[0], s->w1 = w[1];
  return true;
}

// Matches one step ending at the node `hi` (h_out = o * tanh(c_out)).
// Whether r (k x n, empty when not a float constant) holds integers of at most 255 with
// 255 * sum|r| < 2^24 per column: the float32 product of any uint8 - zp values by it is exact.
bool exact_weights(const std::vector<float>& r, int64_t n) {
  if (r.empty()) return false;
  std::vector<double> sum(static_cast<size_t>(n), 0.0);
  for (size_t i = 0; i < r.size(); ++i) {
    const float v = r[i];
    if (v != std::nearbyint(v) || std::fabs(v) > 255.0f) return false;
    sum[i % static_cast<size_t>(n)] += std::fabs(v);
  }
  for (double v : sum) {
    if (255.0 * v >= kExactFloatInt) return false;
  }
  return true;
}

bool match_step(const Graph& g, const std::vector<std::vector<int>>& consumers, int hi,
                std::unordered_map<OperandId, bool>* r_ok, Step* s) {
  Matcher m{g, consumers, {}};
  const Node& hm = g.nodes[hi];
  if (hm.kind != OpKind::kMul || !hm.epilogue.empty() || hm.quantized) return false;
  m.nodes.push_back(hi);
  const auto& hp = hm.as<BinaryParams>();
  const Node* o = m.prod(hp.a.id, OpKind::kSigmoid);
  const Node* tc = m.prod(hp.b.id, OpKind::kTanh);
  if (!o || !tc) return false;
  const OperandId c_out = tc->as<UnaryParams>().input.id;
  const Node* cadd = m.prod(c_out, OpKind::kAdd);
  if (!cadd) return false;
  const Node* fc = m.prod(cadd->as<BinaryParams>().a.id, OpKind::kMul);
  const Node* ig = m.prod(cadd->as<BinaryParams>().b.id, OpKind::kMul);
  if (!fc || !ig) return false;
  const Node* f = m.prod(fc->as<BinaryParams>().a.id, OpKind::kSigmoid);
  const Node* i = m.prod(ig->as<BinaryParams>().a.id, OpKind::kSigmoid);
  const Node* cand = m.prod(ig->as<BinaryParams>().b.id, OpKind::kTanh);
  if (!f || !i || !cand) return false;
  const OperandId c_in = fc->as<BinaryParams>().b.id;
  // The four gate slices of one gate row g.
  const Node* gates[4] = {i, o, f, cand};
  OperandId grow = -1;
  const OperandDesc& hd = g.desc(hm.outputs[0]);
  if (hd.data_type != DataType::kFloat32 || hd.shape.size() != 2) return false;
  const int64_t batch = hd.shape[0].value, hidden = hd.shape[1].value;
  for (int k = 0; k < 4; ++k) {
    const Node* sl = m.prod(gates[k]->as<UnaryParams>().input.id, OpKind::kSlice);
    if (!sl) return false;
    const auto& p = sl->as<SliceParams>();
    if (grow >= 0 && p.input.id != grow) return false;
    grow = p.input.id;
    if (p.strides || p.starts.size() != 2 || p.starts[0] != 0 || p.sizes.size() != 2 ||
        p.sizes[0].value != batch || p.sizes[1].value != hidden || p.starts[1] % hidden != 0) {
      return false;
    }
    s->gate_col[k] = p.starts[1];
  }
  const int64_t n = 4 * hidden;
  {
    bool seen[4] = {false, false, false, false};
    for (int64_t col : s->gate_col) {
      if (col < 0 || col >= n || seen[col / hidden]) return false;
      seen[col / hidden] = true;
    }
  }
  if (!is_shape(g.desc(grow), {batch, n}) || !is_shape(g.desc(c_in), {batch, hidden}) ||
      g.desc(c_in).data_type != DataType::kFloat32) {
    return false;
  }
  // g = slice(xw) + hr [+ bias]
  const Node* gadd = m.prod(grow, OpKind::kAdd);
  if (!gadd) return false;
  OperandId g0 = grow;
  if (!m.floats(gadd->as<BinaryParams>().b.id).empty()) {
    s->bias = gadd->as<BinaryParams>().b.id;
    if (m.count(s->bias) != n || g.desc(s->bias).shape.back().value != n) return false;
    g0 = gadd->as<BinaryParams>().a.id;
    gadd = m.prod(g0, OpKind::kAdd);
    if (!gadd) return false;
  }
  const Node* xs = m.prod(gadd->as<BinaryParams>().a.id, OpKind::kSlice);
  if (!xs) return false;
  {
    const auto& p = xs->as<SliceParams>();
    const OperandDesc& xd = g.desc(p.input.id);
    if (p.strides || xd.data_type != DataType::kFloat32 || xd.shape.size() != 2 ||
        xd.shape[1].value != n || p.starts.size() != 2 || p.starts[1] != 0 ||
        p.starts[0] % batch != 0 || p.sizes[0].value != batch || p.sizes[1].value != n) {
      return false;
    }
    s->xw = p.input.id;
    s->t = p.starts[0] / batch;
  }
  // hr = acc * (scale * r_scale), acc = matmul(shifted, r) [+ correction]
  const Node* hr = m.prod(gadd->as<BinaryParams>().b.id, OpKind::kMul);
  if (!hr) return false;
  const Node* sc = m.prod(hr->as<BinaryParams>().b.id, OpKind::kMul);
  if (!sc) return false;
  s->r_scale = sc->as<BinaryParams>().b.id;
  const int64_t rs_count = m.count(s->r_scale);
  if (m.floats(s->r_scale).empty() || (rs_count != 1 && rs_count != n) ||
      (rs_count == n && g.desc(s->r_scale).shape.back().value != n)) {
    return false;
  }
  OperandId acc = hr->as<BinaryParams>().a.id;
  const Node* mm = m.prod(acc, OpKind::kMatmul);
  OperandId fix = -1;
  if (!mm) {
    const Node* fadd = m.prod(acc, OpKind::kAdd);
    if (!fadd) return false;
    acc = fadd->as<BinaryParams>().a.id;
    fix = fadd->as<BinaryParams>().b.id;
    mm = m.prod(acc, OpKind::kMatmul);
    if (!mm) return false;
  }
  const auto& mp = mm->as<BinaryParams>();
  s->r = mp.b.id;
  if (!is_shape(g.desc(s->r), {hidden, n})) return false;
  auto known = r_ok->find(s->r);
  if (known == r_ok->end()) known = r_ok->emplace(s->r, exact_weights(m.floats(s->r), n)).first;
  if (!known->second) return false;
  OperandId h = -1, raw = -1, scale = -1;
  if (!match_quantize(m, mp.a.id, &h, &raw, &scale)) return false;
  if (sc->as<BinaryParams>().a.id != scale) return false;
  if (!is_shape(g.desc(h), {batch, hidden}) || g.desc(h).data_type != DataType::kFloat32) {
    return false;
  }
  if (fix >= 0 && !match_correction(m, fix, raw, batch, n, s)) return false;
  // Every value inside the step is read only inside it.
  std::unordered_set<int> mine(m.nodes.begin(), m.nodes.end());
  if (mine.size() != m.nodes.size()) return false;
  for (int ni : m.nodes) {
    const OperandId out = g.nodes[ni].outputs[0];
    if (out == hm.outputs[0] || out == c_out) continue;
    if (is_graph_output(g, out)) return false;
    for (int cn : consumers[out]) {
      if (!mine.count(cn)) return false;
    }
  }
  s->h = h, s->c = c_in, s->h_out = hm.outputs[0], s->c_out = c_out;
  s->batch = batch, s->hidden = hidden;
  s->nodes = std::move(m.nodes);
  s->h_node = hi;
  return true;
}

bool same_constant(const Graph& g, OperandId a, OperandId b) {
  if (a == b) return true;
  if (a < 0 || b < 0 || !is_constant(g, a) || !is_constant(g, b) || !(g.desc(a) == g.desc(b))) {
    return false;
  }
  const ConstantData& ca = *g.operands[a].constant;
  const ConstantData& cb = *g.operands[b].constant;
  return ca.size() == cb.size() && std::memcmp(ca.data(), cb.data(), ca.size()) == 0;
}

// Whether step b continues step a (same weights, the next t).
bool continues(const Graph& g, const Step& a, const Step& b, int64_t dt) {
  return b.h == a.h_out && b.c == a.c_out && b.xw == a.xw && b.t == a.t + dt &&
         same_constant(g, a.r, b.r) && same_constant(g, a.r_scale, b.r_scale) &&
         same_constant(g, a.bias, b.bias) && a.gate_col == b.gate_col && a.slots == b.slots &&
         same_constant(g, a.idx0, b.idx0) && same_constant(g, a.idx1, b.idx1) &&
         same_constant(g, a.w0, b.w0) && same_constant(g, a.w1, b.w1);
}

std::vector<int32_t> ints(const Graph& g, OperandId id) {
  const ConstantData& c = *g.operands[id].constant;
  std::vector<int32_t> out;
  if (g.desc(id).data_type == DataType::kInt32) {
    out.resize(c.size() / 4);
    std::memcpy(out.data(), c.data(), c.size());
  } else {
    std::vector<int64_t> v(c.size() / 8);
    std::memcpy(v.data(), c.data(), c.size());
    out.assign(v.begin(), v.end());
  }
  return out;
}

std::shared_ptr<DynamicLstmForm> make_form(const Graph& g, const Matcher& m,
                                           const std::vector<Step>& run, bool backward) {
  const Step& s = run.front();
  auto f = std::make_shared<DynamicLstmForm>();
  f->batch = s.batch, f->hidden = s.hidden, f->steps = static_cast<int64_t>(run.size());
  f->first_t = s.t, f->backward = backward;
  for (int k = 0; k < 4; ++k) f->gate_col[k] = s.gate_col[k];
  const int64_t n = 4 * s.hidden;
  const std::vector<float> r = m.floats(s.r);
  f->r.assign(r.begin(), r.end());
  f->r_scale = m.floats(s.r_scale);
  if (s.bias >= 0) f->bias = m.floats(s.bias);
  if (s.slots > 0) {
    f->slots = s.slots;
    // The gathers read [C, N] slot-major tables (index c * N + col).
    f->idx0 = ints(g, s.idx0), f->idx1 = ints(g, s.idx1);
    for (OperandId id : {s.w0, s.w1}) {
      std::vector<int32_t>& dst = id == s.w0 ? f->w0 : f->w1;
      for (float v : m.floats(id)) dst.push_back(static_cast<int32_t>(v));
    }
    for (int32_t i : f->idx0) {
      if (i < 0 || i >= s.hidden) return nullptr;
    }
    for (int32_t i : f->idx1) {
      if (i < 0 || i >= s.hidden) return nullptr;
    }
    for (const std::vector<float>& w : {m.floats(s.w0), m.floats(s.w1)}) {
      for (float v : w) {
        if (v != std::nearbyint(v) || std::fabs(v) > 255.0f) return nullptr;
      }
    }
    if (static_cast<int64_t>(f->w0.size()) != s.slots * n) return nullptr;
  }
  return f;
}

}  // namespace

Expected<int64_t> fuse_dynamic_quant_lstms(Graph& graph) {
  for (const Operand& op : graph.operands) {
    if (!is_static_shape(op.desc.shape)) return int64_t{0};  // plans would re-infer the node
  }
  std::vector<std::vector<int>> consumers(graph.operands.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (OperandId id : node_reads(graph, graph.nodes[i])) {
      std::vector<int>& c = consumers[id];
      if (c.empty() || c.back() != static_cast<int>(i)) c.push_back(static_cast<int>(i));
    }
  }
  // Every step, by the operand of its h_out.
  std::vector<Step> steps;
  std::vector<int> step_of_h(graph.operands.size(), -1);
  std::unordered_map<OperandId, bool> r_ok;  // exact_weights per weight operand
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (graph.nodes[i].kind != OpKind::kMul) continue;
    Step s;
    if (!match_step(graph, consumers, static_cast<int>(i), &r_ok, &s)) continue;
    step_of_h[s.h_out] = static_cast<int>(steps.size());
    steps.push_back(std::move(s));
  }
  if (steps.size() < 2) return int64_t{0};
  Matcher m{graph, consumers, {}};
  std::vector<bool> dead(graph.nodes.size(), false);
  std::vector<bool> taken(steps.size(), false);
  std::vector<Node> fused_nodes;
  std::vector<int> fused_at;
  std::vector<std::unordered_set<int>> run_nodes;
  int64_t fused = 0;
  for (size_t si = 0; si < steps.size(); ++si) {
    if (taken[si]) continue;
    // A run starts at a step whose h does not come from another matched step.
    const int32_t hp = graph.operands[steps[si].h].producer;
    if (hp >= 0 && step_of_h[steps[si].h] >= 0) continue;
    std::vector<Step> run = {steps[si]};
    int64_t dt = 0;
    for (;;) {
      const Step& last = run.back();
      // The next step reads h_out; find it among h_out's consumers.
      int next = -1;
      for (size_t sj = 0; sj < steps.size() && next < 0; ++sj) {
        if (taken[sj] || steps[sj].h != last.h_out) continue;
        const int64_t d = steps[sj].t - last.t;
        if ((dt == 0 && (d == 1 || d == -1)) || (dt != 0 && d == dt)) {
          if (continues(graph, last, steps[sj], d)) next = static_cast<int>(sj), dt = d;
        }
      }
      if (next < 0) break;
      run.push_back(steps[next]);
    }
    if (run.size() < 2) continue;
    const bool backward = dt < 0;
    // Each step's h_out is read by the next step, by its reshape into the sequence and (the
    // last one) by anything; c_out by its own tanh, the next step and (the last one) anything.
    // The sequence reshapes [1, 1, batch, hidden] all feed one concat, in t order.
    const Step& s0 = run.front();
    const int64_t batch = s0.batch, hidden = s0.hidden, T = static_cast<int64_t>(run.size());
    std::vector<int> seq_nodes;
    bool ok = true;
    std::unordered_set<int> in_run;
    for (const Step& s : run) in_run.insert(s.nodes.begin(), s.nodes.end());
    int concat = -1;
    for (size_t k = 0; k < run.size() && ok; ++k) {
      const Step& s = run[k];
      const bool last = k + 1 == run.size();
      int reshape = -1;
      for (int cn : consumers[s.h_out]) {
        if (in_run.count(cn)) continue;
        const Node& n = graph.nodes[cn];
        const OperandId out = n.outputs.empty() ? -1 : n.outputs[0];
        if (n.kind == OpKind::kReshape && n.epilogue.empty() &&
            is_shape(graph.desc(out), {1, 1, batch, hidden}) && !is_graph_output(graph, out) &&
            consumers[out].size() == 1 && graph.nodes[consumers[out][0]].kind == OpKind::kConcat &&
            reshape < 0) {
          reshape = cn;
          if (concat >= 0 && consumers[out][0] != concat) ok = false;
          concat = consumers[out][0];
        } else if (!last) {
          ok = false;
        }
      }
      if (!last && is_graph_output(graph, s.h_out)) ok = false;
      if (!last) {
        for (int cn : consumers[s.c_out]) ok = ok && in_run.count(cn) > 0;
        ok = ok && !is_graph_output(graph, s.c_out);
      }
      if (reshape >= 0) seq_nodes.push_back(reshape);
    }
    if (!ok || (!seq_nodes.empty() && seq_nodes.size() != run.size())) continue;
    // The concat's inputs: the run's reshapes must be consecutive, in ascending t.
    int64_t first_pos = -1;
    if (concat >= 0) {
      const auto& cp = graph.nodes[concat].as<ConcatParams>();
      if (cp.axis != 0 || !graph.nodes[concat].epilogue.empty()) continue;
      std::vector<OperandId> want;
      for (int64_t k = 0; k < T; ++k) {
        const int64_t idx = backward ? T - 1 - k : k;  // ascending t
        want.push_back(graph.nodes[seq_nodes[idx]].outputs[0]);
      }
      for (size_t p = 0; p + want.size() <= cp.inputs.size() && first_pos < 0; ++p) {
        bool match = true;
        for (size_t k = 0; k < want.size(); ++k) match = match && cp.inputs[p + k].id == want[k];
        if (match) first_pos = static_cast<int64_t>(p);
      }
      if (first_pos < 0) continue;
      // No other input of the concat is one of the run's reshapes.
      int64_t hits = 0;
      for (const OperandRef& r : cp.inputs) {
        for (OperandId w : want) hits += r.id == w;
      }
      if (hits != T) continue;
    }
    // The node takes the place of the run's first node: its inputs must come before it.
    int earliest = static_cast<int>(graph.nodes.size());
    for (const Step& s : run) {
      for (int ni : s.nodes) earliest = std::min(earliest, ni);
    }
    bool inputs_before = true;
    for (OperandId id : {s0.xw, s0.h, s0.c}) {
      inputs_before = inputs_before && graph.operands[id].producer < earliest;
    }
    if (!inputs_before) continue;
    std::shared_ptr<DynamicLstmForm> form = make_form(graph, m, run, backward);
    if (!form) continue;
    // The node: lstm over the scaled x W rows, from the run's entering h and c.
    LstmParams p;
    p.input = OperandRef{s0.xw};
    p.weight = OperandRef{s0.r};
    p.recurrent_weight = OperandRef{s0.r};
    p.steps = T;
    p.hidden_size = hidden;
    p.initial_hidden_state = OperandRef{s0.h};
    p.initial_cell_state = OperandRef{s0.c};
    p.return_sequence = true;
    p.direction = backward ? "backward" : "forward";
    OperandDesc seq_desc;
    seq_desc.data_type = DataType::kFloat32;
    seq_desc.shape = {Dim{T}, Dim{1}, Dim{batch}, Dim{hidden}};
    const OperandId seq = add_value(graph, seq_desc);
    consumers.emplace_back();
    Node node{OpKind::kLstm,
              graph.nodes[run.back().h_node].label,
              p,
              {run.back().h_out, run.back().c_out, seq},
              {}};
    auto q = std::make_shared<Node::Quantized>();
    q->dynamic_lstm = std::move(form);
    node.quantized = std::move(q);
    for (const Step& s : run) {
      for (int ni : s.nodes) dead[ni] = true;
    }
    for (int ni : seq_nodes) dead[ni] = true;
    if (concat >= 0) {
      auto& cp = std::get<ConcatParams>(graph.nodes[concat].params);
      OperandList inputs(cp.inputs.begin(), cp.inputs.begin() + first_pos);
      inputs.push_back(OperandRef{seq});
      inputs.insert(inputs.end(), cp.inputs.begin() + first_pos + T, cp.inputs.end());
      cp.inputs = std::move(inputs);
    }
    fused_nodes.push_back(std::move(node));
    fused_at.push_back(earliest);
    run_nodes.emplace_back(in_run);
    for (size_t k = 0; k < steps.size(); ++k) {
      for (const Step& s : run) taken[k] = taken[k] || steps[k].h_out == s.h_out;
    }
    ++fused;
  }
  if (fused == 0) return int64_t{0};
  // The two directions of a bidirectional layer (consecutive runs of opposite directions,
  // neither reading the other's values) become one node, so that two threads run one
  // direction each instead of splitting every step.
  std::vector<bool> merged(fused_nodes.size(), false);
  for (size_t k = 0; k + 1 < fused_nodes.size(); ++k) {
    if (merged[k] || merged[k + 1]) continue;
    Node& a = fused_nodes[k];
    Node& b = fused_nodes[k + 1];
    const DynamicLstmForm& fa = *a.quantized->dynamic_lstm;
    const DynamicLstmForm& fb = *b.quantized->dynamic_lstm;
    if (fa.backward == fb.backward || fa.batch != fb.batch || fa.hidden != fb.hidden) continue;
    if (reaches_any(graph, b, run_nodes[k]) || reaches_any(graph, a, run_nodes[k + 1])) continue;
    const auto& pb = b.as<LstmParams>();
    auto& pa = std::get<LstmParams>(a.params);
    pa.weight = pb.input;
    pa.recurrent_bias = pb.initial_hidden_state;
    pa.peephole_weight = pb.initial_cell_state;
    a.outputs.insert(a.outputs.end(), b.outputs.begin(), b.outputs.end());
    auto form = std::make_shared<DynamicLstmForm>(fa);
    form->paired = b.quantized->dynamic_lstm;
    auto q = std::make_shared<Node::Quantized>();
    q->dynamic_lstm = std::move(form);
    a.quantized = std::move(q);
    merged[k + 1] = true;
    fused_at[k] = std::min(fused_at[k], fused_at[k + 1]);
  }
  for (size_t k = 0; k < fused_nodes.size(); ++k) {
    if (merged[k]) continue;
    graph.nodes[fused_at[k]] = std::move(fused_nodes[k]);
    dead[fused_at[k]] = false;
  }
  erase_nodes(graph, dead);
  // A merged node reads the second direction's x W, which the importer computes after the
  // first direction's steps: order the nodes topologically again (stable otherwise).
  if (!sort_topologically(graph)) {
    return make_error(ErrorKind::kInternal, "dynamic_quant_lstm: the fused nodes form a cycle");
  }
  return fused;
}

}  // namespace webnn
