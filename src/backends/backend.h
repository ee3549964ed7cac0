// The backend interface: every backend compiles nodes into kernels through the same
// compile/plan/dispatch path (src/runtime).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/constant_store.h"
#include "backends/kernel.h"

namespace webnn {

enum class DeviceKind { kCpu, kGpu, kNpu };

// Prepared forms of constants (packed weights) of one compiled graph, shared by its plans (one
// per input shape) and, through the context's ConstantStore, with other graphs compiled from
// the same constant data. Keys name what the preparation depends on besides the data (op,
// layout, ISA). The graph keeps what it uses alive, so evicting a plan does not repack.
class ConstantCache {
 public:
  explicit ConstantCache(std::shared_ptr<ConstantStore> store = nullptr)
      : store_(std::move(store)) {}
  std::shared_ptr<const void> get(const std::shared_ptr<const ConstantData>& data,
                                  const std::string& key) {
    if (!data) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = own_.find({data.get(), key});
    if (it != own_.end()) return it->second;
    std::shared_ptr<const void> found = store_ ? store_->find_prepared(data, key) : nullptr;
    if (found) {
      own_[{data.get(), key}] = found;
      ++reused_;
    }
    return found;
  }
  void put(const std::shared_ptr<const ConstantData>& data, const std::string& key,
           std::shared_ptr<const void> value) {
    if (!data) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (store_) store_->add_prepared(data, key, value);
    own_[{data.get(), key}] = std::move(value);
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return own_.size();
  }
  // How many of them another graph had prepared.
  size_t reused() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reused_;
  }

 private:
  std::shared_ptr<ConstantStore> store_;
  mutable std::mutex mu_;
  // The graph holds its constants, so their addresses stay valid keys here.
  std::map<std::pair<const ConstantData*, std::string>, std::shared_ptr<const void>> own_;
  size_t reused_ = 0;
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
  // A constant's data (the key of its prepared forms in cache()), or null.
  std::shared_ptr<const ConstantData> constant_data(OperandRef r) const {
    return is_constant(r) ? graph_->operands[r.id].constant : nullptr;
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
