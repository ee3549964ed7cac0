// The backend interface: every backend compiles nodes into kernels through the same
// compile/plan/dispatch path (src/runtime).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/kernel.h"

namespace webnn {

enum class DeviceKind { kCpu, kGpu, kNpu };

// What compile() may inspect besides the node: the plan's operand views with concrete shapes,
// and the data of constants (valid and unchanged for the plan's lifetime), so that a kernel can
// prepare state such as packed weights once. Without views (a graph with dynamic dimensions
// checked at build time) only the node is known.
class CompileContext {
 public:
  CompileContext() = default;
  CompileContext(const Graph& graph, const std::vector<TensorView>& views)
      : graph_(&graph), views_(&views) {}

  bool has_views() const { return views_ != nullptr; }
  const Graph* graph() const { return graph_; }
  const TensorView& view(OperandRef r) const { return (*views_)[r.id]; }
  bool is_constant(OperandRef r) const {
    return graph_ && graph_->operands[r.id].kind == OperandKind::kConstant;
  }

 private:
  const Graph* graph_ = nullptr;
  const std::vector<TensorView>* views_ = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual DeviceKind device_kind() const = 0;
  // Data types this backend executes for `field` of `kind` (a subset of the op's schema limit).
  virtual DataTypeMask supported_types(OpKind kind, const char* field,
                                       DataTypeMask schema) const = 0;
  virtual Expected<std::unique_ptr<Kernel>> compile(const Node& node,
                                                    const CompileContext& cc) const = 0;
};

}  // namespace webnn
