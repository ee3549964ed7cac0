// Constant folding, for the fast backends: a node whose operands are all constants is
// evaluated once at compile time with the reference kernels (the oracle), and its outputs become
// constants. Folding is skipped where it would turn small constants into a much larger one
// (expand, tile, a broadcast): the node is cheaper to run than its result is to keep — except
// for the weights of a convolution or a matrix product (a quantized model's dequantizeLinear of
// int8 filters): the kernel keeps a packed float copy of a constant operand anyway, while one
// computed at run time is dequantized and packed again on every run, and keeps the node off
// the paths that want a constant filter (layout assignment, batch-norm folding, Winograd).
#include <algorithm>

#include "backends/reference/reference_backend.h"
#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

// A folded result may exceed its operands by this much before folding stops paying.
constexpr uint64_t kSmallResultBytes = 64 * 1024;

Expected<uint64_t> operand_bytes(const OperandDesc& d) {
  WEBNN_ASSIGN_OR_RETURN(uint64_t count, element_count(static_sizes(d.shape)));
  return storage_bytes(d.data_type, count);
}

bool foldable_type(DataType t) { return !is_4bit(t); }

// Operands read as a filter or weight matrix: conv2d / convTranspose2d filters, matmul and gemm
// B operands.
std::vector<bool> weight_operands(const Graph& graph) {
  std::vector<bool> weights(graph.operands.size(), false);
  auto mark = [&](OperandRef r) {
    if (r.present()) weights[r.id] = true;
  };
  for (const Node& node : graph.nodes) {
    if (node.kind == OpKind::kConv2d) mark(node.as<Conv2dParams>().filter);
    if (node.kind == OpKind::kConvTranspose2d) mark(node.as<ConvTranspose2dParams>().filter);
    if (node.kind == OpKind::kGemm) mark(node.as<GemmParams>().b);
    if (node.kind == OpKind::kMatmul) mark(node.as<BinaryParams>().b);
  }
  return weights;
}

// Evaluates `node` (all operands constant) and turns its outputs into constants.
Expected<bool> fold_node(Graph& graph, const Node& node, const std::vector<bool>& weights) {
  std::vector<OperandId> reads = node.inputs();
  uint64_t in_bytes = 0, out_bytes = 0;
  for (OperandId id : reads) {
    const OperandDesc& d = graph.desc(id);
    if (!is_static_shape(d.shape) || !foldable_type(d.data_type)) return false;
    WEBNN_ASSIGN_OR_RETURN(uint64_t b, operand_bytes(d));
    in_bytes += b;
  }
  for (OperandId id : node.outputs) {
    const OperandDesc& d = graph.desc(id);
    if (!is_static_shape(d.shape) || !foldable_type(d.data_type)) return false;
    WEBNN_ASSIGN_OR_RETURN(uint64_t b, operand_bytes(d));
    out_bytes += b;
  }
  const bool all_weights = std::all_of(node.outputs.begin(), node.outputs.end(),
                                       [&](OperandId id) { return weights[id]; });
  if (out_bytes > std::max(in_bytes, kSmallResultBytes) && !all_weights) return false;
  KernelFn fn = reference_kernels()[static_cast<int>(node.kind)];
  if (!fn) return false;

  std::vector<TensorView> views(graph.operands.size());
  std::vector<std::vector<uint8_t>> results(node.outputs.size());
  auto view_of = [&](OperandId id, uint8_t* data) -> Status {
    const OperandDesc& d = graph.desc(id);
    TensorView& v = views[id];
    v.data_type = d.data_type;
    v.shape = static_sizes(d.shape);
    WEBNN_ASSIGN_OR_RETURN(v.count, element_count(v.shape));
    v.data = data;
    return Status::ok();
  };
  for (OperandId id : reads) {
    WEBNN_RETURN_IF_ERROR(view_of(id, const_cast<uint8_t*>(graph.operands[id].constant->data())));
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    WEBNN_ASSIGN_OR_RETURN(uint64_t b, operand_bytes(graph.desc(node.outputs[k])));
    results[k].assign(std::max<uint64_t>(b, 1), 0);
    WEBNN_RETURN_IF_ERROR(view_of(node.outputs[k], results[k].data()));
  }
  KernelContext ctx(node, views, nullptr);
  // A kernel error (an op the reference evaluates only at dispatch) leaves the node in place:
  // it then reports the same error when the graph runs.
  if (!fn(ctx).is_ok()) return false;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    Operand& op = graph.operands[node.outputs[k]];
    op.kind = OperandKind::kConstant;
    op.producer = -1;
    op.constant = std::make_shared<const ConstantData>(std::move(results[k]));
  }
  return true;
}

}  // namespace

Expected<int64_t> fold_constants(Graph& graph) {
  std::vector<bool> dead(graph.nodes.size(), false);
  const std::vector<bool> weights = weight_operands(graph);
  int64_t folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (!node.epilogue.empty() || node.outputs.empty()) continue;
    std::vector<OperandId> reads = node.inputs();
    if (reads.empty()) continue;
    bool all_constant = std::all_of(reads.begin(), reads.end(),
                                    [&](OperandId id) { return is_constant(graph, id); });
    if (!all_constant) continue;
    WEBNN_ASSIGN_OR_RETURN(bool done, fold_node(graph, node, weights));
    if (done) {
      dead[i] = true;
      ++folded;
    }
  }
  if (folded) erase_nodes(graph, dead);
  return folded;
}

}  // namespace webnn
