// Byte-indexed table gathers, for the cpu backend: gather(table, cast(x -> int32) - c) with x
// (u)int8 and table a constant vector becomes gather(table', x), table' the 256 values that
// each byte of x selects.
//
// The ONNX importer evaluates quantized element-wise operators the way ONNX Runtime's kernels
// round them as lookup tables of the 8-bit input (python/webnn/onnx/ops/ort_qladd.py,
// quantization.py): the index is the byte widened to int32 and shifted by the type's minimum.
// Widening, shifting and the gather's own index normalisation are three passes over the
// values for one table read; the cpu gather kernel reads (u)int8 indices directly (only this
// pass makes such a node), as raw bytes: table'[v] is what the graph gathers for the byte v.
// An int8 index normalises like any negative index, v + 256, which is v's byte, so one table
// serves both types. The result is the same elements, so the same bits.
#include <algorithm>
#include <cstring>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

// The (u)int8 x and shift c when `id` is cast(x -> int32) or cast(x -> int32) - c, c a
// constant int32 holding one value (any rank of ones) that does not broadcast x.
bool byte_index(const Graph& g, OperandId id, OperandId* x, int64_t* shift) {
  *shift = 0;
  if (const Node* sub = plain_producer(g, id, OpKind::kSub)) {
    const auto& sp = sub->as<BinaryParams>();
    const OperandId c = sp.b.id;
    if (!is_constant(g, c) || g.desc(c).data_type != DataType::kInt32 ||
        g.operands[c].constant->size() != sizeof(int32_t) ||
        g.desc(c).shape.size() > g.desc(sp.a.id).shape.size() ||
        !(g.desc(sp.a.id).shape == g.desc(id).shape)) {
      return false;
    }
    int32_t v;
    std::memcpy(&v, g.operands[c].constant->data(), sizeof v);
    *shift = v;
    id = sp.a.id;
  }
  const Node* cast = plain_producer(g, id, OpKind::kCast);
  if (!cast || cast->as<CastParams>().data_type != DataType::kInt32) return false;
  *x = cast->as<CastParams>().input.id;
  const DataType t = g.desc(*x).data_type;
  return t == DataType::kUint8 || t == DataType::kInt8;
}

}  // namespace

Expected<int64_t> index_gathers_by_bytes(Graph& graph) {
  for (const Operand& op : graph.operands) {
    // Plans of graphs with dynamic sizes re-infer every node, which a gather by (u)int8
    // indices would fail; those graphs keep the int32 form.
    if (!is_static_shape(op.desc.shape)) return int64_t{0};
  }
  int64_t rewritten = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    Node& node = graph.nodes[n];
    if (node.kind != OpKind::kGather || !node.epilogue.empty() || node.quantized) continue;
    const auto p = node.as<GatherParams>();
    const OperandDesc& td = graph.desc(p.input.id);
    if (p.axis != 0 || td.shape.size() != 1 || !is_constant(graph, p.input.id)) continue;
    OperandId x = -1;
    int64_t shift = 0;
    if (!byte_index(graph, p.indices.id, &x, &shift)) continue;
    const int64_t size = td.shape[0].value;
    const size_t width = element_size(td.data_type);
    // The cpu kernel's element loop reads byte indices for 1-, 2- and 4-byte elements.
    if (size < 1 || width > 4 || graph.operands[p.input.id].constant->size() != size * width) {
      continue;
    }
    const bool is_signed = graph.desc(x).data_type == DataType::kInt8;
    std::vector<uint8_t> table(256 * width);
    const uint8_t* from = graph.operands[p.input.id].constant->data();
    for (int v = 0; v < 256; ++v) {
      // The index the graph forms from byte v, normalised as gather does (negative from the
      // end, then clamped: reference/gather.cc).
      int64_t i = (is_signed ? int64_t{static_cast<int8_t>(v)} : int64_t{v}) - shift;
      if (i < 0) i += size;
      i = std::clamp<int64_t>(i, 0, size - 1);
      std::memcpy(table.data() + v * width, from + i * width, width);
    }
    OperandDesc desc = td;
    desc.shape = Shape(1);
    desc.shape[0].value = 256;
    const OperandId t = add_constant(graph, desc, std::move(table));
    auto& gp = std::get<GatherParams>(graph.nodes[n].params);  // add_constant grew operands only
    gp.input = OperandRef{t};
    gp.indices = OperandRef{x};
    ++rewritten;
  }
  return rewritten;
}

}  // namespace webnn
