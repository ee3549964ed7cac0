#include "fuzz_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "fuzz_targets.h"
#include "webnn/builder.h"
#include "webnn/context.h"
#include "webnn/format.h"

namespace webnn::fuzz {

namespace {

// Reads the fuzz input as a stream of small decisions; past the end every read is 0, so
// every input (also a truncated one) describes exactly one graph.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool done() const { return pos_ >= size_; }
  // In [0, n).
  unsigned pick(unsigned n) { return n == 0 ? 0 : byte() % n; }
  bool chance(unsigned percent) { return pick(100) < percent; }
  int64_t small_int() {
    // Mostly the values options take (-2..6), sometimes a boundary that must be rejected.
    static constexpr int64_t kEdges[] = {-1,
                                         0,
                                         7,
                                         8,
                                         16,
                                         255,
                                         256,
                                         65536,
                                         INT32_MAX,
                                         int64_t{1} << 31,
                                         int64_t{1} << 40,
                                         INT64_MAX,
                                         INT64_MIN};
    if (chance(90)) return static_cast<int64_t>(pick(9)) - 2;
    return kEdges[pick(sizeof kEdges / sizeof kEdges[0])];
  }
  double real() {
    static constexpr double kValues[] = {0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, 0.2, -3.5, 1e30, -0.0};
    if (chance(5)) return std::nan("");
    if (chance(3)) return INFINITY;
    return kValues[pick(sizeof kValues / sizeof kValues[0])];
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

constexpr const char* kWords[] = {"nchw",      "nhwc",    "oihw",
                                  "hwio",      "ohwi",    "ihwo",
                                  "iohw",      "linear",  "nearest-neighbor",
                                  "constant",  "edge",    "reflection",
                                  "symmetric", "forward", "backward",
                                  "both",      "zrn",     "rzn",
                                  "iofg",      "ifgo",    "floor",
                                  "ceil",      "sigmoid", "tanh",
                                  "relu",      "float32", "int32",
                                  "",          "x"};

// WEBNN_FUZZ_FLOAT16=1: three types in four are float16, so that most graphs go through the
// cpu backend's float16 paths (graph/passes/float16_promotion.cc and the float16 kernels).
bool float16_mode() {
  static const bool on = std::getenv("WEBNN_FUZZ_FLOAT16") != nullptr;
  return on;
}

DataType pick_type(Reader& r) {
  if (float16_mode() && r.chance(75)) return DataType::kFloat16;
  // float32 most often: it is what most ops accept, so more graphs get to run.
  static constexpr DataType kTypes[] = {DataType::kFloat32, DataType::kFloat32, DataType::kFloat32,
                                        DataType::kFloat16, DataType::kInt32,   DataType::kUint32,
                                        DataType::kInt64,   DataType::kUint64,  DataType::kInt8,
                                        DataType::kUint8,   DataType::kInt4,    DataType::kUint4};
  return kTypes[r.pick(sizeof kTypes / sizeof kTypes[0])];
}

Shape pick_shape(Reader& r) {
  Shape s;
  unsigned rank = r.pick(5);
  for (unsigned k = 0; k < rank; ++k) s.push_back(Dim(static_cast<int64_t>(r.pick(4)) + 1));
  return s;
}

// Sets each field of an op's params from the input, or leaves the spec default.
struct FieldFiller {
  Reader& r;
  const std::vector<OperandId>& pool;  // operands usable as arguments

  OperandRef operand() {
    if (pool.empty()) return OperandRef{0};
    return OperandRef{pool[pool.size() - 1 - r.pick(static_cast<unsigned>(pool.size()))]};
  }
  IntList ints() {
    IntList v(r.pick(5));
    for (int64_t& x : v) x = r.small_int();
    return v;
  }

  void operator()(const char*, OperandRef& f, unsigned flags = 0, const char* = nullptr) {
    if ((flags & kRequired) || r.chance(40)) f = operand();
  }
  void operator()(const char*, OperandList& f, unsigned = 0, const char* = nullptr) {
    f.assign(1 + r.pick(3), OperandRef{});
    for (OperandRef& x : f) x = operand();
  }
  void operator()(const char*, bool& f, unsigned = 0, const char* = nullptr) {
    if (r.chance(50)) f = r.chance(50);
  }
  void operator()(const char*, double& f, unsigned = 0, const char* = nullptr) {
    if (r.chance(50)) f = r.real();
  }
  void operator()(const char*, std::string& f, unsigned = 0, const char* = nullptr) {
    if (r.chance(50)) f = kWords[r.pick(sizeof kWords / sizeof kWords[0])];
  }
  void operator()(const char*, IntList& f, unsigned flags = 0, const char* = nullptr) {
    if ((flags & kRequired) || r.chance(50)) f = ints();
  }
  void operator()(const char*, OptIntList& f, unsigned = 0, const char* = nullptr) {
    if (r.chance(50)) f = ints();
  }
  void operator()(const char*, OptDoubleList& f, unsigned = 0, const char* = nullptr) {
    if (!r.chance(50)) return;
    f.emplace(r.pick(4));
    for (double& x : *f) x = r.chance(80) ? 0.5 * (1 + r.pick(6)) : r.real();
  }
  void operator()(const char*, OptStringList& f, unsigned = 0, const char* = nullptr) {
    if (!r.chance(50)) return;
    f.emplace(r.pick(4));
    for (std::string& x : *f) x = kWords[r.pick(sizeof kWords / sizeof kWords[0])];
  }
  Scalar scalar() {
    switch (r.pick(3)) {
      case 0:
        return Scalar::from_double(r.real());
      case 1:
        return Scalar::from_int(r.small_int());
      default:
        return Scalar::from_uint(static_cast<uint64_t>(r.small_int()));
    }
  }
  void operator()(const char*, Scalar& f, unsigned = 0, const char* = nullptr) {
    if (r.chance(50)) f = scalar();
  }
  void operator()(const char*, OptScalar& f, unsigned = 0, const char* = nullptr) {
    if (r.chance(50)) f = scalar();
  }
  void operator()(const char*, Shape& f, unsigned = 0, const char* = nullptr) {
    f.clear();
    unsigned rank = r.pick(5);
    for (unsigned k = 0; k < rank; ++k) {
      f.push_back(r.chance(90) ? Dim(static_cast<int64_t>(r.pick(6)) + 1) : Dim(r.small_int()));
    }
  }
  void operator()(const char*, Splits& f, unsigned = 0, const char* = nullptr) {
    f.is_count = r.chance(50);
    if (f.is_count) {
      f.count = r.small_int();
    } else {
      f.sizes = ints();
    }
  }
  void operator()(const char*, DataType& f, unsigned = 0, const char* = nullptr) {
    if (r.chance(70)) f = pick_type(r);
  }
  template <class T>
  void operator()(const char*, T& f, unsigned flags = 0, const char* = nullptr) {
    static_assert(std::is_integral_v<T>, "a params field type the fuzzer does not fill");
    if ((flags & kRequired) || r.chance(50)) f = static_cast<T>(r.small_int());
  }
};

// Deterministic element values from the input: small numbers, so that cpu and reference
// results compare meaningfully (and indices are often in range).
std::vector<uint8_t> tensor_bytes(Reader& r, DataType type, uint64_t count) {
  uint64_t bytes = *storage_bytes(type, count);
  std::vector<uint8_t> out(bytes);
  auto fill = [&](auto sample) {
    using T = decltype(sample(uint8_t{}));
    for (uint64_t k = 0; k < count; ++k) {
      T v = sample(r.byte());
      std::memcpy(out.data() + k * sizeof(T), &v, sizeof(T));
    }
  };
  switch (type) {
    case DataType::kFloat32:
      fill([](uint8_t b) { return static_cast<float>(static_cast<int8_t>(b)) / 16.0f; });
      break;
    case DataType::kFloat16:
      fill([](uint8_t b) { return static_cast<float16>(static_cast<int8_t>(b) / 16.0f); });
      break;
    case DataType::kInt32:
      fill([](uint8_t b) { return static_cast<int32_t>(b % 8) - 2; });
      break;
    case DataType::kUint32:
      fill([](uint8_t b) { return static_cast<uint32_t>(b % 8); });
      break;
    case DataType::kInt64:
      fill([](uint8_t b) { return static_cast<int64_t>(b % 8) - 2; });
      break;
    case DataType::kUint64:
      fill([](uint8_t b) { return static_cast<uint64_t>(b % 8); });
      break;
    case DataType::kInt8:
      fill([](uint8_t b) { return static_cast<int8_t>(b); });
      break;
    case DataType::kUint8:
      fill([](uint8_t b) { return b; });
      break;
    case DataType::kInt4:
    case DataType::kUint4:
      for (uint8_t& b : out) b = r.byte();
      if (count % 2) out.back() &= 0x0F;
      break;
  }
  return out;
}

struct Contexts {
  std::shared_ptr<Context> cpu, reference;
};

const Contexts& contexts() {
  static const Contexts c = [] {
    Contexts out;
    out.cpu = *Context::create("default", false, "cpu");
    out.reference = *Context::create("default", false, "reference");
    return out;
  }();
  return c;
}

bool close_enough(double got, double want, double atol, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

struct Tolerance {
  double atol, rtol;
};
// The comparison's tolerance for a float type: the graph is short and its inputs small, so
// legitimate rounding differences stay far below it.
Tolerance tolerance(DataType type) {
  return type == DataType::kFloat16 ? Tolerance{1e-2, 1e-2} : Tolerance{1e-4, 1e-3};
}

// "" when the cpu result matches the reference one (floats within tolerance()).
std::string compare(const std::string& name, DataType type, const std::vector<uint8_t>& cpu,
                    const std::vector<uint8_t>& ref, uint64_t count) {
  if (cpu.size() != ref.size()) return "output '" + name + "': sizes differ";
  for (uint64_t k = 0; k < count; ++k) {
    double got = 0, want = 0;
    if (type == DataType::kFloat32) {
      float a, b;
      std::memcpy(&a, cpu.data() + 4 * k, 4);
      std::memcpy(&b, ref.data() + 4 * k, 4);
      got = a, want = b;
      if (close_enough(got, want, tolerance(type).atol, tolerance(type).rtol)) continue;
    } else if (type == DataType::kFloat16) {
      float16 a, b;
      std::memcpy(&a, cpu.data() + 2 * k, 2);
      std::memcpy(&b, ref.data() + 2 * k, 2);
      got = static_cast<float>(a), want = static_cast<float>(b);
      if (close_enough(got, want, tolerance(type).atol, tolerance(type).rtol)) continue;
    } else {
      if (std::memcmp(cpu.data(), ref.data(), cpu.size()) == 0) return "";
      return "output '" + name + "' (" + data_type_name(type) + "): cpu and reference differ";
    }
    return "output '" + name + "' element " + std::to_string(k) + ": cpu " + std::to_string(got) +
           ", reference " + std::to_string(want);
  }
  return "";
}

// Graphs the fuzzer runs stay small, so each execution takes microseconds: 64 KiB of operands
// (16K float32 elements) still reach every kernel's vector body and tail, with ASan on.
constexpr uint64_t kMaxRunBytes = uint64_t{1} << 16;

struct RunResult {
  Status status;
  std::vector<std::vector<uint8_t>> outputs;
};

RunResult run_on(const Context& ctx, const Graph& graph,
                 const std::vector<std::vector<uint8_t>>& inputs) {
  RunResult res;
  auto compiled = ctx.compile(graph);
  if (!compiled) {
    res.status = compiled.status();
    return res;
  }
  std::vector<std::shared_ptr<Tensor>> keep;
  std::vector<TensorBinding> in, out;
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    const Operand& op = graph.operands[graph.inputs[k]];
    auto t = ctx.create_tensor(op.desc.data_type, static_sizes(op.desc.shape), false, true, false);
    if (!t) return {t.status(), {}};
    uint64_t count = *element_count(op.desc.shape);
    Status s = ctx.write_tensor(**t, inputs[k].data(), inputs[k].size(), count);
    if (!s.is_ok()) return {s, {}};
    in.push_back({op.name, t->get()});
    keep.push_back(*t);
  }
  for (const NamedOperand& o : graph.outputs) {
    const OperandDesc& d = graph.desc(o.id);
    auto t = ctx.create_tensor(d.data_type, static_sizes(d.shape), true, false, false);
    if (!t) return {t.status(), {}};
    out.push_back({o.name, t->get()});
    keep.push_back(*t);
  }
  res.status = ctx.dispatch(**compiled, in, out);
  if (!res.status.is_ok()) return res;
  for (const TensorBinding& b : out) {
    auto bytes = ctx.read_tensor(*b.tensor);
    if (!bytes) return {bytes.status(), {}};
    res.outputs.push_back(std::move(*bytes));
  }
  return res;
}

// float16 bytes as float32 bytes, and back (rounded to nearest even).
std::vector<uint8_t> widened_bytes(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out(size / 2 * 4);
  for (size_t i = 0; i + 2 <= size; i += 2) {
    float16 h;
    std::memcpy(&h, data + i, 2);
    const float f = static_cast<float>(h);
    std::memcpy(out.data() + i * 2, &f, 4);
  }
  return out;
}

std::vector<uint8_t> narrowed_bytes(const std::vector<uint8_t>& wide) {
  std::vector<uint8_t> out(wide.size() / 2);
  for (size_t i = 0; i + 4 <= wide.size(); i += 4) {
    float f;
    std::memcpy(&f, wide.data() + i, 4);
    const float16 h = static_cast<float16>(f);
    std::memcpy(out.data() + i / 2, &h, 2);
  }
  return out;
}

// The float inputs scaled by `factor` (the others unchanged).
std::vector<std::vector<uint8_t>> nudged(const Graph& graph,
                                         const std::vector<std::vector<uint8_t>>& inputs,
                                         float factor) {
  std::vector<std::vector<uint8_t>> out = inputs;
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    DataType type = graph.operands[graph.inputs[k]].desc.data_type;
    std::vector<uint8_t>& bytes = out[k];
    if (type == DataType::kFloat32) {
      for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        float v;
        std::memcpy(&v, bytes.data() + i, 4);
        v *= factor;
        std::memcpy(bytes.data() + i, &v, 4);
      }
    } else if (type == DataType::kFloat16) {
      for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
        float16 h;
        std::memcpy(&h, bytes.data() + i, 2);
        // float16 steps are 2^-10 relative: nudge by one of them.
        h = static_cast<float16>(static_cast<float>(h) * (factor > 1 ? 1.001f : 0.999f));
        std::memcpy(bytes.data() + i, &h, 2);
      }
    }
  }
  return out;
}

std::string graph_text(const Graph& g) {
  auto text = format_graph(g);
  if (text) return *text;
  // A NaN option has no text form: the nodes then as op(operand ids) -> ids, with the types.
  std::string out = "(cannot print: " + text.status().message() + ")\n";
  for (size_t id = 0; id < g.operands.size(); ++id) {
    const Operand& op = g.operands[id];
    out += "  operand " + std::to_string(id) + ": " + data_type_name(op.desc.data_type) + " " +
           (op.kind == OperandKind::kInput      ? "input"
            : op.kind == OperandKind::kConstant ? "constant"
                                                : "value") +
           "\n";
  }
  for (const Node& node : g.nodes) {
    out += "  " + std::string(op_spec_name(node.kind)) + "(";
    for (OperandId in : node.inputs()) out += std::to_string(in) + " ";
    out += ") -> " + std::to_string(node.outputs[0]) + "\n";
  }
  return out;
}

// The value of every float operand of a graph (inputs, constants, node results) on both
// backends, as doubles indexed by operand id; empty for the other types. The node results come
// from a copy of the graph that outputs all of them (fusion never changes results, so they are
// the values the graph computed).
struct Probe {
  bool ok = false;
  std::vector<std::vector<double>> ref, cpu;
};

std::vector<double> float_values(DataType type, const uint8_t* bytes, size_t size) {
  std::vector<double> out;
  if (type == DataType::kFloat32) {
    for (size_t i = 0; i + 4 <= size; i += 4) {
      float v;
      std::memcpy(&v, bytes + i, 4);
      out.push_back(v);
    }
  } else if (type == DataType::kFloat16) {
    for (size_t i = 0; i + 2 <= size; i += 2) {
      float16 v;
      std::memcpy(&v, bytes + i, 2);
      out.push_back(static_cast<float>(v));
    }
  }
  return out;
}

Probe probe(const Contexts& ctx, const Graph& graph,
            const std::vector<std::vector<uint8_t>>& inputs) {
  Probe p;
  Graph all = graph;
  std::vector<bool> is_output(graph.operands.size(), false);
  for (const NamedOperand& o : graph.outputs) is_output[o.id] = true;
  for (size_t id = 0; id < graph.operands.size(); ++id) {
    const Operand& op = graph.operands[id];
    if (op.kind == OperandKind::kOutput && is_float(op.desc.data_type) && !is_output[id]) {
      all.outputs.push_back({"probe" + std::to_string(id), static_cast<OperandId>(id)});
    }
  }
  RunResult ref = run_on(*ctx.reference, all, inputs);
  RunResult cpu = run_on(*ctx.cpu, all, inputs);
  if (!ref.status.is_ok() || !cpu.status.is_ok()) return p;
  p.ref.resize(graph.operands.size());
  p.cpu.resize(graph.operands.size());
  for (size_t k = 0; k < all.outputs.size(); ++k) {
    OperandId id = all.outputs[k].id;
    DataType type = graph.desc(id).data_type;
    p.ref[id] = float_values(type, ref.outputs[k].data(), ref.outputs[k].size());
    p.cpu[id] = float_values(type, cpu.outputs[k].data(), cpu.outputs[k].size());
  }
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    OperandId id = graph.inputs[k];
    p.ref[id] = p.cpu[id] =
        float_values(graph.desc(id).data_type, inputs[k].data(), inputs[k].size());
  }
  for (size_t id = 0; id < graph.operands.size(); ++id) {
    const Operand& op = graph.operands[id];
    if (op.kind == OperandKind::kConstant && op.constant) {
      p.ref[id] = p.cpu[id] =
          float_values(op.desc.data_type, op.constant->data(), op.constant->size());
    }
  }
  p.ok = true;
  return p;
}

// The nodes `id` depends on (its producer and theirs), as a flag per node index.
std::vector<bool> upstream_nodes(const Graph& graph, OperandId id) {
  std::vector<bool> seen(graph.nodes.size(), false);
  std::vector<OperandId> todo{id};
  while (!todo.empty()) {
    const Operand& op = graph.operands[todo.back()];
    todo.pop_back();
    if (op.kind != OperandKind::kOutput || op.producer < 0 || seen[op.producer]) continue;
    seen[op.producer] = true;
    for (OperandId in : graph.nodes[op.producer].inputs()) todo.push_back(in);
  }
  return seen;
}

// The flat index into an operand of shape `in` that numpy broadcasting reads for element `flat`
// of a result of shape `out`.
uint64_t broadcast_index(uint64_t flat, const std::vector<int64_t>& out,
                         const std::vector<int64_t>& in) {
  uint64_t index = 0, stride = 1;
  size_t lead = out.size() - in.size();
  for (size_t d = out.size(); d-- > 0;) {
    uint64_t i = flat % static_cast<uint64_t>(out[d]);
    flat /= static_cast<uint64_t>(out[d]);
    if (d < lead) continue;
    int64_t n = in[d - lead];
    if (n != 1) index += i * stride;
    stride *= static_cast<uint64_t>(n);
  }
  return index;
}

bool is_comparison(OpKind kind) {
  switch (kind) {
    case OpKind::kEqual:
    case OpKind::kNotEqual:
    case OpKind::kGreater:
    case OpKind::kGreaterOrEqual:
    case OpKind::kLesser:
    case OpKind::kLesserOrEqual:
      return true;
    default:
      return false;
  }
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Why a difference in `output` says nothing about the cpu kernels, or "" when it does. Two
// classes of graphs compute legitimately different float32 results on the two backends:
//  * a value of magnitude >= 2^60 upstream: its products (>= 2^120, summed) leave float32's
//    range, where the cpu accumulates in float32 and the reference in double (a gemm of such
//    values is inf · 0 = NaN on the cpu, 0 on the reference);
//  * a comparison at (near) equality: its operands are within the tolerance of each other on
//    the reference and the cpu computed one of them differently (gelu(5.375) is 5.375 on the
//    reference, 1 ulp less on the cpu: lesserOrEqual(x, gelu(x)) flips).
std::string false_alarm(const Graph& graph, const Probe& p, OperandId output) {
  constexpr double kHuge = 1152921504606846976.0;  // 2^60
  std::vector<bool> nodes = upstream_nodes(graph, output);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!nodes[n]) continue;
    const Node& node = graph.nodes[n];
    for (OperandId id : node.outputs) {
      for (double v : p.ref[id]) {
        if (std::isfinite(v) && std::fabs(v) >= kHuge) return "float32 range";
      }
    }
    if (!is_comparison(node.kind)) continue;
    const BinaryParams& args = node.as<BinaryParams>();
    OperandId a = args.a.id, b = args.b.id;
    DataType type = graph.desc(a).data_type;
    if (!is_float(type)) continue;
    std::vector<int64_t> out = static_sizes(graph.desc(node.outputs[0]).shape);
    std::vector<int64_t> sa = static_sizes(graph.desc(a).shape);
    std::vector<int64_t> sb = static_sizes(graph.desc(b).shape);
    uint64_t count = *element_count(out);
    Tolerance tol = tolerance(type);
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t ia = broadcast_index(k, out, sa), ib = broadcast_index(k, out, sb);
      if (ia >= p.ref[a].size() || ib >= p.ref[b].size()) continue;
      double ra = p.ref[a][ia], rb = p.ref[b][ib];
      if (!close_enough(ra, rb, tol.atol, tol.rtol)) continue;
      if (!same_value(p.cpu[a][ia], ra) || !same_value(p.cpu[b][ib], rb)) {
        return "comparison at equality";
      }
    }
  }
  return "";
}

// The float16 graphs' oracle. The cpu backend computes a float16 graph in float32 between its
// edges (graph/passes/float16_promotion.cc), the reference rounds to float16 after every op:
// the two agree within the tolerance except where the graph amplifies that rounding — an op
// discontinuous at the value (sign(gelu(-13.5)): -0 in float16, -1e-40 in float32; floor,
// comparisons, pow of a negative base at an integer exponent), an ill-conditioned chain
// (tan(4 log c) near a pole), an intermediate beyond float16's 65504. The same graph with every
// float16 value float32 (constants and inputs widened, a cast to float16 rounding and widened
// again), run on the reference and its float16 outputs rounded, is what the promotion computes.
Graph widened(const Graph& graph) {
  Graph g = graph;
  std::vector<bool> rounds(g.operands.size(), false);  // results of casts to float16
  for (const Node& node : g.nodes) {
    if (node.kind == OpKind::kCast && node.as<CastParams>().data_type == DataType::kFloat16) {
      rounds[node.outputs[0]] = true;
    }
  }
  for (size_t id = 0; id < g.operands.size(); ++id) {
    Operand& op = g.operands[id];
    if (op.desc.data_type != DataType::kFloat16 || rounds[id]) continue;
    op.desc.data_type = DataType::kFloat32;
    if (op.constant) {
      op.constant =
          std::make_shared<ConstantData>(widened_bytes(op.constant->data(), op.constant->size()));
    }
  }
  // A cast to float16 still rounds, as in the promotion: its float16 result is widened by a
  // cast for its readers (graph outputs read it as it is).
  std::vector<Node> nodes;
  for (Node& node : g.nodes) {
    nodes.push_back(std::move(node));
    const OperandId rounded = nodes.back().outputs[0];
    if (nodes.back().kind != OpKind::kCast || !rounds[rounded]) continue;
    const OperandId wide = static_cast<OperandId>(g.operands.size());
    Operand value;
    value.desc = {DataType::kFloat32, g.operands[rounded].desc.shape};
    g.operands.push_back(value);
    for (Node& reader : g.nodes) {  // the nodes not moved yet: the readers
      for_each_operand(reader.params, [&](OperandRef& r) {
        if (r.id == rounded) r.id = wide;
      });
    }
    nodes.push_back(
        {OpKind::kCast, "", CastParams{OperandRef{rounded}, DataType::kFloat32}, {wide}});
  }
  g.nodes = std::move(nodes);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (OperandId id : g.nodes[n].outputs) g.operands[id].producer = static_cast<int32_t>(n);
  }
  return g;
}

// Whether a difference of output `output` between the cpu and the reference is explained by
// float16 rounding: the cpu's result equals that of widened(graph) on the reference (float16
// outputs rounded), or equals widened(graph) on the cpu — the promotion computed what float32
// computes — and the float32 rules (false_alarm) explain the float32 difference (a comparison
// at equality: lesserOrEqual(x, gelu(x)) with gelu 1 ulp apart).
bool float16_rounding(const Contexts& ctx, const Graph& graph,
                      const std::vector<std::vector<uint8_t>>& inputs, const RunResult& cpu,
                      size_t output) {
  std::vector<std::vector<uint8_t>> wide_inputs = inputs;
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    if (graph.desc(graph.inputs[k]).data_type == DataType::kFloat16) {
      wide_inputs[k] = widened_bytes(inputs[k].data(), inputs[k].size());
    }
  }
  const Graph wide = widened(graph);
  const OperandDesc& d = graph.desc(graph.outputs[output].id);
  const uint64_t count = *element_count(static_sizes(d.shape));
  auto matches = [&](const RunResult& r) {
    if (!r.status.is_ok()) return false;
    std::vector<uint8_t> want = r.outputs[output];
    if (wide.desc(wide.outputs[output].id).data_type != d.data_type) want = narrowed_bytes(want);
    return compare(graph.outputs[output].name, d.data_type, cpu.outputs[output], want, count)
        .empty();
  };
  if (matches(run_on(*ctx.reference, wide, wide_inputs))) return true;
  if (!matches(run_on(*ctx.cpu, wide, wide_inputs))) return false;
  const Probe p = probe(ctx, wide, wide_inputs);
  return p.ok && !false_alarm(wide, p, wide.outputs[output].id).empty();
}

bool has_float16(const Graph& graph) {
  for (const Operand& op : graph.operands) {
    if (op.desc.data_type == DataType::kFloat16) return true;
  }
  return false;
}

// What the inputs did (docs/reliability.md): printed every 2^20 inputs when
// WEBNN_FUZZ_STATS is set (tools/fuzz.sh sets it), so a run shows how many inputs got as
// far as the comparison of both backends.
struct Stats {
  uint64_t inputs = 0, built = 0, ran = 0;
  uint64_t out_of_range = 0, ties = 0, float16 = 0;  // differences false_alarm() explained
};
Stats stats;

void count_input() {
  if ((++stats.inputs & 0xFFFFF) == 0 && std::getenv("WEBNN_FUZZ_STATS") != nullptr) {
    std::fprintf(stderr,
                 "builder stats: inputs %llu, built %llu, ran on both backends %llu, "
                 "not compared: float32 range %llu, comparison at equality %llu, "
                 "float16 rounding %llu\n",
                 static_cast<unsigned long long>(stats.inputs),
                 static_cast<unsigned long long>(stats.built),
                 static_cast<unsigned long long>(stats.ran),
                 static_cast<unsigned long long>(stats.out_of_range),
                 static_cast<unsigned long long>(stats.ties),
                 static_cast<unsigned long long>(stats.float16));
  }
}

}  // namespace

std::string run_builder(const uint8_t* data, size_t size) {
  count_input();
  Reader r(data, size);
  const Contexts& ctx = contexts();
  auto builder = ctx.cpu->create_graph_builder();
  std::vector<OperandId> pool;
  std::vector<std::vector<uint8_t>> input_data;
  unsigned n_inputs = 1 + r.pick(3);
  for (unsigned k = 0; k < n_inputs; ++k) {
    DataType type = pick_type(r);
    Shape shape = pick_shape(r);
    auto id = builder->input("in" + std::to_string(k), shape, type);
    if (!id) return check_status(id.status(), "input");
    pool.push_back(*id);
    input_data.push_back(tensor_bytes(r, type, *element_count(shape)));
  }
  unsigned n_consts = r.pick(3);
  for (unsigned k = 0; k < n_consts; ++k) {
    OperandDesc desc{pick_type(r), pick_shape(r)};
    auto id = builder->constant(desc, tensor_bytes(r, desc.data_type, *element_count(desc.shape)));
    if (!id) return check_status(id.status(), "constant");
    pool.push_back(*id);
  }
  std::vector<OperandId> results;
  unsigned n_ops = 1 + r.pick(6);
  for (unsigned k = 0; k < n_ops && !r.done(); ++k) {
    auto kind = static_cast<OpKind>(r.pick(kOpCount));
    OpParams params = default_params(kind);
    FieldFiller filler{r, pool};
    visit_params(params, filler);
    auto outs = builder->add_op(kind, std::move(params));
    if (!outs) {
      if (std::string f = check_status(outs.status(), op_spec_name(kind)); !f.empty()) return f;
      continue;
    }
    for (OperandId id : *outs) {
      pool.push_back(id);
      results.push_back(id);
    }
  }
  if (results.empty()) return "";
  // The last result is always an output; earlier ones sometimes too.
  std::vector<NamedOperand> outputs{{"out0", results.back()}};
  for (size_t k = 0; k + 1 < results.size(); ++k) {
    if (r.chance(25)) outputs.push_back({"out" + std::to_string(outputs.size()), results[k]});
  }
  auto graph = builder->finish(outputs);
  if (!graph) return check_status(graph.status(), "build");
  uint64_t total = 0;
  for (const Operand& op : graph->operands) {
    auto count = element_count(static_sizes(op.desc.shape));
    if (!count) return "build accepted an operand whose size overflows";
    total += *storage_bytes(op.desc.data_type, *count);
    if (total > kMaxRunBytes) return "";
  }
  ++stats.built;
  RunResult ref = run_on(*ctx.reference, *graph, input_data);
  RunResult cpu = run_on(*ctx.cpu, *graph, input_data);
  if (ref.status.is_ok() && cpu.status.is_ok()) ++stats.ran;
  if (!ref.status.is_ok() || !cpu.status.is_ok()) {
    for (const Status* s : {&ref.status, &cpu.status}) {
      if (std::string f = check_status(*s, "dispatch"); !f.empty())
        return f + "\n" + graph_text(*graph);
    }
    if (ref.status.is_ok() != cpu.status.is_ok()) {
      return "cpu and reference disagree on whether the graph runs: reference '" +
             ref.status.message() + "', cpu '" + cpu.status.message() + "'\n" + graph_text(*graph);
    }
    return "";
  }
  std::optional<Probe> probed;  // computed at the first difference
  for (size_t k = 0; k < graph->outputs.size(); ++k) {
    const OperandDesc& d = graph->desc(graph->outputs[k].id);
    uint64_t count = *element_count(static_sizes(d.shape));
    std::string f =
        compare(graph->outputs[k].name, d.data_type, cpu.outputs[k], ref.outputs[k], count);
    if (f.empty()) continue;
    if (!probed.has_value()) probed = probe(ctx, *graph, input_data);
    if (probed->ok) {
      std::string why = false_alarm(*graph, *probed, graph->outputs[k].id);
      if (!why.empty()) {
        ++(why == "float32 range" ? stats.out_of_range : stats.ties);
        if (std::getenv("WEBNN_FUZZ_EXPLAIN") != nullptr) {
          std::fprintf(stderr, "builder: not compared (%s): %s\n", why.c_str(), f.c_str());
        }
        continue;
      }
    }
    if (has_float16(*graph) && float16_rounding(ctx, *graph, input_data, cpu, k)) {
      ++stats.float16;
      if (std::getenv("WEBNN_FUZZ_EXPLAIN") != nullptr) {
        std::fprintf(stderr, "builder: not compared (float16 rounding): %s\n", f.c_str());
      }
      continue;
    }
    // An ill-conditioned chain (tan(tan(8 * sigmoid(x))) near a pole) turns float32 rounding
    // into any difference: when the reference itself moves beyond the tolerance for inputs
    // nudged by a few float ulps, the comparison says nothing about the cpu kernels.
    for (float factor : {1.0f + 4e-7f, 1.0f - 4e-7f}) {
      RunResult moved = run_on(*ctx.reference, *graph, nudged(*graph, input_data, factor));
      if (moved.status.is_ok() &&
          !compare(graph->outputs[k].name, d.data_type, moved.outputs[k], ref.outputs[k], count)
               .empty()) {
        f.clear();
        break;
      }
    }
    if (!f.empty()) return f + "\n" + graph_text(*graph);
  }
  return "";
}

}  // namespace webnn::fuzz
