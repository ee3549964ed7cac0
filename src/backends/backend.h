// The backend interface: every backend compiles nodes into kernels through the same
// compile/plan/dispatch path (src/runtime).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/kernel.h"

namespace webnn {

enum class DeviceKind { kCpu, kGpu, kNpu };

// Prepared forms of constants (packed weights) shared by every plan of one compiled graph, so
// that plans specialised to other input shapes do not pack the same weight again. Keys name
// the constant and everything its packing depends on.
class ConstantCache {
 public:
  std::shared_ptr<const void> get(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
  }
  void put(const std::string& key, std::shared_ptr<const void> value) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[key] = std::move(value);
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const void>> entries_;
};

// What compile() may inspect besides the node: the plan's operand views with concrete shapes,
// and the data of constants (valid and unchanged for the plan's lifetime), so that a kernel can
// prepare state such as packed weights once. Without views (a graph with dynamic dimensions
// checked at build time) only the node is known.
class CompileContext {
 public:
  CompileContext() = default;
  CompileContext(const Graph& graph, const std::vector<TensorView>& views,
                 ConstantCache* cache = nullptr)
      : graph_(&graph), views_(&views), cache_(cache) {}

  bool has_views() const { return views_ != nullptr; }
  const Graph* graph() const { return graph_; }
  // The compiled graph's cache of prepared constants, or null.
  ConstantCache* cache() const { return cache_; }
  const TensorView& view(OperandRef r) const { return (*views_)[r.id]; }
  bool is_constant(OperandRef r) const {
    return graph_ && graph_->operands[r.id].kind == OperandKind::kConstant;
  }

 private:
  const Graph* graph_ = nullptr;
  const std::vector<TensorView>* views_ = nullptr;
  ConstantCache* cache_ = nullptr;
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
