// Context::compute(): the one-shot run of spec/api.md §7 on temporary tensors, so that every
// caller (Python's MLContext.compute, C++ users) gets the same checks and messages.
#include <algorithm>

#include "webnn/context.h"

namespace webnn {

namespace {

const HostTensor* find_input(const std::vector<HostTensor>& inputs, const std::string& name) {
  auto it = std::find_if(inputs.begin(), inputs.end(),
                         [&](const HostTensor& t) { return t.name == name; });
  return it == inputs.end() ? nullptr : &*it;
}

}  // namespace

Expected<std::vector<HostTensor>> Context::compute(CompiledGraph& graph,
                                                   const std::vector<HostTensor>& inputs) const {
  const Graph& g = graph.graph();
  std::vector<std::shared_ptr<Tensor>> keep;
  std::vector<TensorBinding> in, out;
  for (OperandId id : g.inputs) {
    const Operand& op = g.operands[id];
    if (!is_static_shape(op.desc.shape)) {
      return make_error(ErrorKind::kValue, "compute: input '", op.name,
                        "' has dynamic dimensions; use resize_tensor + dispatch");
    }
    const HostTensor* host = find_input(inputs, op.name);
    if (!host) return make_error(ErrorKind::kValue, "compute: Missing input '", op.name, "'");
    if (host->data_type != op.desc.data_type) {
      return make_error(ErrorKind::kValue, "compute: input '", op.name, "' has data type ",
                        data_type_name(host->data_type), ", the graph expects ",
                        data_type_name(op.desc.data_type));
    }
    const std::vector<int64_t> want = static_sizes(op.desc.shape);
    if (host->shape != want) {
      return make_error(ErrorKind::kValue, "compute: input '", op.name, "' has shape ",
                        shape_to_string(host->shape), ", the graph expects ",
                        shape_to_string(want));
    }
    WEBNN_ASSIGN_OR_RETURN(std::shared_ptr<Tensor> t,
                           create_tensor(op.desc.data_type, want, false, true, false));
    WEBNN_RETURN_IF_ERROR(
        write_tensor(*t, host->bytes.data(), host->bytes.size(), t->element_count()));
    in.push_back({op.name, t.get()});
    keep.push_back(std::move(t));
  }
  for (const NamedOperand& o : g.outputs) {
    const OperandDesc& d = g.desc(o.id);
    if (!is_static_shape(d.shape)) {
      return make_error(ErrorKind::kValue, "compute: output '", o.name,
                        "' has dynamic dimensions; use resize_tensor + dispatch");
    }
    WEBNN_ASSIGN_OR_RETURN(std::shared_ptr<Tensor> t,
                           create_tensor(d.data_type, static_sizes(d.shape), true, false, false));
    out.push_back({o.name, t.get()});
    keep.push_back(std::move(t));
  }
  WEBNN_RETURN_IF_ERROR(dispatch(graph, in, out));
  std::vector<HostTensor> results;
  for (const TensorBinding& b : out) {
    WEBNN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_tensor(*b.tensor));
    results.push_back({b.name, b.tensor->data_type(), b.tensor->shape(), std::move(bytes)});
  }
  return results;
}

}  // namespace webnn
