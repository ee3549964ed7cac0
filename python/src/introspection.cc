#include "introspection.h"

#include <nanobind/stl/string.h>

#include "convert.h"
#include "errors.h"
#include "webnn/stats.h"

namespace webnn::py {

namespace nb = nanobind;

namespace {

const char* kind_name(OperandKind kind) {
  switch (kind) {
    case OperandKind::kInput:
      return "input";
    case OperandKind::kConstant:
      return "constant";
    case OperandKind::kOutput:
      return "intermediate";
  }
  return "intermediate";
}

nb::list id_list(const std::vector<OperandId>& ids) {
  nb::list out;
  for (OperandId id : ids) out.append(id);
  return out;
}

nb::dict describe(const Graph& g) {
  std::vector<bool> used(g.operands.size(), false);
  nb::list nodes;
  for (const Node& node : g.nodes) {
    nb::dict n;
    n["op"] = op_spec_name(node.kind);
    n["label"] = node.label;
    std::vector<OperandId> inputs = node.inputs();
    for (OperandId id : inputs) used[id] = true;
    for (OperandId id : node.outputs) used[id] = true;
    n["inputs"] = id_list(inputs);
    n["outputs"] = id_list(node.outputs);
    n["flops"] = node_flops(g, node);
    nodes.append(n);
  }
  nb::list operands;
  for (size_t id = 0; id < g.operands.size(); ++id) {
    if (!used[id]) continue;
    const Operand& op = g.operands[id];
    nb::dict o;
    o["id"] = id;
    o["name"] = op.name;
    o["kind"] = kind_name(op.kind);
    o["shape"] = shape_to_python(op.desc.shape);
    o["data_type"] = data_type_name(op.desc.data_type);
    operands.append(o);
  }
  nb::dict outputs;
  for (const NamedOperand& o : g.outputs) outputs[o.name.c_str()] = o.id;
  GraphStats stats = graph_stats(g);
  nb::dict histogram;
  for (const auto& [name, count] : stats.op_histogram) histogram[name.c_str()] = count;
  nb::dict s;
  s["op_histogram"] = histogram;
  s["parameter_count"] = stats.parameter_count;
  s["parameter_bytes"] = stats.parameter_bytes;
  s["flops"] = stats.flops;
  nb::dict out;
  out["inputs"] = id_list(g.inputs);
  out["outputs"] = outputs;
  out["operands"] = operands;
  out["nodes"] = nodes;
  out["stats"] = s;
  return out;
}

nb::dict output_shapes(const GraphHandle& g, nb::handle input_shapes) {
  if (!PyDict_Check(input_shapes.ptr())) {
    throw_error(PyExc_TypeError, "output_shapes: expected a dict of input name -> shape");
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (auto [k, v] : nb::borrow<nb::dict>(input_shapes)) {
    std::string name = to_string(k, "output_shapes: input name");
    shapes.emplace_back(name, parse_tensor_shape(v, "output_shapes: '" + name + "'"));
  }
  auto result = unwrap(g.graph->output_shapes(shapes));
  nb::dict out;
  std::vector<std::string> names = g.graph->output_names();
  for (size_t i = 0; i < names.size(); ++i) {
    nb::list shape;
    for (int64_t d : result[i]) shape.append(d);
    out[names[i].c_str()] = shape;
  }
  return out;
}

}  // namespace

void bind_introspection(nb::class_<GraphHandle>& cls) {
  cls.def("_output_shapes", &output_shapes, nb::arg("input_shapes"),
          nb::sig("def _output_shapes(self, input_shapes: collections.abc.Mapping[str, "
                  "collections.abc.Sequence[int]]) -> dict[str, list[int]]"),
          "Concrete output shapes for the given input shapes (dynamic dimensions bound as "
          "dispatch binds them).");
  cls.def(
      "_describe", [](const GraphHandle& g) { return describe(g.graph->graph()); },
      "Structure and summary numbers of the graph (operands, nodes, op histogram, parameter "
      "count/bytes, FLOP estimate); used by the `webnn` command-line tool.");
}

}  // namespace webnn::py
