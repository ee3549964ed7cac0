#include "graph/passes/u8s8_correction.h"

#include <algorithm>
#include <cstring>

#include "graph/passes/graph_util.h"

namespace webnn {

OperandId u8s8_cast_source(const Graph& g, OperandId id) {
  const int32_t p = g.operands[id].producer;
  if (p < 0) return -1;
  const Node& n = g.nodes[p];
  if (n.kind != OpKind::kCast || !n.epilogue.empty() || n.quantized) return -1;
  const auto& cp = n.as<CastParams>();
  const DataType t = g.desc(cp.input.id).data_type;
  if (cp.data_type != DataType::kFloat32) return -1;
  return t == DataType::kUint8 || t == DataType::kInt8 ? cp.input.id : -1;
}

namespace {

// Whether ORT's vpmaddubsw can clip the pair (b0, b1) of int8 weights for some uint8 pair.
bool pair_can_saturate(float w0, float w1) {
  const int32_t b0 = static_cast<int32_t>(w0), b1 = static_cast<int32_t>(w1);
  const int32_t pos = std::max(b0, 0) + std::max(b1, 0);
  const int32_t neg = std::min(b0, 0) + std::min(b1, 0);
  return 255 * pos > 32767 || 255 * neg < -32768;
}

// x when `id` holds the values ORT's u8s8 kernels multiply: cast(x) for uint8 x, cast(x) + 128
// for int8 x (ORT's shift of int8 activations to uint8); else -1.
OperandId raw_source(const Graph& g, OperandId id) {
  if (const OperandId x = u8s8_cast_source(g, id); x >= 0) {
    return g.desc(x).data_type == DataType::kUint8 ? x : -1;
  }
  const Node* add = plain_producer(g, id, OpKind::kAdd);
  if (!add) return -1;
  const auto& ap = add->as<BinaryParams>();
  const OperandId x = u8s8_cast_source(g, ap.a.id);
  const std::vector<float> shift = float32_values(g, ap.b.id);
  if (x < 0 || g.desc(x).data_type != DataType::kInt8 || shift.size() != 1 || shift[0] != 128.0f) {
    return -1;
  }
  return x;
}

}  // namespace

bool is_u8s8_matmul_correction(const Graph& g, OperandId fix, OperandId x, const float* w,
                               int64_t k, int64_t n) {
  const size_t rank = g.desc(x).shape.size();
  OperandId d = -1;
  if (const Node* rs = plain_producer(g, fix, OpKind::kReshape)) {
    d = rs->as<NewShapeParams>().input.id;
  } else if (const Node* sum = plain_producer(g, fix, OpKind::kReduceSum)) {
    const auto& p = sum->as<ReduceParams>();
    if (p.keep_dimensions || !p.axes || *p.axes != IntList{static_cast<int64_t>(rank - 1)}) {
      return false;
    }
    d = p.input.id;
  } else {
    return false;
  }
  const Node* sub = plain_producer(g, d, OpKind::kSub);
  if (!sub) return false;
  const OperandId pv = sub->as<BinaryParams>().b.id;
  const Node* cl = plain_producer(g, sub->as<BinaryParams>().a.id, OpKind::kClamp);
  if (!cl || cl->as<ClampParams>().input.id != pv) return false;
  const auto& cp = cl->as<ClampParams>();
  if (!cp.min_value || !cp.max_value || cp.min_value->as_double() != -32768.0 ||
      cp.max_value->as_double() != 32767.0) {
    return false;
  }
  const Node* add = plain_producer(g, pv, OpKind::kAdd);
  const OperandDesc& pd = g.desc(pv);
  if (!add || pd.shape.size() != rank + 1 || pd.shape[rank].value != n) return false;
  const int64_t slots = pd.shape[rank - 1].value;
  std::vector<int64_t> idx[2];
  std::vector<float> wt[2];
  const OperandId terms[2] = {add->as<BinaryParams>().a.id, add->as<BinaryParams>().b.id};
  for (int i = 0; i < 2; ++i) {
    const Node* mul = plain_producer(g, terms[i], OpKind::kMul);
    if (!mul) return false;
    wt[i] = float32_values(g, mul->as<BinaryParams>().b.id);
    if (static_cast<int64_t>(wt[i].size()) != slots * n) return false;
    const OperandDesc& wd = g.desc(mul->as<BinaryParams>().b.id);
    if (wd.shape.size() < 2 || wd.shape[wd.shape.size() - 1].value != n) return false;
    const Node* rs = plain_producer(g, mul->as<BinaryParams>().a.id, OpKind::kReshape);
    if (!rs) return false;
    const Node* ga = plain_producer(g, rs->as<NewShapeParams>().input.id, OpKind::kGather);
    if (!ga) return false;
    const auto& gp = ga->as<GatherParams>();
    if (raw_source(g, gp.input.id) != x || gp.axis != static_cast<int64_t>(rank - 1)) {
      return false;
    }
    idx[i] = index_values(g, gp.indices.id);
    if (static_cast<int64_t>(idx[i].size()) != slots * n) return false;
  }
  auto weight = [&](int64_t i, int64_t col) { return i < k ? w[i * n + col] : 0.0f; };
  const int64_t pairs = (k + 1) / 2;
  std::vector<uint8_t> listed(static_cast<size_t>(pairs));
  for (int64_t col = 0; col < n; ++col) {
    std::fill(listed.begin(), listed.end(), 0);
    for (int64_t sl = 0; sl < slots; ++sl) {
      const int64_t at = sl * n + col;
      const float w0 = wt[0][at], w1 = wt[1][at];
      const int64_t i0 = idx[0][at], i1 = idx[1][at];
      if (w0 == 0.0f && w1 == 0.0f) continue;  // padding: adds clamp(0) - 0
      if (i0 < 0 || i0 >= k || i0 % 2 != 0 || listed[i0 / 2]) return false;
      if (w0 != weight(i0, col) || w1 != weight(i0 + 1, col)) return false;
      if (w1 != 0.0f && i1 != i0 + 1) return false;
      listed[i0 / 2] = 1;
    }
    for (int64_t j = 0; j < pairs; ++j) {
      if (!listed[j] && pair_can_saturate(weight(2 * j, col), weight(2 * j + 1, col))) {
        return false;
      }
    }
  }
  return true;
}

namespace {

// The value a reshape chain starts from (id itself when it is no reshape's output).
OperandId through_reshapes(const Graph& g, OperandId id) {
  while (const Node* rs = plain_producer(g, id, OpKind::kReshape)) {
    id = rs->as<NewShapeParams>().input.id;
  }
  return id;
}

}  // namespace

bool is_u8s8_conv_correction(const Graph& g, OperandId fix, const Node& conv, const float* w,
                             int32_t raw_zero) {
  const Node* sum = plain_producer(g, fix, OpKind::kReduceSum);
  if (!sum) return false;
  const auto& sp = sum->as<ReduceParams>();
  if (sp.keep_dimensions || !sp.axes || *sp.axes != IntList{2}) return false;
  const Node* sub = plain_producer(g, sp.input.id, OpKind::kSub);
  if (!sub) return false;
  const OperandId pv = sub->as<BinaryParams>().b.id;
  const Node* cl = plain_producer(g, sub->as<BinaryParams>().a.id, OpKind::kClamp);
  if (!cl || cl->as<ClampParams>().input.id != pv) return false;
  const auto& clp = cl->as<ClampParams>();
  if (!clp.min_value || !clp.max_value || clp.min_value->as_double() != -32768.0 ||
      clp.max_value->as_double() != 32767.0) {
    return false;
  }
  // pv: [N, O, slots, spatial...], reshaped from the pair conv2d's [N, O * slots, H, W].
  const OperandDesc& pd = g.desc(pv);
  const OperandId pair_out = through_reshapes(g, pv);
  const Node* pc = plain_producer(g, pair_out, OpKind::kConv2d);
  if (pair_out == pv || !pc || pd.shape.size() < 4) return false;
  const auto& cp = conv.as<Conv2dParams>();
  const auto& pp = pc->as<Conv2dParams>();
  if (pp.strides != cp.strides || pp.dilations != cp.dilations || pp.padding != cp.padding ||
      pp.groups != cp.groups || pp.input_layout != "nchw" || cp.input_layout != "nchw" ||
      pp.filter_layout != "oihw" || cp.filter_layout != "oihw" || !pp.bias.present()) {
    return false;
  }
  if (through_reshapes(g, pp.input.id) != through_reshapes(g, cp.input.id)) return false;
  const OperandDesc& fd = g.desc(cp.filter.id);
  const OperandDesc& pfd = g.desc(pp.filter.id);
  if (fd.shape.size() != 4 || pfd.shape.size() != 4) return false;
  const int64_t o_count = fd.shape[0].value, gi = fd.shape[1].value;
  const int64_t taps = fd.shape[2].value * fd.shape[3].value, k = gi * taps;
  const int64_t slots = pd.shape[2].value;
  if (pd.shape[1].value != o_count || slots < 1 || pfd.shape[0].value != o_count * slots ||
      pfd.shape[1].value != gi || pfd.shape[2].value != fd.shape[2].value ||
      pfd.shape[3].value != fd.shape[3].value) {
    return false;
  }
  const std::vector<float> f = float32_values(g, constant_or_its_reshape(g, pp.filter.id));
  const std::vector<float> bias = float32_values(g, pp.bias.id);
  if (static_cast<int64_t>(f.size()) != o_count * slots * k ||
      static_cast<int64_t>(bias.size()) != o_count * slots) {
    return false;
  }
  // Element kk = tap * gi + i of ORT's order is (i, tap) of an oihw filter row.
  auto at = [&](const float* row, int64_t kk) {
    return kk < k ? row[kk % gi * taps + kk / gi] : 0;
  };
  const int64_t pairs = (k + 1) / 2;
  std::vector<uint8_t> listed(static_cast<size_t>(pairs));
  for (int64_t o = 0; o < o_count; ++o) {
    const float* wo = w + o * k;
    std::fill(listed.begin(), listed.end(), 0);
    for (int64_t e = 0; e < slots; ++e) {
      const float* fe = f.data() + (o * slots + e) * k;
      int64_t first = -1, count = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        if (at(fe, kk) == 0.0f) continue;
        if (first < 0) first = kk;
        ++count;
      }
      if (first < 0) {  // padding: adds clamp(bias) - bias with a zero bias
        if (bias[o * slots + e] != 0.0f) return false;
        continue;
      }
      const int64_t j = first / 2;
      const float w0 = at(wo, 2 * j), w1 = at(wo, 2 * j + 1);
      // The slot's weights are those of pair j, and nothing else.
      if (listed[j] || count != (at(fe, 2 * j) != 0.0f) + (at(fe, 2 * j + 1) != 0.0f) ||
          at(fe, 2 * j) != w0 || at(fe, 2 * j + 1) != w1) {
        return false;
      }
      if (bias[o * slots + e] != (w0 + w1) * static_cast<float>(raw_zero)) return false;
      listed[j] = 1;
    }
    for (int64_t j = 0; j < pairs; ++j) {
      if (!listed[j] && pair_can_saturate(at(wo, 2 * j), at(wo, 2 * j + 1))) return false;
    }
  }
  return true;
}

}  // namespace webnn
