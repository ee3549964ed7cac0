// Small helpers shared by the passes: use counts, operand replacement, new constants.
#pragma once

#include <unordered_set>
#include <vector>

#include "ops/fused_chain.h"
#include "webnn/graph.h"

namespace webnn {

// Every operand a node reads, including those of its fused epilogue steps (except the values
// of the chain itself, which live only inside the node).
std::vector<OperandId> node_reads(const Graph& graph, const Node& node);

// How many times each operand is read by a node, plus one per graph output naming it.
std::vector<int> use_counts(const Graph& graph);

// Rewrites every read of operand `from` into a read of `to` (nodes and graph outputs).
void replace_uses(Graph& graph, OperandId from, OperandId to);

// Appends a constant operand holding `bytes` with descriptor `desc`.
OperandId add_constant(Graph& graph, const OperandDesc& desc, std::vector<uint8_t> bytes);

// Drops nodes marked in `dead` and renumbers producers.
void erase_nodes(Graph& graph, const std::vector<bool>& dead);

bool is_constant(const Graph& graph, OperandId id);

// Whether any node of `nodes` (indices) is `node` itself's producer or an ancestor of it: a path
// from one of their results to what `node` reads.
bool reaches_any(const Graph& graph, const Node& node, const std::unordered_set<int>& nodes);

// Reorders the nodes so that each comes after the producers of what it reads, keeping the
// present order wherever it already does (a depth-first emission in node order), and
// renumbers producers. False, with the graph unchanged, when the reads form a cycle.
bool sort_topologically(Graph& graph);
// True when the operand is a graph output.
bool is_graph_output(const Graph& graph, OperandId id);

// The unary ops the cpu backend evaluates with its vector kernels (cpu/elementwise.cc), each
// reading and writing the same index: they can run in place and be fused as epilogue steps.
bool is_cpu_vector_unary(OpKind k);

// The binary arithmetic ops the cpu vector kernels evaluate (and fuse as epilogue steps).
bool is_cpu_vector_binary(OpKind k);

}  // namespace webnn

namespace webnn {

// The producer of `id` when it is a plain single-output node of kind k (no epilogue, not
// quantized), else null.
const Node* plain_producer(const Graph& graph, OperandId id, OpKind k);

// `id` when it is a constant, the constant it reshapes when it is a plain reshape of one (a 1-D
// convolution's filter before folding), else -1. Both hold the same values in the same order.
OperandId constant_or_its_reshape(const Graph& graph, OperandId id);

// A float32 constant's values (empty when `id` is not one).
std::vector<float> float32_values(const Graph& graph, OperandId id);

// An int32 or int64 constant's values as int64 (empty when `id` is not one).
std::vector<int64_t> index_values(const Graph& graph, OperandId id);

// Appends an intermediate value (a node output) with descriptor `desc`.
OperandId add_value(Graph& graph, const OperandDesc& desc);

// Sets every operand's producer from the node list.
void renumber_producers(Graph& graph);

}  // namespace webnn
