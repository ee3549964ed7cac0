#include "webnn/context.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "backends/backend.h"
#include "backends/registry.h"
#include "core/thread_pool.h"
#include "graph/passes/pass.h"
#include "runtime/plan.h"
#include "webnn/builder.h"
#include "webnn/stats.h"

namespace webnn {

uint64_t Tensor::element_count() const {
  uint64_t n = 1;
  for (int64_t d : shape_) n *= static_cast<uint64_t>(d);
  return n;
}

uint64_t Tensor::byte_length() const {
  auto bytes = storage_bytes(data_type_, element_count());
  return bytes ? *bytes : 0;
}

void Tensor::destroy() {
  std::unique_lock lock(access_);
  destroyed_.store(true, std::memory_order_release);
  AlignedBytes().swap(storage_);
}

CompiledGraph::~CompiledGraph() = default;

std::vector<std::string> CompiledGraph::input_names() const {
  std::vector<std::string> names;
  for (OperandId id : graph_.inputs) names.push_back(graph_.operands[id].name);
  return names;
}

std::vector<std::string> CompiledGraph::output_names() const {
  std::vector<std::string> names;
  for (const NamedOperand& o : graph_.outputs) names.push_back(o.name);
  return names;
}

std::vector<std::string> Context::backend_names() {
  std::vector<std::string> names;
  for (const Backend* b : registered_backends()) names.push_back(b->name());
  return names;
}

Expected<std::shared_ptr<Context>> Context::create(const std::string& power_preference,
                                                   bool accelerated, const std::string& backend) {
  if (power_preference != "default" && power_preference != "high-performance" &&
      power_preference != "low-power") {
    return make_error(ErrorKind::kValue, "create_context: power_preference must be one of ",
                      "'default', 'high-performance', 'low-power' (got '", power_preference, "')");
  }
  std::vector<const Backend*> candidates;
  if (backend == "auto") {
    candidates = registered_backends();
  } else if (const Backend* b = find_backend(backend)) {
    candidates = {b};
  } else {
    std::string names = "'auto'";
    for (const std::string& n : backend_names()) names += ", '" + n + "'";
    return make_error(ErrorKind::kValue, "create_context: unknown backend '", backend,
                      "' (accepted: ", names, ")");
  }
  // spec/api.md §6.2: GPU for default/high-performance, NPU for default/low-power, else CPU.
  auto first_of = [&](DeviceKind kind) -> const Backend* {
    for (const Backend* b : candidates) {
      if (b->device_kind() == kind) return b;
    }
    return nullptr;
  };
  const Backend* chosen = nullptr;
  if (accelerated && power_preference != "low-power") chosen = first_of(DeviceKind::kGpu);
  if (!chosen && accelerated && power_preference != "high-performance") {
    chosen = first_of(DeviceKind::kNpu);
  }
  if (!chosen) chosen = first_of(DeviceKind::kCpu);
  if (!chosen) {
    return make_error(ErrorKind::kRuntime, "create_context: No backend available for '", backend,
                      "'");
  }
  auto ctx = std::make_shared<Context>();
  ctx->backend_ = chosen;
  ctx->power_preference_ = power_preference;
  ctx->pool_ = std::make_unique<ThreadPool>(default_thread_count());
  return ctx;
}

namespace {
std::atomic<uint64_t> next_context_id{1};
}  // namespace

Context::Context()
    : id_(next_context_id.fetch_add(1)), constant_store_(std::make_shared<ConstantStore>()) {}

size_t Context::stored_constants() const { return constant_store_->live_constants(); }
uint64_t Context::stored_constant_bytes() const { return constant_store_->live_constant_bytes(); }

bool Tensor::owned_by(const Context& ctx) const { return owner_id_ == ctx.id_; }
bool CompiledGraph::owned_by(const Context& ctx) const { return owner_id_ == ctx.id_; }
Context::~Context() = default;

int Context::num_threads() const { return pool_ ? pool_->num_threads() : 1; }

bool Context::accelerated() const { return backend_->device_kind() != DeviceKind::kCpu; }
const char* Context::backend_name() const { return backend_->name(); }

std::shared_ptr<GraphBuilder> Context::create_graph_builder() const {
  const Backend* backend = backend_;
  return std::make_shared<GraphBuilder>(
      [backend](OpKind kind, const char* field, DataTypeMask schema_types) {
        return backend->supported_types(kind, field, schema_types);
      });
}

namespace {

// WEBNN_PASSES: "all" (default), "none", or a comma-separated list of pass names
// (graph/passes/pass.h); WEBNN_MEMORY_PLAN=none gives every intermediate its own buffer.
// Both exist to compare optimised and unoptimised execution.
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

bool memory_plan_enabled() { return env_or("WEBNN_MEMORY_PLAN", "all") != "none"; }

// A node's name in profiles, its fused stages first (Node::depthwise_input, and inside it
// Node::expansion_input, which may have a depthwise stage of its own):
// "conv2d+hardSwish>conv2d+hardSwish>conv2d+add" for expansion > depthwise > projection.
std::string fused_op_name(const Node& node) {
  std::string name = op_spec_name(node.kind);
  for (const Node::Step& step : node.epilogue)
    name += std::string("+") + op_spec_name(step.op.kind);
  if (node.depthwise_input) name = fused_op_name(*node.depthwise_input) + ">" + name;
  if (node.expansion_input) name = fused_op_name(*node.expansion_input) + ">" + name;
  return name;
}

int64_t fused_step_count(const Node& node) {
  int64_t n = static_cast<int64_t>(node.epilogue.size());
  if (node.depthwise_input) n += fused_step_count(*node.depthwise_input);
  if (node.expansion_input) n += fused_step_count(*node.expansion_input);
  return n;
}

}  // namespace

CompileStats CompiledGraph::stats() const {
  std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(mutex_));
  CompileStats s = stats_;
  s.plans = plans_.size();
  s.shared_constants = constants_ ? constants_->size() : 0;
  s.reused_prepared = constants_ ? constants_->reused() : 0;
  return s;
}

void CompiledGraph::set_profiling(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  profiling_ = on;
  for (auto& [key, cached] : plans_) {
    cached.plan->node_ns.clear();
    cached.plan->profiled_runs = 0;
  }
}

Profile CompiledGraph::profile() const {
  std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(mutex_));
  Profile out;
  const Plan* latest = nullptr;
  uint64_t latest_use = 0;
  for (const auto& [key, cached] : plans_) {
    if (cached.plan->profiled_runs > 0 && cached.last_use >= latest_use) {
      latest = cached.plan.get();
      latest_use = cached.last_use;
    }
  }
  if (!latest) return out;
  out.runs = latest->profiled_runs;
  Graph concrete = optimized_;  // FLOPs at the shapes this plan ran, not the declared maxima
  for (size_t id = 0; id < concrete.operands.size(); ++id) {
    concrete.operands[id].desc = latest->descs[id];
  }
  std::map<OperandId, std::string> names;
  for (const NamedOperand& o : optimized_.outputs) names[o.id] = o.name;
  for (size_t i = 0; i < optimized_.nodes.size(); ++i) {
    const Node& node = optimized_.nodes[i];
    NodeProfile n;
    n.op = fused_op_name(node);
    if (!node.outputs.empty()) {
      const OperandId id = node.outputs[0];
      auto name = names.find(id);
      n.output = name != names.end() ? name->second : optimized_.operands[id].name;
      n.shape = static_sizes(latest->descs[id].shape);
    }
    n.flops = node_flops(concrete, node);
    n.total_ns = i < latest->node_ns.size() ? latest->node_ns[i] : 0;
    out.nodes.push_back(std::move(n));
  }
  return out;
}

Expected<std::shared_ptr<CompiledGraph>> Context::compile(Graph graph) const {
  auto compiled = std::make_shared<CompiledGraph>();
  compiled->optimized_ = graph;
  compiled->graph_ = std::move(graph);
  compiled->owner_ = this;
  compiled->owner_id_ = id_;
  // Each constant becomes the context's equal one when another graph holds it already (the
  // builder's copy is then released with the builder); its bytes are counted.
  auto share_constants = [](ConstantStore& store, CompiledGraph& compiled) {
    std::map<const ConstantData*, std::shared_ptr<const ConstantData>> seen;
    auto share = [&](Graph& g, bool count) {
      for (Operand& op : g.operands) {
        if (!op.constant) continue;
        auto it = seen.find(op.constant.get());
        if (it != seen.end()) {
          op.constant = it->second;
          continue;
        }
        bool reused = false;
        std::shared_ptr<const ConstantData> shared = store.intern(op.constant, &reused);
        if (count) {
          compiled.stats_.constant_bytes += shared->size();
          if (reused) compiled.stats_.reused_constant_bytes += shared->size();
        }
        seen.emplace(op.constant.get(), shared);
        op.constant = std::move(shared);
      }
    };
    share(compiled.optimized_, true);
    share(compiled.graph_, false);
  };
  compiled->constants_ = std::make_shared<ConstantCache>(constant_store_);
  auto report = optimize(compiled->optimized_, backend_->name(), env_or("WEBNN_PASSES", "all"));
  if (!report) return report.status();
  share_constants(*constant_store_, *compiled);
  compiled->stats_.nodes_before = report->nodes_before;
  compiled->stats_.nodes_after = report->nodes_after;
  for (const PassCount& c : report->passes)
    compiled->stats_.passes.emplace_back(c.pass, c.rewrites);
  const Graph& exec = compiled->optimized_;
  for (const Node& node : exec.nodes) {
    ++compiled->stats_.ops_after[op_spec_name(node.kind)];
    compiled->stats_.fused_steps += fused_step_count(node);
  }
  bool is_static = true;
  for (const Operand& op : exec.operands) {
    if (!is_static_shape(op.desc.shape)) is_static = false;
  }
  if (is_static) {
    // Static graphs get their only plan now so compile errors surface at build().
    std::vector<OperandDesc> descs;
    for (const Operand& op : exec.operands) descs.push_back(op.desc);
    auto plan = build_plan(exec, *backend_, std::move(descs), memory_plan_enabled(),
                           compiled->constants_.get());
    if (!plan) return Status(ErrorKind::kNotSupported, plan.status().message());
    compiled->stats_.arena_bytes = (*plan)->arena.size();
    compiled->stats_.unshared_bytes = (*plan)->unshared_bytes;
    compiled->plans_[{}] = {std::move(*plan), 0};
  } else {
    for (const Node& node : exec.nodes) {
      auto kernel = backend_->compile(node, CompileContext());
      if (!kernel) return Status(ErrorKind::kNotSupported, kernel.status().message());
    }
  }
  return compiled;
}

Status Context::check_tensor(const Tensor& tensor, const char* method) const {
  if (tensor.destroyed()) {
    return make_error(ErrorKind::kState, method, ": tensor has been destroyed");
  }
  if (!tensor.owned_by(*this)) {
    return make_error(ErrorKind::kRuntime, method, ": tensor belongs to another context");
  }
  return Status::ok();
}

namespace {

Status check_tensor_shape(const std::vector<int64_t>& shape, const char* method) {
  if (shape.size() > kMaxRank) {
    return make_error(ErrorKind::kValue, method, ": rank ", shape.size(), " exceeds ", kMaxRank);
  }
  for (int64_t d : shape) {
    if (d < 0) return make_error(ErrorKind::kOverflow, method, ": negative dimension ", d);
    if (d > kMaxDimension) {
      return make_error(ErrorKind::kValue, method, ": dimension ", d, " is out of range");
    }
  }
  return Status::ok();
}

}  // namespace

Expected<std::shared_ptr<Tensor>> Context::create_tensor(DataType data_type,
                                                         const std::vector<int64_t>& shape,
                                                         bool readable, bool writable,
                                                         bool exportable_to_gpu) const {
  WEBNN_RETURN_IF_ERROR(check_tensor_shape(shape, "create_tensor"));
  // Eight dimensions in range can still overflow 64 bits: the message names the method.
  Expected<uint64_t> count = element_count(shape);
  if (!count) {
    return Status(count.status().kind(), str_cat("create_tensor: ", count.status().message()));
  }
  Expected<uint64_t> sized = storage_bytes(data_type, *count);
  if (!sized) {
    return Status(sized.status().kind(), str_cat("create_tensor: ", sized.status().message()));
  }
  const uint64_t bytes = *sized;
  auto t = std::make_shared<Tensor>();
  t->data_type_ = data_type;
  t->shape_ = shape;
  WEBNN_RETURN_IF_ERROR(allocate_zeroed(t->storage_, bytes, "create_tensor"));
  t->readable_ = readable;
  t->writable_ = writable;
  t->exportable_to_gpu_ = exportable_to_gpu;
  t->owner_ = this;
  t->owner_id_ = id_;
  return t;
}

Status Context::check_writable(const Tensor& tensor) const {
  WEBNN_RETURN_IF_ERROR(check_tensor(tensor, "write_tensor"));
  if (!tensor.writable()) {
    return make_error(ErrorKind::kRuntime, "write_tensor: tensor is not writable");
  }
  return Status::ok();
}

Status Context::write_tensor(Tensor& tensor, const uint8_t* bytes, uint64_t nbytes,
                             uint64_t count) const {
  std::unique_lock lock(tensor.access_);
  WEBNN_RETURN_IF_ERROR(check_writable(tensor));
  if (count != tensor.element_count() || nbytes != tensor.byte_length()) {
    return make_error(ErrorKind::kValue, "write_tensor: Shape mismatch: data has ", count,
                      " elements, tensor shape ", shape_to_string(tensor.shape()), " has ",
                      tensor.element_count());
  }
  // Empty tensors have no storage (null data): memcpy must not see a null pointer (UBSan).
  if (nbytes > 0) std::memcpy(tensor.data(), bytes, nbytes);
  return Status::ok();
}

Expected<std::vector<uint8_t>> Context::read_tensor(const Tensor& tensor) const {
  std::shared_lock lock(tensor.access_);
  WEBNN_RETURN_IF_ERROR(check_readable(tensor));
  std::vector<uint8_t> bytes(tensor.byte_length());
  if (!bytes.empty()) std::memcpy(bytes.data(), tensor.data(), bytes.size());
  return bytes;
}

Status Context::check_readable(const Tensor& tensor) const {
  WEBNN_RETURN_IF_ERROR(check_tensor(tensor, "read_tensor"));
  if (!tensor.readable()) {
    return make_error(ErrorKind::kRuntime, "read_tensor: tensor is not readable");
  }
  return Status::ok();
}

Status Context::read_tensor_into(const Tensor& tensor, uint8_t* dst, uint64_t nbytes) const {
  std::shared_lock lock(tensor.access_);
  WEBNN_RETURN_IF_ERROR(check_readable(tensor));
  if (nbytes != tensor.byte_length()) {
    return make_error(ErrorKind::kValue, "read_tensor: destination holds ", nbytes,
                      " bytes, the tensor ", tensor.byte_length());
  }
  // Empty tensors have no storage (null data): memcpy must not see a null pointer (UBSan).
  if (nbytes > 0) std::memcpy(dst, tensor.data(), nbytes);
  return Status::ok();
}

Status Context::resize_tensor(Tensor& tensor, const std::vector<int64_t>& shape) const {
  std::unique_lock lock(tensor.access_);
  WEBNN_RETURN_IF_ERROR(check_tensor(tensor, "resize_tensor"));
  WEBNN_RETURN_IF_ERROR(check_tensor_shape(shape, "resize_tensor"));
  WEBNN_ASSIGN_OR_RETURN(uint64_t count, element_count(shape));
  WEBNN_ASSIGN_OR_RETURN(uint64_t bytes, storage_bytes(tensor.data_type(), count));
  uint64_t old_bytes = tensor.byte_length();
  if (bytes > tensor.capacity()) {
    WEBNN_RETURN_IF_ERROR(allocate_zeroed(tensor.storage_, bytes, "resize_tensor"));
  }
  // Newly exposed bytes read as zero, even when they were used before a shrink.
  if (bytes > old_bytes) std::memset(tensor.data() + old_bytes, 0, bytes - old_bytes);
  tensor.shape_ = shape;
  return Status::ok();
}

Status Context::set_tensor_capacity(Tensor& tensor, const std::vector<int64_t>& max_shape) const {
  std::unique_lock lock(tensor.access_);
  WEBNN_RETURN_IF_ERROR(check_tensor(tensor, "set_tensor_capacity"));
  WEBNN_RETURN_IF_ERROR(check_tensor_shape(max_shape, "set_tensor_capacity"));
  WEBNN_ASSIGN_OR_RETURN(uint64_t count, element_count(max_shape));
  WEBNN_ASSIGN_OR_RETURN(uint64_t bytes, storage_bytes(tensor.data_type(), count));
  if (bytes > tensor.capacity()) {
    WEBNN_RETURN_IF_ERROR(allocate_zeroed(tensor.storage_, bytes, "set_tensor_capacity"));
  }
  return Status::ok();
}

namespace {

// Derived dimensions (spec/api.md §11.4) are named by expressions such as "past + 1" or
// "2*seq"; user names are identifiers and never contain a space or '*'.
bool is_derived_name(const std::string& name) {
  return name.find_first_of(" *") != std::string::npos;
}

// Binds the dynamic dimensions of the graph inputs/outputs from the tensors' shapes
// (spec/api.md §11.5) and checks static dims and ranks.
using BoundShapes = std::vector<std::pair<OperandId, std::vector<int64_t>>>;

Status bind_dims(const Graph& graph, const BoundShapes& all, DimBindings& bindings) {
  for (const auto& [id, got] : all) {
    const Operand& op = graph.operands[id];
    const Shape& want = op.desc.shape;
    std::string what = op.kind == OperandKind::kInput ? "input '" + op.name + "'" : "output";
    if (want.size() != got.size()) {
      return make_error(ErrorKind::kRuntime, "dispatch: ", what, " expects rank ", want.size(),
                        " (shape ", shape_to_string(want), "), tensor has shape ",
                        shape_to_string(got));
    }
    for (size_t i = 0; i < want.size(); ++i) {
      const Dim& d = want[i];
      if (is_derived_name(d.name)) continue;  // evaluated by re-inference, checked later
      if (d.is_static()) {
        if (got[i] != d.value) {
          return make_error(ErrorKind::kRuntime, "dispatch: ", what, " expects shape ",
                            shape_to_string(want), ", tensor has shape ", shape_to_string(got));
        }
        continue;
      }
      if (got[i] > d.value) {
        return make_error(ErrorKind::kRuntime, "dispatch: dynamic dimension '", d.name,
                          "' bound to ", got[i], " exceeds its maxSize ", d.value);
      }
      auto [it, inserted] = bindings.emplace(d.name, got[i]);
      if (!inserted && it->second != got[i]) {
        return make_error(ErrorKind::kRuntime, "dispatch: dynamic dimension '", d.name,
                          "' is bound to ", it->second, " but ", what, " has ", got[i]);
      }
    }
  }
  return Status::ok();
}

}  // namespace

namespace {

// The tensors of one dispatch, each distinct: inputs locked shared, outputs exclusive, in
// address order, so that dispatches locking overlapping sets cannot deadlock (each takes its
// graph's mutex only after these, and nothing holding a tensor lock waits for another).
class BoundTensorLocks {
 public:
  BoundTensorLocks(const std::vector<TensorBinding>& inputs,
                   const std::vector<TensorBinding>& outputs) {
    for (const TensorBinding& b : inputs) held_.push_back({b.tensor, false});
    for (const TensorBinding& b : outputs) held_.push_back({b.tensor, true});
    std::sort(held_.begin(), held_.end(), [](const Held& a, const Held& b) {
      return std::less<const Tensor*>()(a.tensor, b.tensor);
    });
    for (const Held& h : held_) {
      if (h.exclusive) {
        h.tensor->access().lock();
      } else {
        h.tensor->access().lock_shared();
      }
    }
  }
  ~BoundTensorLocks() {
    for (const Held& h : held_) {
      if (h.exclusive) {
        h.tensor->access().unlock();
      } else {
        h.tensor->access().unlock_shared();
      }
    }
  }
  BoundTensorLocks(const BoundTensorLocks&) = delete;
  BoundTensorLocks& operator=(const BoundTensorLocks&) = delete;

 private:
  struct Held {
    const Tensor* tensor;
    bool exclusive;
  };
  std::vector<Held> held_;
};

}  // namespace

Expected<std::vector<std::vector<int64_t>>> CompiledGraph::output_shapes(
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes) const {
  BoundShapes bound;
  for (const auto& [name, shape] : input_shapes) {
    auto it = std::find_if(graph_.inputs.begin(), graph_.inputs.end(),
                           [&](OperandId id) { return graph_.operands[id].name == name; });
    if (it == graph_.inputs.end()) {
      return make_error(ErrorKind::kRuntime, "output_shapes: graph has no input named '", name,
                        "'");
    }
    bound.emplace_back(*it, shape);
  }
  DimBindings bindings;
  WEBNN_RETURN_IF_ERROR(bind_dims(graph_, bound, bindings));
  WEBNN_ASSIGN_OR_RETURN(std::vector<OperandDesc> descs, infer_concrete(graph_, bindings));
  std::vector<std::vector<int64_t>> out;
  for (const NamedOperand& o : graph_.outputs) out.push_back(static_sizes(descs[o.id].shape));
  return out;
}

Status Context::dispatch(CompiledGraph& compiled, const std::vector<TensorBinding>& inputs,
                         const std::vector<TensorBinding>& outputs) const {
  const Graph& graph = compiled.graph();
  if (!compiled.owned_by(*this)) {
    return make_error(ErrorKind::kRuntime, "dispatch: graph belongs to another context");
  }
  std::set<const Tensor*> seen;
  for (const auto* list : {&inputs, &outputs}) {
    for (const TensorBinding& b : *list) {
      if (!seen.insert(b.tensor).second) {
        return make_error(ErrorKind::kRuntime, "dispatch: tensor bound to '", b.name,
                          "' is used more than once");
      }
    }
  }
  // Held until the outputs are written (Tensor::access): checked under the locks, so that a
  // tensor destroyed or resized by another thread is seen before any kernel runs on it.
  BoundTensorLocks locks(inputs, outputs);
  for (const auto* list : {&inputs, &outputs}) {
    for (const TensorBinding& b : *list) {
      WEBNN_RETURN_IF_ERROR(check_tensor(*b.tensor, "dispatch"));
    }
  }
  // Match names exactly: no missing, no extra.
  BoundShapes bound;
  std::vector<std::pair<OperandId, Tensor*>> in_bound, out_bound;
  if (inputs.size() != graph.inputs.size()) {
    return make_error(ErrorKind::kRuntime, "dispatch: graph has ", graph.inputs.size(), " inputs, ",
                      inputs.size(), " were given");
  }
  for (const TensorBinding& b : inputs) {
    auto it = std::find_if(graph.inputs.begin(), graph.inputs.end(),
                           [&](OperandId id) { return graph.operands[id].name == b.name; });
    if (it == graph.inputs.end()) {
      return make_error(ErrorKind::kRuntime, "dispatch: graph has no input named '", b.name, "'");
    }
    in_bound.emplace_back(*it, b.tensor);
  }
  if (outputs.size() != graph.outputs.size()) {
    return make_error(ErrorKind::kRuntime, "dispatch: graph has ", graph.outputs.size(),
                      " outputs, ", outputs.size(), " were given");
  }
  for (const TensorBinding& b : outputs) {
    auto it = std::find_if(graph.outputs.begin(), graph.outputs.end(),
                           [&](const NamedOperand& o) { return o.name == b.name; });
    if (it == graph.outputs.end()) {
      return make_error(ErrorKind::kRuntime, "dispatch: graph has no output named '", b.name, "'");
    }
    out_bound.emplace_back(it->id, b.tensor);
  }
  for (const auto* list : {&in_bound, &out_bound}) {
    for (const auto& [id, tensor] : *list) {
      DataType want = graph.operands[id].desc.data_type;
      if (tensor->data_type() != want) {
        return make_error(ErrorKind::kRuntime, "dispatch: tensor data type ",
                          data_type_name(tensor->data_type()), " does not match the graph's ",
                          data_type_name(want));
      }
      bound.emplace_back(id, tensor->shape());
    }
  }
  DimBindings bindings;
  WEBNN_RETURN_IF_ERROR(bind_dims(graph, bound, bindings));

  std::lock_guard<std::mutex> lock(compiled.mutex_);
  std::vector<int64_t> key;
  for (const auto& [name, size] : bindings) key.push_back(size);
  auto it = compiled.plans_.find(key);
  if (it == compiled.plans_.end()) {
    const Graph& exec = compiled.optimized_;
    WEBNN_ASSIGN_OR_RETURN(std::vector<OperandDesc> descs, infer_concrete(exec, bindings));
    auto plan = build_plan(exec, *backend_, std::move(descs), memory_plan_enabled(),
                           compiled.constants_.get());
    if (!plan) return Status(ErrorKind::kRuntime, plan.status().message());
    compiled.stats_.arena_bytes = (*plan)->arena.size();
    compiled.stats_.unshared_bytes = (*plan)->unshared_bytes;
    if (compiled.plans_.size() >= CompiledGraph::kMaxCachedPlans) {
      auto oldest = compiled.plans_.begin();
      for (auto p = compiled.plans_.begin(); p != compiled.plans_.end(); ++p) {
        if (p->second.last_use < oldest->second.last_use) oldest = p;
      }
      compiled.plans_.erase(oldest);
    }
    it = compiled.plans_.emplace(key, CompiledGraph::CachedPlan{std::move(*plan), 0}).first;
  }
  it->second.last_use = ++compiled.dispatch_count_;
  Plan& plan = *it->second.plan;
  for (const auto& [id, tensor] : out_bound) {
    if (to_shape(tensor->shape()) != plan.descs[id].shape) {
      return make_error(ErrorKind::kRuntime, "dispatch: output tensor shape ",
                        shape_to_string(tensor->shape()), " does not match the graph output ",
                        shape_to_string(plan.descs[id].shape));
    }
  }
  // Byte-sized tensors are bound in place: kernels read the input tensors' storage and write
  // the output tensors' storage directly (kernels never write their inputs), instead of two
  // copies per dispatch. The plan's own buffers are restored afterwards. Copies remain for
  // 4-bit data, and for an operand bound twice (an input that is also an output, or one
  // output under two names) or that no node writes (a constant output).
  struct Swap {
    TensorView* view;
    uint8_t* own;
  };
  std::vector<Swap> swaps;
  struct Restore {
    std::vector<Swap>& swaps;
    ~Restore() {
      for (const Swap& s : swaps) s.view->data = s.own;
    }
  } restore{swaps};
  auto bind_in_place = [&](OperandId id, Tensor* tensor) {
    TensorView& v = plan.views[id];
    if (!v.data || is_4bit(tensor->data_type()) || tensor->byte_length() == 0) return false;
    for (const Swap& s : swaps) {
      if (s.view == &v) return false;
    }
    swaps.push_back({&v, v.data});
    v.data = tensor->data();
    return true;
  };
  for (const auto& [id, tensor] : in_bound) {
    TensorView& v = plan.views[id];
    if (!v.data) continue;  // declared but unused by any node
    if (bind_in_place(id, tensor)) continue;
    if (is_4bit(tensor->data_type())) {
      unpack_4bit(tensor->data(), v.count, tensor->data_type() == DataType::kInt4, v.data);
    } else if (tensor->byte_length() > 0) {  // an empty tensor's data() is null
      std::memcpy(v.data, tensor->data(), tensor->byte_length());
    }
  }
  // Reshapes of graph inputs read the bound tensors' bytes too (runtime/memory_plan.h).
  for (const auto& [id, root] : plan.aliases) {
    TensorView& v = plan.views[id];
    if (v.data == plan.views[root].data) continue;
    swaps.push_back({&v, v.data});
    v.data = plan.views[root].data;
  }
  std::vector<bool> copy_out(out_bound.size(), true);
  for (size_t i = 0; i < out_bound.size(); ++i) {
    const auto& [id, tensor] = out_bound[i];
    if (compiled.optimized_.operands[id].kind == OperandKind::kOutput) {
      copy_out[i] = !bind_in_place(id, tensor);
    }
  }
  WEBNN_RETURN_IF_ERROR(run_plan(plan, compiled.optimized_, pool_.get(), compiled.profiling_));
  for (size_t i = 0; i < out_bound.size(); ++i) {
    if (!copy_out[i]) continue;
    const auto& [id, tensor] = out_bound[i];
    const TensorView& v = plan.views[id];
    if (is_4bit(tensor->data_type())) {
      pack_4bit(v.data, v.count, tensor->data());
    } else if (tensor->byte_length() > 0) {
      std::memcpy(tensor->data(), v.data, tensor->byte_length());
    }
  }
  return Status::ok();
}

}  // namespace webnn
