// Shared-weight products, cpu only: gemm nodes (and matmuls of a 2-D a) that multiply
// different rows by the same constant weights, none of them reading another's result, become
// one product of their rows concatenated, followed by a slice per original node. That is the
// form of a recurrent network unrolled into one Gemm per step (older converters, torch
// LSTMCell loops: a CRNN's 40 steps each read the same 4 MB input weights for one row), whose
// weights then stream from memory once instead of once per step. Each output element is the
// same sum of the same products in the same order (the GEMM sums a row's products alike
// however many rows it multiplies), so results are bit-identical; the slices write the
// original output operands, so every reader is unchanged.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_set>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"

namespace webnn {

namespace {

// At most this many products per batch (bounds the dependency walks on hostile graphs).
constexpr size_t kMaxBatch = 256;

// Products share a GEMM when these agree: op kind, weights operand, the bias's shape and
// bytes (importers write one bias constant per node), alpha, beta, b transposed, K.
using Key = std::tuple<int, OperandId, std::string, double, double, bool, int64_t>;

struct Product {
  int node = -1;       // in the graph the batches were chosen on
  OperandId out = -1;  // its result (node indices move as batches are merged)
  OperandId a = -1;
  int64_t rows = 0;
};

// The weights, bias and options that must agree for products to share one GEMM, or false when
// the node is not such a product.
bool product_key(const Graph& g, const Node& node, Key* key, Product* product) {
  if (!node.epilogue.empty() || node.quantized || node.permuted || node.outputs.size() != 1) {
    return false;
  }
  OperandRef a, b, c;
  double alpha = 1.0, beta = 1.0;
  bool b_transpose = false;
  if (node.kind == OpKind::kGemm) {
    const auto& p = node.as<GemmParams>();
    if (p.a_transpose) return false;
    a = p.a, b = p.b, c = p.c, alpha = p.alpha, beta = p.beta, b_transpose = p.b_transpose;
  } else if (node.kind == OpKind::kMatmul) {
    const auto& p = node.as<BinaryParams>();
    a = p.a, b = p.b;
  } else {
    return false;
  }
  const OperandDesc& ad = g.desc(a.id);
  const OperandDesc& bd = g.desc(b.id);
  const OperandDesc& yd = g.desc(node.outputs[0]);
  if (ad.data_type != DataType::kFloat32 || bd.data_type != DataType::kFloat32 ||
      yd.data_type != DataType::kFloat32 || ad.rank() != 2 || bd.rank() != 2 || yd.rank() != 2 ||
      !is_static_shape(ad.shape) || !is_static_shape(bd.shape) || !is_constant(g, b.id)) {
    return false;
  }
  if (c.present()) {
    // A bias broadcast along the rows; a c with one row per row of a cannot be shared.
    const OperandDesc& cd = g.desc(c.id);
    if (!is_constant(g, c.id) || (cd.rank() == 2 && cd.shape[0].value != 1)) return false;
  }
  std::string bias;
  if (c.present()) {
    const ConstantData& data = *g.operands[c.id].constant;
    bias = shape_to_string(g.desc(c.id).shape) + ":" +
           std::string(reinterpret_cast<const char*>(data.data()), data.size());
  }
  *key = {static_cast<int>(node.kind), b.id, bias, alpha, beta, b_transpose, ad.shape[1].value};
  product->out = node.outputs[0];
  product->a = a.id;
  product->rows = ad.shape[0].value;
  return product->rows > 0;
}

// Replaces the products of `batch` by concat -> one product -> slices, or leaves the graph
// as it was when that would close a cycle with an earlier merge (two batches each feeding
// the other's rows). True when merged.
bool merge(Graph& graph, const std::vector<Product>& batch) {
  Graph g = graph;
  const Node& first = g.nodes[g.operands[batch[0].out].producer];
  const int64_t k = g.desc(batch[0].a).shape[1].value;
  const int64_t n = g.desc(first.outputs[0]).shape[1].value;
  int64_t rows = 0;
  OperandList parts;
  for (const Product& p : batch) {
    parts.push_back(OperandRef{p.a});
    rows += p.rows;
  }
  const OperandId cat = add_value(g, OperandDesc{DataType::kFloat32, {Dim{rows}, Dim{k}}});
  const OperandId product = add_value(g, OperandDesc{DataType::kFloat32, {Dim{rows}, Dim{n}}});
  Node merged = first;
  merged.outputs = {product};
  if (merged.kind == OpKind::kGemm) {
    std::get<GemmParams>(merged.params).a = OperandRef{cat};
  } else {
    std::get<BinaryParams>(merged.params).a = OperandRef{cat};
  }
  std::vector<Node> added;
  added.push_back(Node{OpKind::kConcat, first.label, ConcatParams{parts, 0}, {cat}, {}});
  added.push_back(std::move(merged));
  std::vector<bool> dead(g.nodes.size(), false);
  int64_t offset = 0;
  for (const Product& p : batch) {
    SliceParams s;
    s.input = OperandRef{product};
    s.starts = {offset, 0};
    s.sizes = {Dim{p.rows}, Dim{n}};
    const int index = g.operands[p.out].producer;
    added.push_back(Node{OpKind::kSlice, g.nodes[index].label, s, {p.out}, {}});
    dead[index] = true;
    offset += p.rows;
  }
  for (Node& node : added) {
    g.nodes.push_back(std::move(node));
    dead.push_back(false);
  }
  erase_nodes(g, dead);
  // The merged product comes after every row's producer, the slices before every reader.
  if (!sort_topologically(g)) return false;
  graph = std::move(g);
  return true;
}

}  // namespace

Expected<int64_t> merge_shared_weight_products(Graph& graph) {
  std::map<Key, std::vector<Product>> groups;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Key key;
    Product p;
    if (!product_key(graph, graph.nodes[i], &key, &p)) continue;
    p.node = static_cast<int>(i);
    groups[key].push_back(p);
  }
  // Batches of products none of which reads another's result (in node order; a product that
  // does waits for a later batch), decided on the graph as it is.
  std::vector<std::vector<Product>> batches;
  for (auto& [key, members] : groups) {
    std::vector<Product> pending = std::move(members);
    while (pending.size() >= 2) {
      std::vector<Product> batch, rest;
      std::unordered_set<int> in_batch;
      for (const Product& p : pending) {
        if (batch.size() < kMaxBatch &&
            (batch.empty() || !reaches_any(graph, graph.nodes[p.node], in_batch))) {
          batch.push_back(p);
          in_batch.insert(p.node);
        } else {
          rest.push_back(p);
        }
      }
      if (batch.size() >= 2) batches.push_back(std::move(batch));
      pending = std::move(rest);
    }
  }
  int64_t merged = 0;
  for (const std::vector<Product>& batch : batches) merged += merge(graph, batch);
  return merged;
}

}  // namespace webnn
