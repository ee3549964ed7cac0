#include "runtime/plan.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>

#include "graph/passes/graph_util.h"
#include "ops/infer.h"
#include "runtime/memory_plan.h"

namespace webnn {

namespace {

// A kernel's own allocations (weights packed when it is compiled, scratch when it runs) throw
// std::bad_alloc, on this thread or in a pool task (ThreadPool::run rethrows it here): the
// error names the node, as the plan's own allocations name the plan.
Status out_of_memory(const Node& node, const char* when) {
  return make_error(ErrorKind::kRuntime, op_spec_name(node.kind),
                    node.label.empty() ? std::string() : str_cat(" '", node.label, "'"),
                    ": out of memory allocating the kernel's working memory (", when, ")");
}

Expected<std::unique_ptr<Kernel>> compile_kernel(const Backend& backend, const Node& node,
                                                 const CompileContext& cc) {
  try {
    return backend.compile(node, cc);
  } catch (const std::bad_alloc&) {
    return out_of_memory(node, "compile");
  } catch (const std::length_error&) {
    return out_of_memory(node, "compile");
  }
}

Status run_kernel(Kernel& kernel, KernelContext& ctx, const Node& node) {
  try {
    return kernel.run(ctx);
  } catch (const std::bad_alloc&) {
    return out_of_memory(node, "dispatch");
  } catch (const std::length_error&) {
    return out_of_memory(node, "dispatch");
  }
}

Dim bind_dim(const Dim& d, const DimBindings& bindings) {
  if (d.is_static()) return d;
  auto it = bindings.find(d.name);
  return it == bindings.end() ? d : Dim(it->second);
}

Shape bind_shape(const Shape& s, const DimBindings& bindings) {
  Shape out;
  for (const Dim& d : s) out.push_back(bind_dim(d, bindings));
  return out;
}

// User-named dims inside op arguments (reshape/expand new_shape, slice sizes) bind too.
OpParams bind_params(const OpParams& params, const DimBindings& bindings) {
  OpParams out = params;
  if (auto* p = std::get_if<NewShapeParams>(&out))
    p->new_shape = bind_shape(p->new_shape, bindings);
  if (auto* p = std::get_if<SliceParams>(&out)) p->sizes = bind_shape(p->sizes, bindings);
  return out;
}

}  // namespace

Expected<std::vector<OperandDesc>> infer_concrete(const Graph& graph, const DimBindings& bindings) {
  std::vector<OperandDesc> descs(graph.operands.size());
  for (size_t i = 0; i < graph.operands.size(); ++i) {
    descs[i] = graph.operands[i].desc;
    descs[i].shape = bind_shape(descs[i].shape, bindings);
  }
  if (bindings.empty()) return descs;
  for (const Node& node : graph.nodes) {
    Node bound{node.kind, node.label, bind_params(node.params, bindings), node.outputs};
    auto lookup = [&descs](OperandId id) -> const OperandDesc& { return descs[id]; };
    auto outs = infer_node(bound, lookup, /*bound_sizes=*/true);
    if (!outs) return Status(ErrorKind::kRuntime, outs.status().message());
    for (size_t k = 0; k < node.outputs.size(); ++k) descs[node.outputs[k]] = (*outs)[k];
  }
  return descs;
}

Expected<std::unique_ptr<Plan>> build_plan(const Graph& graph, const Backend& backend,
                                           std::vector<OperandDesc> descs, bool memory_plan,
                                           ConstantCache* cache) {
  auto plan = std::make_unique<Plan>();
  plan->descs = std::move(descs);
  size_t n = graph.operands.size();
  plan->storage.resize(n);
  plan->views.resize(n);
  std::vector<bool> used(n, false);
  for (const Node& node : graph.nodes) {
    for (OperandId id : node_reads(graph, node)) used[id] = true;
    for (OperandId id : node.outputs) used[id] = true;
  }
  // A graph output may be a constant (after constant folding): dispatch copies it out.
  for (const NamedOperand& o : graph.outputs) used[o.id] = true;
  std::vector<uint64_t> sizes(n, 0);
  for (size_t id = 0; id < n; ++id) {
    if (!used[id]) continue;
    const OperandDesc& d = plan->descs[id];
    TensorView& v = plan->views[id];
    v.data_type = d.data_type;
    v.shape = static_sizes(d.shape);
    WEBNN_ASSIGN_OR_RETURN(v.count, element_count(v.shape));
    WEBNN_ASSIGN_OR_RETURN(uint64_t bytes, storage_bytes(unpacked_type(d.data_type), v.count));
    sizes[id] = bytes == 0 ? 1 : bytes;
  }
  // A fused stage's value (Node::depthwise_input, its Node::expansion_input) has no buffer, but
  // the kernel reads its shape from the view.
  // Stages nest: an expansion stage may have a depthwise stage of its own.
  std::function<Status(const Node&)> stage_views = [&](const Node& node) -> Status {
    for (const auto* stage : {&node.depthwise_input, &node.expansion_input}) {
      if (!*stage) continue;
      const OperandId id = (*stage)->outputs[0];
      if (!used[id]) {
        TensorView& v = plan->views[id];
        v.data_type = plan->descs[id].data_type;
        v.shape = static_sizes(plan->descs[id].shape);
        WEBNN_ASSIGN_OR_RETURN(v.count, element_count(v.shape));
      }
      WEBNN_RETURN_IF_ERROR(stage_views(**stage));
    }
    return Status::ok();
  };
  for (const Node& node : graph.nodes) WEBNN_RETURN_IF_ERROR(stage_views(node));
  const MemoryPlan mp = plan_memory(graph, plan->descs, sizes, backend.name());
  plan->unshared_bytes = mp.unshared_bytes;
  if (memory_plan) {
    // Each intermediate is within the maximum tensor byte length (the builder checks every
    // operand), but the arena holding the live ones at once can be larger: that is a graph
    // this machine cannot run, not a tensor too large.
    if (mp.arena_bytes > kMaxTensorByteLength) {
      return make_error(ErrorKind::kRuntime, "plan: out of memory allocating ", mp.arena_bytes,
                        " bytes for the intermediate results (at most ", kMaxTensorByteLength,
                        " bytes in one allocation)");
    }
    WEBNN_RETURN_IF_ERROR(
        allocate_zeroed(plan->arena, std::max<uint64_t>(mp.arena_bytes, 1), "plan"));
  }
  for (size_t id = 0; id < n; ++id) {
    if (!used[id]) continue;
    TensorView& v = plan->views[id];
    const uint64_t bytes = sizes[id];
    if (memory_plan && mp.offset[id] >= 0) {
      v.data = plan->arena.data() + mp.offset[id];
      continue;
    }
    if (memory_plan && mp.alias[id] >= 0) {
      plan->aliases.emplace_back(static_cast<OperandId>(id), mp.alias[id]);
      continue;  // set below, once its root's buffer is
    }
    const Operand& op = graph.operands[id];
    if (op.kind == OperandKind::kConstant) {
      if (!op.constant) return make_error(ErrorKind::kInternal, "constant without data");
      // Kernels never write their inputs: aligned byte-sized constants are used in place, so
      // a (possibly memory-mapped) weight is not copied a second time.
      const uint8_t* src = op.constant->data();
      bool aligned = reinterpret_cast<uintptr_t>(src) % element_size(v.data_type) == 0;
      if (!is_4bit(v.data_type) && aligned && op.constant->size() > 0) {
        v.data = const_cast<uint8_t*>(src);
        continue;
      }
      WEBNN_RETURN_IF_ERROR(allocate_zeroed(plan->storage[id], bytes, "plan"));
      v.data = plan->storage[id].data();
      if (is_4bit(v.data_type)) {
        unpack_4bit(src, v.count, v.data_type == DataType::kInt4, v.data);
      } else {
        std::memcpy(v.data, src, std::min<uint64_t>(bytes, op.constant->size()));
      }
      continue;
    }
    WEBNN_RETURN_IF_ERROR(allocate_zeroed(plan->storage[id], bytes, "plan"));
    v.data = plan->storage[id].data();
  }
  for (const auto& [id, root] : plan->aliases) plan->views[id].data = plan->views[root].data;
  const CompileContext cc(graph, plan->views, cache);
  for (const Node& node : graph.nodes) {
    WEBNN_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, compile_kernel(backend, node, cc));
    plan->kernels.push_back(std::move(k));
  }
  return plan;
}

Status run_plan(Plan& plan, const Graph& graph, ThreadPool* pool, bool profile) {
  if (!profile) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      KernelContext ctx(graph.nodes[i], plan.views, pool);
      WEBNN_RETURN_IF_ERROR(run_kernel(*plan.kernels[i], ctx, graph.nodes[i]));
    }
    return Status::ok();
  }
  // Timing is a separate loop so that the default path carries no clock reads.
  plan.node_ns.resize(graph.nodes.size(), 0);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    KernelContext ctx(graph.nodes[i], plan.views, pool);
    const auto start = std::chrono::steady_clock::now();
    WEBNN_RETURN_IF_ERROR(run_kernel(*plan.kernels[i], ctx, graph.nodes[i]));
    plan.node_ns[i] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  }
  ++plan.profiled_runs;
  return Status::ok();
}

}  // namespace webnn
