// GraphBuilder: records inputs, constants and operations, validating each call at once
// (spec/api.md §9). Python, the file parser and C++ users all build graphs through it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "webnn/graph.h"
#include "webnn/status.h"

namespace webnn {

class GraphBuilder {
 public:
  GraphBuilder() = default;
  explicit GraphBuilder(TypeFilter filter) : filter_(std::move(filter)) {}

  Expected<OperandId> input(const std::string& name, const Shape& shape, DataType data_type);
  // `bytes` is the packed storage of `desc` (4-bit types packed two per byte).
  Expected<OperandId> constant(const OperandDesc& desc, std::vector<uint8_t> bytes);
  // Same, for bytes packed from a host value of `value_count` elements viewed as `desc`'s shape
  // (spec/api.md §9.3 `constant(value, shape)`): the counts must be equal, which the byte
  // length alone cannot tell for 4-bit types.
  Expected<OperandId> constant(const OperandDesc& desc, std::vector<uint8_t> bytes,
                               uint64_t value_count);
  // Same, sharing `data` (e.g. a view into a memory-mapped weights file) instead of copying.
  Expected<OperandId> constant(const OperandDesc& desc, std::shared_ptr<const ConstantData> data);
  // Validates `params` (limits + Infer) and appends the node. Returns its output operands.
  Expected<std::vector<OperandId>> add_op(OpKind kind, OpParams params, std::string label = "");

  Expected<OperandDesc> operand_desc(OperandId id) const;
  bool built() const { return built_; }
  bool valid_operand(OperandId id) const {
    return id >= 0 && static_cast<size_t>(id) < graph_.operands.size();
  }

  // The graph build(outputs) would compile: only what the outputs reach. Does not consume.
  Expected<Graph> extract(const std::vector<NamedOperand>& outputs) const;
  // extract() and mark the builder consumed: a later compile failure still consumes it (§9.6).
  Expected<Graph> finish(const std::vector<NamedOperand>& outputs);

 private:
  Status check_not_built() const;
  Status check_shape(const Shape& shape, bool allow_dynamic, const char* what);

  Graph graph_;
  TypeFilter filter_;
  std::map<std::string, int64_t> dynamic_dims_;  // name -> maxSize, one value per builder
  bool built_ = false;
};

}  // namespace webnn
