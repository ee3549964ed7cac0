#include "webnn/builder.h"

#include <algorithm>
#include <set>

#include "ops/infer.h"

namespace webnn {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Required operand fields must be present (optional ones may be absent).
struct RequiredOperandCheck {
  OpKind kind;
  Status status;
  void operator()(const char* name, OperandRef& r, unsigned flags = 0, const char* = nullptr) {
    if (status.is_ok() && (flags & kRequired) && !r.present()) {
      status = make_error(ErrorKind::kType, op_spec_name(kind), ": ", name,
                          " is required and must be an operand");
    }
  }
  void operator()(const char* name, OperandList& l, unsigned = 0, const char* = nullptr) {
    for (const OperandRef& r : l) {
      if (status.is_ok() && !r.present()) {
        status = make_error(ErrorKind::kType, op_spec_name(kind), ": ", name,
                            " must contain only operands");
      }
    }
  }
  template <class T>
  void operator()(const char*, T&, unsigned = 0, const char* = nullptr) {}
};

}  // namespace

Status GraphBuilder::check_not_built() const {
  if (built_) {
    return Status(ErrorKind::kState, "MLGraphBuilder: build() has already been called");
  }
  return Status::ok();
}

Status GraphBuilder::check_shape(const Shape& shape, bool allow_dynamic, const char* what) {
  if (shape.size() > kMaxRank) {
    return make_error(ErrorKind::kValue, what, ": rank ", shape.size(), " exceeds the maximum of ",
                      kMaxRank);
  }
  for (const Dim& d : shape) {
    if (d.is_dynamic()) {
      if (!allow_dynamic) {
        return make_error(ErrorKind::kValue, what, ": dynamic dimensions are not allowed here");
      }
      if (!is_identifier(d.name)) {
        return make_error(ErrorKind::kValue, what, ": dynamic dimension name '", d.name,
                          "' must be an identifier");
      }
    }
    if (d.value < 1 || d.value > kMaxDimension) {
      return make_error(ErrorKind::kValue, what, ": dimension ", dim_to_string(d),
                        " is out of range (a valid dimension is in [1, ", kMaxDimension, "])");
    }
    if (d.is_dynamic()) {
      auto [it, inserted] = dynamic_dims_.emplace(d.name, d.value);
      if (!inserted && it->second != d.value) {
        return make_error(ErrorKind::kValue, what, ": dynamic dimension '", d.name,
                          "' was declared with maxSize ", it->second, " and now with ", d.value);
      }
    }
  }
  return Status::ok();
}

Expected<OperandId> GraphBuilder::input(const std::string& name, const Shape& shape,
                                        DataType data_type) {
  WEBNN_RETURN_IF_ERROR(check_not_built());
  if (name.empty()) return make_error(ErrorKind::kValue, "input: name must not be empty");
  for (OperandId id : graph_.inputs) {
    if (graph_.operands[id].name == name) {
      return make_error(ErrorKind::kValue, "input '", name, "': duplicate input name");
    }
  }
  WEBNN_RETURN_IF_ERROR(check_shape(shape, true, "input"));
  // As every operation's output (ops/registry.cc) and create_tensor: a graph input larger
  // than one tensor may be was accepted and refused only by build(), naming no operand.
  Expected<uint64_t> count = element_count(shape);
  if (!count || *count > kMaxTensorByteLength / element_size(data_type)) {
    return make_error(ErrorKind::kValue, "input '", name, "': ", desc_to_string({data_type, shape}),
                      " exceeds the maximum tensor byte length ", kMaxTensorByteLength);
  }
  Operand op;
  op.desc = {data_type, shape};
  op.kind = OperandKind::kInput;
  op.name = name;
  OperandId id = static_cast<OperandId>(graph_.operands.size());
  graph_.operands.push_back(std::move(op));
  graph_.inputs.push_back(id);
  return id;
}

Expected<OperandId> GraphBuilder::constant(const OperandDesc& desc, std::vector<uint8_t> bytes) {
  return constant(desc, std::make_shared<const ConstantData>(std::move(bytes)));
}

Expected<OperandId> GraphBuilder::constant(const OperandDesc& desc, std::vector<uint8_t> bytes,
                                           uint64_t value_count) {
  WEBNN_RETURN_IF_ERROR(check_not_built());
  WEBNN_RETURN_IF_ERROR(check_shape(desc.shape, false, "constant"));
  WEBNN_ASSIGN_OR_RETURN(uint64_t count, element_count(desc.shape));
  if (count != value_count) {
    return make_error(ErrorKind::kValue, "constant: shape ", shape_to_string(desc.shape), " has ",
                      count, " elements but the value has ", value_count);
  }
  return constant(desc, std::move(bytes));
}

Expected<OperandId> GraphBuilder::constant(const OperandDesc& desc,
                                           std::shared_ptr<const ConstantData> data) {
  WEBNN_RETURN_IF_ERROR(check_not_built());
  WEBNN_RETURN_IF_ERROR(check_shape(desc.shape, false, "constant"));
  WEBNN_ASSIGN_OR_RETURN(uint64_t count, element_count(desc.shape));
  WEBNN_ASSIGN_OR_RETURN(uint64_t expected, storage_bytes(desc.data_type, count));
  size_t got = data ? data->size() : 0;
  if (got != expected) {
    return make_error(ErrorKind::kValue, "constant: ", desc_to_string(desc), " needs ", expected,
                      " bytes, got ", got);
  }
  Operand op;
  op.desc = desc;
  op.kind = OperandKind::kConstant;
  op.constant = std::move(data);
  OperandId id = static_cast<OperandId>(graph_.operands.size());
  graph_.operands.push_back(std::move(op));
  return id;
}

Expected<std::vector<OperandId>> GraphBuilder::add_op(OpKind kind, OpParams params,
                                                      std::string label) {
  WEBNN_RETURN_IF_ERROR(check_not_built());
  Node node{kind, std::move(label), std::move(params), {}};
  RequiredOperandCheck required{kind, Status::ok()};
  visit_params(node.params, required);
  WEBNN_RETURN_IF_ERROR(required.status);
  Status bad_ref;
  for_each_operand(node.params, [&](OperandRef r) {
    if (bad_ref.is_ok() && !valid_operand(r.id)) {
      bad_ref = make_error(ErrorKind::kValue, op_spec_name(kind), ": unknown operand id ", r.id);
    }
  });
  WEBNN_RETURN_IF_ERROR(bad_ref);
  // Shape arguments (reshape/expand/slice) may introduce user-named dynamic dimensions.
  if (const auto* p = std::get_if<NewShapeParams>(&node.params)) {
    WEBNN_RETURN_IF_ERROR(check_shape(p->new_shape, true, op_spec_name(kind)));
  }
  if (const auto* p = std::get_if<SliceParams>(&node.params)) {
    for (const Dim& d : p->sizes) {
      if (d.is_dynamic()) WEBNN_RETURN_IF_ERROR(check_shape({d}, true, "slice"));
    }
  }
  auto lookup = [this](OperandId id) -> const OperandDesc& { return graph_.operands[id].desc; };
  WEBNN_ASSIGN_OR_RETURN(std::vector<OperandDesc> outs, infer_node(node, lookup, false, filter_));
  int32_t node_index = static_cast<int32_t>(graph_.nodes.size());
  for (OperandDesc& d : outs) {
    Operand op;
    op.desc = std::move(d);
    op.producer = node_index;
    node.outputs.push_back(static_cast<OperandId>(graph_.operands.size()));
    graph_.operands.push_back(std::move(op));
  }
  std::vector<OperandId> result = node.outputs;
  graph_.nodes.push_back(std::move(node));
  return result;
}

Expected<OperandDesc> GraphBuilder::operand_desc(OperandId id) const {
  WEBNN_RETURN_IF_ERROR(check_not_built());
  if (!valid_operand(id)) return make_error(ErrorKind::kValue, "unknown operand id ", id);
  return graph_.operands[id].desc;
}

Expected<Graph> GraphBuilder::extract(const std::vector<NamedOperand>& outputs) const {
  WEBNN_RETURN_IF_ERROR(check_not_built());
  if (outputs.empty()) return make_error(ErrorKind::kValue, "build: outputs must not be empty");
  std::set<std::string> names;
  for (const NamedOperand& o : outputs) {
    if (o.name.empty()) return make_error(ErrorKind::kValue, "build: output name is empty");
    if (!names.insert(o.name).second) {
      return make_error(ErrorKind::kValue, "build: duplicate output name '", o.name, "'");
    }
    if (!valid_operand(o.id)) return make_error(ErrorKind::kValue, "build: unknown operand");
    if (graph_.operands[o.id].kind != OperandKind::kOutput) {
      return make_error(ErrorKind::kValue, "build: output '", o.name,
                        "' is an input or constant operand; wrap it in identity() to output it");
    }
  }
  // Mark what the outputs reach, walking producers backwards.
  std::vector<bool> live_node(graph_.nodes.size(), false);
  std::vector<bool> live_operand(graph_.operands.size(), false);
  for (const NamedOperand& o : outputs) live_operand[o.id] = true;
  for (size_t n = graph_.nodes.size(); n-- > 0;) {
    const Node& node = graph_.nodes[n];
    bool needed = std::any_of(node.outputs.begin(), node.outputs.end(),
                              [&](OperandId id) { return live_operand[id]; });
    if (!needed) continue;
    live_node[n] = true;
    for (OperandId id : node.inputs()) live_operand[id] = true;
  }
  Graph g;
  g.operands = graph_.operands;
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    if (live_node[n]) g.nodes.push_back(graph_.nodes[n]);
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (OperandId id : g.nodes[i].outputs) g.operands[id].producer = static_cast<int32_t>(i);
  }
  for (OperandId id : graph_.inputs) {
    if (live_operand[id]) g.inputs.push_back(id);
  }
  // Dead constants are dropped so a compiled graph does not pin their memory.
  for (size_t id = 0; id < g.operands.size(); ++id) {
    if (!live_operand[id]) g.operands[id].constant.reset();
  }
  g.outputs = outputs;
  return g;
}

Expected<Graph> GraphBuilder::finish(const std::vector<NamedOperand>& outputs) {
  // Argument errors leave the builder usable; once compilation starts it is consumed.
  auto g = extract(outputs);
  if (g.has_value()) built_ = true;
  return g;
}

}  // namespace webnn
