// Context, tensors and compiled graphs (spec/api.md §6–§8, §10–§12).
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <vector>

#include "webnn/graph.h"
#include "webnn/status.h"

namespace webnn {

class Backend;
class ConstantCache;
class ConstantStore;
class GraphBuilder;
class Context;
class ThreadPool;
struct Plan;

// Backend storage with a logical shape and a byte capacity (spec/api.md §8, §12).
class Tensor {
 public:
  DataType data_type() const { return data_type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  uint64_t element_count() const;
  uint64_t byte_length() const;  // packed bytes of the logical shape
  uint64_t capacity() const { return storage_.size(); }
  bool readable() const { return readable_; }
  bool writable() const { return writable_; }
  bool exportable_to_gpu() const { return exportable_to_gpu_; }
  bool destroyed() const { return destroyed_.load(std::memory_order_acquire); }
  // The context that created it; compare ownership with owned_by(), which stays correct after
  // that context is freed (a new context may reuse its address).
  const Context* owner() const { return owner_; }
  bool owned_by(const Context& ctx) const;
  uint8_t* data() { return storage_.data(); }
  const uint8_t* data() const { return storage_.data(); }
  // Frees the storage; waits for a dispatch that has the tensor bound to finish first.
  void destroy();
  // Held while the storage, shape or state is used: shared by read_tensor and by a dispatch
  // that reads the tensor, exclusive for write_tensor, resize_tensor, set_tensor_capacity,
  // destroy and a dispatch that writes it. A context is used from many threads at once, and a
  // dispatch runs its kernels on the tensors' storage in place: without it, another thread
  // could read half-written results, write or free the storage under the kernels.
  std::shared_mutex& access() const { return access_; }

 private:
  friend class Context;
  DataType data_type_ = DataType::kFloat32;
  std::vector<int64_t> shape_;
  AlignedBytes storage_;
  bool readable_ = false, writable_ = false, exportable_to_gpu_ = false;
  std::atomic<bool> destroyed_{false};  // also read by the bindings' checks before locking
  mutable std::shared_mutex access_;
  const Context* owner_ = nullptr;
  uint64_t owner_id_ = 0;  // Context::id_ of owner_
};

// What the compiler did to a graph (src/graph/passes) and how much memory its plan takes.
struct CompileStats {
  int64_t nodes_before = 0, nodes_after = 0;
  std::vector<std::pair<std::string, int64_t>> passes;  // pass name -> rewrites, in run order
  std::map<std::string, int64_t> ops_after;             // spec op name -> nodes, optimised
  int64_t fused_steps = 0;                              // element-wise steps in epilogues
  uint64_t arena_bytes = 0;     // intermediates of the latest plan, in its one arena
  uint64_t unshared_bytes = 0;  // what one buffer per intermediate would take instead
  size_t plans = 0;             // shape-specialised plans cached
  size_t shared_constants = 0;  // prepared (packed) constants shared by those plans
  size_t reused_prepared = 0;   // of those, packed by another graph of the context
  uint64_t constant_bytes = 0;  // constant data the optimised graph holds
  // Of those, bytes found already held by another graph of the context (and shared with it).
  uint64_t reused_constant_bytes = 0;
};

// Time spent in one node of the optimised graph, summed over the profiled dispatches of the
// most recently used plan.
struct NodeProfile {
  std::string op;              // spec name of the node, with its fused steps: "conv2d+add+relu"
  std::string output;          // the optimised graph's name for its first output ("" when unnamed)
  std::vector<int64_t> shape;  // that output's concrete shape
  double flops = 0;            // per run, at the plan's concrete shapes (graph/stats.h)
  uint64_t total_ns = 0;
};
struct Profile {
  uint64_t runs = 0;
  std::vector<NodeProfile> nodes;  // in execution order
};

// A graph compiled for one context's backend. Plans are cached per binding of its dynamic
// dimensions.
class CompiledGraph {
 public:
  ~CompiledGraph();
  // The graph as built (names, descriptors; what save() writes).
  const Graph& graph() const { return graph_; }
  // The graph after the compiler's passes, which plans execute. Operand ids of graph() keep
  // their meaning in it.
  const Graph& optimized_graph() const { return optimized_; }
  CompileStats stats() const;
  // Per-node timing of later dispatches (off by default; turning it on or off clears it).
  void set_profiling(bool on);
  Profile profile() const;
  const Context* owner() const { return owner_; }
  bool owned_by(const Context& ctx) const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  // Concrete output shapes for the given input shapes (binds dynamic dimensions as dispatch
  // does), in output order. Lets callers size output tensors before dispatch.
  Expected<std::vector<std::vector<int64_t>>> output_shapes(
      const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes) const;

 private:
  friend class Context;
  Graph graph_;
  Graph optimized_;
  CompileStats stats_;
  std::shared_ptr<ConstantCache> constants_;
  const Context* owner_ = nullptr;
  uint64_t owner_id_ = 0;  // Context::id_ of owner_
  // Plans hold scratch buffers: one dispatch at a time per graph.
  std::mutex mutex_;
  // One plan per binding of the dynamic dimensions, least recently used evicted first, so a
  // sequence length that grows on every dispatch keeps memory flat.
  struct CachedPlan {
    std::unique_ptr<Plan> plan;
    uint64_t last_use = 0;
  };
  static constexpr size_t kMaxCachedPlans = 8;
  std::map<std::vector<int64_t>, CachedPlan> plans_;
  uint64_t dispatch_count_ = 0;
  bool profiling_ = false;
};

// One operand argument's supported data types and ranks (WebNN MLOpSupportLimits).
struct OperandSupport {
  std::string name;  // WebNN camelCase argument name ("input", "recurrentWeight", "output")
  std::vector<DataType> data_types;
  int min_rank = 0;
  int max_rank = 0;
};
struct OpSupport {
  OpKind kind;
  std::vector<OperandSupport> operands;
};

// The whole WebNN MLOpSupportLimits dictionary of a context (spec/api.md §7
// op_support_limits): the global entries and one entry per operation.
struct SupportLimits {
  std::string preferred_input_layout;  // "nchw" or "nhwc"
  uint64_t max_tensor_byte_length = 0;
  OperandSupport input, constant, output;  // what graph inputs/constants/outputs may be
  std::vector<OpSupport> operations;       // in op table order
};

struct TensorBinding {
  std::string name;
  Tensor* tensor;
};

// Host data of one named graph input or output for Context::compute(): packed bytes (4-bit
// types two per byte) in C order.
struct HostTensor {
  std::string name;
  DataType data_type = DataType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

class Context {
 public:
  // power_preference: "default" | "high-performance" | "low-power"; backend: "auto" or a name.
  static Expected<std::shared_ptr<Context>> create(const std::string& power_preference,
                                                   bool accelerated, const std::string& backend);
  static std::vector<std::string> backend_names();

  Context();
  ~Context();

  bool accelerated() const;
  // Threads that kernels of this context run on (WEBNN_NUM_THREADS, default: hardware threads),
  // counting the dispatching thread.
  int num_threads() const;
  const std::string& power_preference() const { return power_preference_; }
  const char* backend_name() const;
  const Backend& backend() const { return *backend_; }

  // A builder that accepts exactly the data types this context's backend executes.
  std::shared_ptr<GraphBuilder> create_graph_builder() const;
  Expected<std::shared_ptr<CompiledGraph>> compile(Graph graph) const;
  Expected<std::shared_ptr<Tensor>> create_tensor(DataType data_type,
                                                  const std::vector<int64_t>& shape, bool readable,
                                                  bool writable, bool exportable_to_gpu) const;
  // Destroyed / other context / not writable checks, run before any data conversion.
  Status check_writable(const Tensor& tensor) const;
  Status check_readable(const Tensor& tensor) const;
  // `bytes` are packed values for `count` elements.
  Status write_tensor(Tensor& tensor, const uint8_t* bytes, uint64_t nbytes, uint64_t count) const;
  Expected<std::vector<uint8_t>> read_tensor(const Tensor& tensor) const;
  // Copies the tensor's packed bytes into `dst`, which holds exactly `nbytes`.
  Status read_tensor_into(const Tensor& tensor, uint8_t* dst, uint64_t nbytes) const;
  Status resize_tensor(Tensor& tensor, const std::vector<int64_t>& shape) const;
  Status set_tensor_capacity(Tensor& tensor, const std::vector<int64_t>& max_shape) const;
  // Generated from the op schemas narrowed by this context's backend.
  std::vector<OpSupport> op_support_limits() const;
  // op_support_limits() plus the global entries (layout, byte length, input/constant/output).
  SupportLimits support_limits() const;
  Status dispatch(CompiledGraph& graph, const std::vector<TensorBinding>& inputs,
                  const std::vector<TensorBinding>& outputs) const;
  // One-shot execution (spec/api.md §7 compute) of a graph whose inputs and outputs are all
  // static: every graph input must be in `inputs` with its data type and exactly its shape
  // (names the graph does not have are ignored); temporary tensors are created, the graph is
  // dispatched and every output is returned, in graph output order. Errors: kValue for a
  // missing input, a dynamic dimension, a data type or shape mismatch; dispatch's errors
  // otherwise.
  Expected<std::vector<HostTensor>> compute(CompiledGraph& graph,
                                            const std::vector<HostTensor>& inputs) const;

 private:
  Status check_tensor(const Tensor& tensor, const char* method) const;
  friend class Tensor;
  friend class CompiledGraph;
  const Backend* backend_ = nullptr;
  // Unique per process lifetime: ownership checks must not be fooled by a freed context's
  // address being reused by a new one.
  const uint64_t id_;
  std::string power_preference_;
  // Persistent workers for this context's kernels; one parallel region at a time.
  std::unique_ptr<ThreadPool> pool_;
  // Constant data and packed weights shared by the graphs compiled here (weak references).
  std::shared_ptr<ConstantStore> constant_store_;

 public:
  // Live constants and their bytes in the store (shared by every graph of this context).
  size_t stored_constants() const;
  uint64_t stored_constant_bytes() const;
};

}  // namespace webnn
