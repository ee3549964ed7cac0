// float16 promotion, for the cpu backend only (the reference backend keeps each op's float16
// semantics: it is the oracle). Runs first: a graph computing in float16 computes in float32
// between its edges, so every later float32 pass (folding, layouts, fusion) and kernel applies,
// as OpenVINO's CPU plugin and browsers' CPU paths run float16 models.
//
//  - float16 constants become float32 constants (converted once, here); float16 intermediates
//    become float32 values (4 bytes an element in the memory plan).
//  - float16 graph inputs and outputs keep their ids and float16 descriptors (input_descriptors,
//    tensors and dispatch see the graph as built): an input is widened by a cast at entry, a
//    node writing an output writes a float32 value that a cast rounds to float16 at the end.
//  - A cast to float16 still rounds: its float16 result stays, and a cast widens it for its
//    readers (the same value, in float32). A cast of a promoted value to float32 is dropped
//    (its readers read the value); casts to other types read the float32 value.
//  - The double coefficients the spec casts to the input's type (epsilon, alpha, beta, clamp
//    and pad bounds) are rounded to float16 once, as the reference does.
// Integer and bool values, and ops whose output type is an option (argMin/argMax, cast), keep
// their types: every op's output type follows from its (now float32) inputs, which is checked
// by re-running the ops' Infer on the rewritten graph.
//
// Numerics: each value is float32 where float16 would round it after every op; the results
// are at least as accurate as per-op float16, with one visible difference: an intermediate
// that would overflow float16 (65504) stays finite (an output still rounds to inf).
//
// WEBNN_FLOAT16 (read at build()): "auto" (default) promotes graphs of two nodes or more that
// compute (not only move values: moves_values_only) (a
// single node gains nothing to fuse, and its float16 kernel moves half the bytes), "promote"
// every graph, "per_op" none (each float16 node then runs its float16 kernel, converting at
// its own edges: cpu/float16.cc, cpu/float16_elementwise.cc).
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "graph/passes/graph_util.h"
#include "graph/passes/pass.h"
#include "ops/infer.h"

namespace webnn {

namespace {

constexpr DataType kF16 = DataType::kFloat16;
constexpr DataType kF32 = DataType::kFloat32;

enum class Mode { kAuto, kPromote, kPerOp };

Expected<Mode> mode_from_env() {
  const char* env = std::getenv("WEBNN_FLOAT16");
  const std::string_view v = env ? env : "auto";
  if (v.empty() || v == "auto") return Mode::kAuto;
  if (v == "promote") return Mode::kPromote;
  if (v == "per_op") return Mode::kPerOp;
  return make_error(ErrorKind::kValue,
                    "WEBNN_FLOAT16: expected 'auto', 'promote' or 'per_op' (got '", v, "')");
}

OperandDesc with_type(OperandDesc d, DataType t) {
  d.data_type = t;
  return d;
}

std::vector<uint8_t> widened(const ConstantData& c) {
  const size_t n = c.size() / sizeof(float16);
  std::vector<uint8_t> bytes(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    float16 h;
    std::memcpy(&h, c.data() + i * sizeof(float16), sizeof h);
    const float f = static_cast<float>(h);
    std::memcpy(bytes.data() + i * sizeof(float), &f, sizeof f);
  }
  return bytes;
}

Node cast_node(OperandId from, OperandId to, DataType type, const std::string& label) {
  Node n{OpKind::kCast, label, CastParams{OperandRef{from}, type}, {to}};
  return n;
}

double rounded(double v) { return static_cast<double>(static_cast<float16>(v)); }

Scalar rounded(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::kInt:
      return Scalar::from_double(static_cast<double>(static_cast<float16>(s.i)));
    case Scalar::Kind::kUint:
      return Scalar::from_double(static_cast<double>(static_cast<float16>(s.u)));
    case Scalar::Kind::kFloat:
      break;
  }
  return Scalar::from_double(rounded(s.f));
}

// The coefficients a float16 node casts to float16 before use (the reference's coefficient(),
// epsilon_in(), bound_in_type(), pad_value()), rounded now so that float32 reads the same value.
// hardSwish's pywebnn alpha/beta are exact in the reference too: they stay.
void round_coefficients(Node& node) {
  std::visit(
      [](auto& p) {
        using P = std::decay_t<decltype(p)>;
        if constexpr (requires { p.epsilon; }) p.epsilon = rounded(p.epsilon);
        if constexpr (std::is_same_v<P, GemmParams> || std::is_same_v<P, HardSigmoidParams> ||
                      std::is_same_v<P, LinearParams>) {
          p.alpha = rounded(p.alpha), p.beta = rounded(p.beta);
        }
        if constexpr (std::is_same_v<P, EluParams> || std::is_same_v<P, LeakyReluParams>) {
          p.alpha = rounded(p.alpha);
        }
        if constexpr (std::is_same_v<P, ClampParams>) {
          if (p.min_value) p.min_value = rounded(*p.min_value);
          if (p.max_value) p.max_value = rounded(*p.max_value);
        }
        if constexpr (std::is_same_v<P, PadParams>) p.value = rounded(p.value);
      },
      node.params);
}

bool is_cast_to(const Node& node, DataType t) {
  return node.kind == OpKind::kCast && node.as<CastParams>().data_type == t;
}

// Whether every node's output types are what its Infer gives for the rewritten operands.
bool types_consistent(const Graph& g) {
  auto lookup = [&g](OperandId id) -> const OperandDesc& { return g.desc(id); };
  for (const Node& node : g.nodes) {
    auto outs = infer_node(node, lookup);
    if (!outs || outs->size() != node.outputs.size()) return false;
    for (size_t k = 0; k < outs->size(); ++k) {
      if ((*outs)[k].data_type != g.desc(node.outputs[k]).data_type) return false;
    }
  }
  return true;
}

// Ops that only move, select or copy values: a float16 graph of nothing else has no
// arithmetic to speed up, and its float16 kernels keep every bit (a NaN payload included),
// which a round trip through float32 does not.
bool moves_values_only(OpKind k) {
  switch (k) {
    case OpKind::kIdentity:
    case OpKind::kConcat:
    case OpKind::kExpand:
    case OpKind::kReshape:
    case OpKind::kSlice:
    case OpKind::kSplit:
    case OpKind::kTile:
    case OpKind::kTranspose:
    case OpKind::kPad:
    case OpKind::kReverse:
    case OpKind::kTriangular:
    case OpKind::kGather:
    case OpKind::kGatherElements:
    case OpKind::kGatherNd:
    case OpKind::kScatterElements:
    case OpKind::kScatterNd:
    case OpKind::kWhere:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kShape:
      return true;
    default:
      return false;
  }
}

}  // namespace

Expected<int64_t> promote_float16(Graph& graph) {
  WEBNN_ASSIGN_OR_RETURN(Mode mode, mode_from_env());
  if (mode == Mode::kPerOp) return 0;
  if (mode == Mode::kAuto) {
    if (graph.nodes.size() < 2) return 0;
    bool computes = false;
    for (const Node& node : graph.nodes) computes = computes || !moves_values_only(node.kind);
    if (!computes) return 0;
  }
  const size_t count = graph.operands.size();
  std::vector<bool> was_f16(count, false), is_output(count, false), read(count, false);
  bool any = false;
  for (size_t id = 0; id < count; ++id) {
    was_f16[id] = graph.operands[id].desc.data_type == kF16;
    any = any || was_f16[id];
  }
  if (!any) return 0;
  for (const NamedOperand& o : graph.outputs) is_output[o.id] = true;
  for (const Node& node : graph.nodes) {
    for (OperandId id : node.inputs()) read[id] = true;
  }

  Graph g = graph;  // rewritten on a copy: kept only when every type checks
  // What a node reads instead of operand id: its float32 form (-1: the operand itself).
  std::vector<OperandId> as_f32(count, -1);
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size() + g.inputs.size() + g.outputs.size());
  for (OperandId id : g.inputs) {
    if (!was_f16[id] || !read[id]) continue;
    as_f32[id] = add_value(g, with_type(g.desc(id), kF32));
    nodes.push_back(cast_node(id, as_f32[id], kF32, g.operands[id].name));
  }
  for (size_t id = 0; id < count; ++id) {
    Operand& op = g.operands[id];
    if (!was_f16[id] || op.kind != OperandKind::kConstant) continue;
    if (!op.constant) continue;  // its bytes released: a constant no node reads
    if (!is_output[id]) {
      op.desc.data_type = kF32;
      op.constant = std::make_shared<const ConstantData>(widened(*op.constant));
    } else if (read[id]) {  // the output keeps its float16 bytes, readers get a float32 copy
      const OperandDesc desc = with_type(op.desc, kF32);
      std::vector<uint8_t> bytes = widened(*op.constant);
      as_f32[id] = add_constant(g, desc, std::move(bytes));  // (op is invalid from here)
    }
  }
  int64_t promoted = 0;
  for (Node& node : g.nodes) {
    bool f16_node = false;
    for (OperandId id : node.inputs()) f16_node = f16_node || was_f16[id];
    for (OperandId id : node.outputs) f16_node = f16_node || was_f16[id];
    for_each_operand(node.params, [&](OperandRef& r) {
      if (as_f32[r.id] >= 0) r.id = as_f32[r.id];
    });
    if (!f16_node) {
      nodes.push_back(std::move(node));
      continue;
    }
    ++promoted;
    if (!node.outputs.empty() && was_f16[node.outputs[0]]) round_coefficients(node);
    const OperandId x0 = node.kind == OpKind::kCast ? node.as<CastParams>().input.id : -1;
    if (is_cast_to(node, kF32) && g.desc(x0).data_type == kF32 && !is_output[node.outputs[0]]) {
      as_f32[node.outputs[0]] = x0;  // a float16 value's widening: it is float32 already
      continue;
    }
    std::vector<Node> after;
    for (OperandId& y : node.outputs) {
      if (!was_f16[y]) continue;
      if (is_cast_to(node, kF16)) {
        // The rounding stays: the float16 result, widened (exactly) for its readers.
        if (!read[y]) continue;
        as_f32[y] = add_value(g, with_type(g.desc(y), kF32));
        after.push_back(cast_node(y, as_f32[y], kF32, node.label));
      } else if (is_output[y]) {
        const OperandId y32 = add_value(g, with_type(g.desc(y), kF32));
        after.push_back(cast_node(y32, y, kF16, node.label));
        as_f32[y] = y32;
        y = y32;
      } else {
        g.operands[y].desc.data_type = kF32;
      }
    }
    nodes.push_back(std::move(node));
    for (Node& n : after) nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);
  renumber_producers(g);
  if (!types_consistent(g)) return 0;  // an op whose types do not follow: per-op float16
  graph = std::move(g);
  return promoted;
}

}  // namespace webnn
