// The _webnn extension module: ML, MLContext, MLGraphBuilder, MLOperand, MLGraph, MLTensor.
// Conversion and argument checking only; all behaviour lives in the C++ core.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "convert.h"
#include "errors.h"
#include "instance_table.h"
#include "introspection.h"
#include "objects.h"
#include "op_binding.h"
#include "webnn/format.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace webnn::py {

namespace {

// pywebnn's deprecated device_type keyword (api.md §6): "cpu" asks for a CPU device, the
// accelerator names only confirm the accelerated hint.
bool device_type_accelerated(const std::string& device_type, bool accelerated) {
  if (device_type == "cpu") return false;
  if (device_type == "gpu" || device_type == "npu" || device_type == "auto") return accelerated;
  const std::string got = "(got '" + device_type + "')";
  throw_error(PyExc_ValueError,
              "create_context: device_type must be one of 'auto', 'cpu', 'gpu', 'npu' " + got);
}

// A Python-style list of ints ("[2, 3]"), as reprs show shapes (api.md §8).
std::string python_list(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

void no_direct_construction(const char* cls) {
  throw_error(PyExc_TypeError, std::string(cls) + " cannot be instantiated directly");
}

// A dict or a Mapping: PyMapping_Check alone also takes str, bytes and arrays (they have
// __getitem__), which then failed with AttributeError on items().
bool is_mapping(nb::handle h) {
  if (PyDict_Check(h.ptr())) return true;
  return PyMapping_Check(h.ptr()) && !PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr()) &&
         nb::hasattr(h, "items");
}

TensorHandle& tensor_arg(nb::handle h, const char* method) {
  if (!nb::isinstance<TensorHandle>(h)) {
    throw_error(PyExc_TypeError, std::string(method) + ": tensor must be an MLTensor (got " +
                                     nb::cast<std::string>(nb::type_name(h.type())) + ")");
  }
  return nb::cast<TensorHandle&>(h);
}

GraphHandle& graph_arg(nb::handle h, const char* method) {
  if (!nb::isinstance<GraphHandle>(h)) {
    throw_error(PyExc_TypeError, std::string(method) + ": graph must be an MLGraph (got " +
                                     nb::cast<std::string>(nb::type_name(h.type())) + ")");
  }
  return nb::cast<GraphHandle&>(h);
}

// The bindings of one dispatch and references to their tensors: dispatch runs without the
// GIL, and the mapping's own references may be gone meanwhile (another thread replaced its
// values, or a Mapping's items() made the tensors it yields), so the raw pointers in `list`
// must not be all that keeps the tensors alive.
struct Bindings {
  std::vector<TensorBinding> list;
  std::vector<std::shared_ptr<Tensor>> held;
};

Bindings bindings_arg(nb::handle h, const char* method, const char* which) {
  if (!is_mapping(h)) {
    throw_error(PyExc_TypeError,
                std::string(method) + ": " + which + " must be a dict of name -> MLTensor");
  }
  Bindings out;
  nb::object items = nb::borrow(h).attr("items")();
  for (nb::handle item : items) {
    nb::handle key = item[0], value = item[1];
    std::string name = to_string(key, std::string(method) + ": " + which + " key");
    const std::shared_ptr<Tensor>& tensor = tensor_arg(value, method).tensor;
    out.list.push_back({name, tensor.get()});
    out.held.push_back(tensor);
  }
  return out;
}

nb::dict descriptors(const Graph& g, bool inputs) {
  nb::dict out;
  auto add = [&](const std::string& name, const OperandDesc& d) {
    nb::dict desc;
    desc["shape"] = shape_to_python(d.shape);
    desc["data_type"] = data_type_name(d.data_type);
    out[nb::str(name.c_str())] = desc;
  };
  if (inputs) {
    for (OperandId id : g.inputs) add(g.operands[id].name, g.desc(id));
  } else {
    for (const NamedOperand& o : g.outputs) add(o.name, g.desc(o.id));
  }
  return out;
}

std::vector<NamedOperand> outputs_arg(const BuilderHandle& self, nb::handle outputs,
                                      const char* method) {
  if (!is_mapping(outputs)) {
    throw_error(PyExc_TypeError,
                std::string(method) + ": outputs must be a dict of name -> MLOperand");
  }
  std::vector<NamedOperand> out;
  for (nb::handle item : nb::borrow(outputs).attr("items")()) {
    std::string name = to_string(item[0], std::string(method) + ": output name");
    out.push_back(
        {name, operand_id(self, item[1], std::string(method) + ": output '" + name + "'")});
  }
  return out;
}

nb::dict support_entry(const OperandSupport& s) {
  nb::list names;
  for (DataType t : s.data_types) names.append(data_type_name(t));
  nb::dict range;
  range["min"] = s.min_rank;
  range["max"] = s.max_rank;
  nb::dict e;
  e["dataTypes"] = names;
  e["rankRange"] = range;
  return e;
}

// Context::support_limits() as the nested dicts of WebNN's MLOpSupportLimits.
nb::dict op_support_limits(const Context& ctx) {
  SupportLimits limits = ctx.support_limits();
  nb::dict out;
  out["preferredInputLayout"] = limits.preferred_input_layout;
  out["maxTensorByteLength"] = nb::int_(limits.max_tensor_byte_length);
  out["input"] = support_entry(limits.input);
  out["constant"] = support_entry(limits.constant);
  out["output"] = support_entry(limits.output);
  for (const OpSupport& op : limits.operations) {
    nb::dict entry;
    for (const OperandSupport& s : op.operands) entry[nb::str(s.name.c_str())] = support_entry(s);
    out[op_spec_name(op.kind)] = entry;
  }
  return out;
}

// Converts the arrays to each graph input's data type; Context::compute() does the rest.
nb::dict compute(ContextHandle& self, GraphHandle& g, nb::handle inputs) {
  if (!PyDict_Check(inputs.ptr())) {
    throw_error(PyExc_TypeError, "compute: inputs must be a dict of name -> array");
  }
  nb::dict in_dict = nb::borrow<nb::dict>(inputs);
  const Graph& graph = g.graph->graph();
  std::vector<HostTensor> in;
  for (OperandId id : graph.inputs) {
    const Operand& op = graph.operands[id];
    if (!in_dict.contains(op.name.c_str())) continue;
    HostArray arr = adapt_array(in_dict[op.name.c_str()], op.desc.data_type,
                                "compute: input '" + op.name + "'");
    in.push_back({op.name, arr.data_type, std::move(arr.shape), std::move(arr.bytes)});
  }
  Expected<std::vector<HostTensor>> out = Status(ErrorKind::kInternal, "not run");
  {
    nb::gil_scoped_release release;
    out = self.context->compute(*g.graph, in);
  }
  nb::dict result;
  for (const HostTensor& t : unwrap(std::move(out))) {
    result[t.name.c_str()] = to_numpy(t.data_type, t.shape, t.bytes);
  }
  return result;
}

}  // namespace

}  // namespace webnn::py

using namespace webnn;
using namespace webnn::py;

NB_MODULE(_webnn, m) {
  m.doc() = "Native core of the webnn package (W3C WebNN API).";
  m.attr("__version__") = "0.1.0";

  m.def(
      "backends", []() { return Context::backend_names(); },
      "Names of the backends usable on this machine, in preference order.");

  nb::class_<ContextHandle> context(m, "MLContext");
  nb::class_<BuilderHandle> builder(m, "MLGraphBuilder");
  nb::class_<OperandHandle> operand(m, "MLOperand");
  nb::class_<GraphHandle> graph(m, "MLGraph");
  nb::class_<TensorHandle> tensor(m, "MLTensor");

  nb::class_<MLHandle>(m, "ML")
      .def(nb::init<>())
      .def(
          "create_context",
          [](const MLHandle&, nb::handle power_preference, nb::handle accelerated,
             nb::handle backend, nb::handle device_type) {
            reserve_python_objects("create_context");
            std::string pp = to_string(power_preference, "create_context: power_preference");
            bool acc = to_bool(accelerated, "create_context: accelerated");
            std::string be = to_string(backend, "create_context: backend");
            if (!device_type.is_none()) {
              acc = device_type_accelerated(to_string(device_type, "create_context: device_type"),
                                            acc);
            }
            return ContextHandle{unwrap(Context::create(pp, acc, be))};
          },
          "power_preference"_a = "default", "accelerated"_a = true, "backend"_a = "auto",
          "device_type"_a = nb::none(),
          nb::sig("def create_context(self, power_preference: str = 'default', "
                  "accelerated: bool = True, backend: str = 'auto', "
                  "device_type: str | None = None) -> MLContext"));

  context.def("__init__", [](ContextHandle*) { no_direct_construction("MLContext"); })
      .def_prop_ro("accelerated", [](const ContextHandle& c) { return c.context->accelerated(); })
      .def_prop_ro("power_preference",
                   [](const ContextHandle& c) { return c.context->power_preference(); })
      .def_prop_ro("backend", [](const ContextHandle& c) { return c.context->backend_name(); })
      .def_prop_ro("device_type",
                   [](const ContextHandle& c) { return c.context->accelerated() ? "gpu" : "cpu"; })
      .def("create_graph_builder",
           [](const ContextHandle& c) {
             reserve_python_objects("create_graph_builder");
             return BuilderHandle{c.context, c.context->create_graph_builder()};
           })
      .def(
          "create_tensor",
          [](const ContextHandle& c, nb::handle shape, nb::handle data_type, nb::handle readable,
             nb::handle writable, nb::handle exportable_to_gpu) {
            reserve_python_objects("create_tensor");
            auto dims = parse_tensor_shape(shape, "create_tensor: shape");
            DataType t = parse_data_type(data_type, "create_tensor");
            return TensorHandle{
                c.context, unwrap(c.context->create_tensor(
                               t, dims, to_bool(readable, "create_tensor: readable"),
                               to_bool(writable, "create_tensor: writable"),
                               to_bool(exportable_to_gpu, "create_tensor: exportable_to_gpu")))};
          },
          "shape"_a, "data_type"_a, "readable"_a = false, "writable"_a = false,
          "exportable_to_gpu"_a = false,
          nb::sig("def create_tensor(self, shape: collections.abc.Sequence[int], data_type: str, "
                  "readable: bool = False, writable: bool = False, "
                  "exportable_to_gpu: bool = False) -> MLTensor"))
      .def(
          "write_tensor",
          [](const ContextHandle& c, nb::handle t, nb::handle data) {
            TensorHandle& pt = tensor_arg(t, "write_tensor");
            check(c.context->check_writable(*pt.tensor));
            // Without the GIL: the copy waits for a dispatch that has the tensor bound
            // (Tensor::access), and the other Python threads go on meanwhile. `data` is
            // referenced by the caller, so the viewed buffer stays alive.
            Status s;
            if (std::optional<CarrierView> view = carrier_view(data, pt.tensor->data_type())) {
              nb::gil_scoped_release release;
              s = c.context->write_tensor(*pt.tensor, view->data, view->nbytes, view->count);
            } else {
              HostArray arr = adapt_array(data, pt.tensor->data_type(), "write_tensor");
              nb::gil_scoped_release release;
              s = c.context->write_tensor(*pt.tensor, arr.bytes.data(), arr.bytes.size(),
                                          arr.count);
            }
            check(s);
          },
          "tensor"_a, "data"_a,
          nb::sig("def write_tensor(self, tensor: MLTensor, data: typing.Any) -> None"))
      .def(
          "read_tensor",
          [](const ContextHandle& c, nb::handle t, nb::handle dtype) {
            TensorHandle& pt = tensor_arg(t, "read_tensor");
            DataType type = pt.tensor->data_type();
            if (is_4bit(type)) {  // packed bytes: unpacked into the array of the shape read
              // With the GIL (no resize_tensor in between): the bytes match that shape.
              std::vector<uint8_t> bytes = unwrap(c.context->read_tensor(*pt.tensor));
              return to_numpy(type, pt.tensor->shape(), bytes, dtype, "read_tensor");
            }
            check(c.context->check_readable(*pt.tensor));
            uint8_t* dst = nullptr;
            nb::object arr = empty_numpy(type, pt.tensor->shape(), &dst);
            // The copy runs without the GIL, as write_tensor's. A resize_tensor by another
            // thread in between makes read_tensor_into refuse (the sizes differ), it never
            // writes past the array sized here.
            const uint64_t nbytes = pt.tensor->byte_length();
            Status s;
            {
              nb::gil_scoped_release release;
              s = c.context->read_tensor_into(*pt.tensor, dst, nbytes);
            }
            check(s);
            return as_requested_dtype(std::move(arr), type, dtype, "read_tensor");
          },
          "tensor"_a, "dtype"_a = nb::none(),
          nb::sig("def read_tensor(self, tensor: MLTensor, dtype: typing.Any = None) -> "
                  "numpy.ndarray"))
      .def(
          "resize_tensor",
          [](const ContextHandle& c, nb::handle t, nb::handle shape) {
            TensorHandle& pt = tensor_arg(t, "resize_tensor");
            check(c.context->resize_tensor(*pt.tensor,
                                           parse_tensor_shape(shape, "resize_tensor: shape")));
          },
          "tensor"_a, "shape"_a,
          nb::sig("def resize_tensor(self, tensor: MLTensor, "
                  "shape: collections.abc.Sequence[int]) -> None"))
      .def(
          "set_tensor_capacity",
          [](const ContextHandle& c, nb::handle t, nb::handle shape) {
            TensorHandle& pt = tensor_arg(t, "set_tensor_capacity");
            check(c.context->set_tensor_capacity(
                *pt.tensor, parse_tensor_shape(shape, "set_tensor_capacity: max_shape")));
          },
          "tensor"_a, "max_shape"_a,
          nb::sig("def set_tensor_capacity(self, tensor: MLTensor, "
                  "max_shape: collections.abc.Sequence[int]) -> None"))
      .def(
          "dispatch",
          [](const ContextHandle& c, nb::handle g, nb::handle inputs, nb::handle outputs) {
            GraphHandle& pg = graph_arg(g, "dispatch");
            auto in = bindings_arg(inputs, "dispatch", "inputs");
            auto out = bindings_arg(outputs, "dispatch", "outputs");
            Status s;
            {
              nb::gil_scoped_release release;
              s = c.context->dispatch(*pg.graph, in.list, out.list);
            }
            check(s);
          },
          "graph"_a, "inputs"_a, "outputs"_a,
          nb::sig("def dispatch(self, graph: MLGraph, inputs: collections.abc.Mapping[str, "
                  "MLTensor], outputs: collections.abc.Mapping[str, MLTensor]) -> None"))
      .def(
          "compute",
          [](ContextHandle& c, nb::handle g, nb::handle inputs, nb::handle) {
            return compute(c, graph_arg(g, "compute"), inputs);
          },
          "graph"_a, "inputs"_a, "outputs"_a = nb::none(),
          nb::sig("def compute(self, graph: MLGraph, inputs: collections.abc.Mapping[str, "
                  "typing.Any], outputs: typing.Any = None) -> dict[str, numpy.ndarray]"))
      .def(
          "load_graph",
          [](const ContextHandle& c, nb::handle path) {
            reserve_python_objects("load_graph");
            // str, bytes or os.PathLike (TypeError otherwise), decoded as the OS does.
            std::string p =
                nb::cast<std::string>(nb::module_::import_("os").attr("fsdecode")(path));
            Expected<Graph> g = Status(ErrorKind::kInternal, "not loaded");
            {
              nb::gil_scoped_release release;
              g = load_graph_file(p);
            }
            Graph graph = unwrap(std::move(g));
            return GraphHandle{c.context, unwrap(c.context->compile(std::move(graph)))};
          },
          "path"_a, nb::sig("def load_graph(self, path: str | os.PathLike) -> MLGraph"))
      .def("op_support_limits",
           [](const ContextHandle& c) { return op_support_limits(*c.context); })
      .def("__repr__", [](const ContextHandle& c) {
        return std::string("MLContext(backend='") + c.context->backend_name() +
               "', accelerated=" + (c.context->accelerated() ? "True" : "False") + ")";
      });

  builder.def("__init__", [](BuilderHandle*) {
    throw_error(PyExc_RuntimeError,
                "MLGraphBuilder cannot be instantiated directly; use "
                "MLContext.create_graph_builder()");
  });
  builder
      .def(
          "input",
          [](BuilderHandle& self, nb::handle name, nb::handle shape, nb::handle data_type) {
            check_builder_usable(self);
            reserve_python_objects("input");
            std::string n = to_string(name, "input: name");
            Shape s = parse_shape(shape, "input '" + n + "': shape", true);
            DataType t = parse_data_type(data_type, "input '" + n + "'");
            return OperandHandle{self.builder, unwrap(self.builder->input(n, s, t))};
          },
          "name"_a, "shape"_a, "data_type"_a,
          nb::sig("def input(self, name: str, shape: collections.abc.Sequence[int | "
                  "dict[str, typing.Any]], data_type: str) -> MLOperand"))
      .def(
          "constant",
          [](BuilderHandle& self, nb::handle value, nb::handle shape, nb::handle data_type) {
            check_builder_usable(self);
            reserve_python_objects("constant");
            std::optional<DataType> t;
            if (!data_type.is_none()) t = parse_data_type(data_type, "constant");
            HostArray arr = adapt_array(value, t, "constant");
            Shape dims = to_shape(arr.shape);
            if (!shape.is_none()) dims = parse_shape(shape, "constant: shape", false);
            return OperandHandle{self.builder,
                                 unwrap(self.builder->constant({arr.data_type, dims},
                                                               std::move(arr.bytes), arr.count))};
          },
          "value"_a, "shape"_a = nb::none(), "data_type"_a = nb::none(),
          nb::sig("def constant(self, value: typing.Any, shape: collections.abc.Sequence[int] | "
                  "None = None, data_type: str | None = None) -> MLOperand"))
      .def(
          "operand_shape",
          [](BuilderHandle& self, nb::handle op) {
            check_builder_usable(self);
            OperandId id = operand_id(self, op, "operand_shape");
            return shape_to_python(unwrap(self.builder->operand_desc(id)).shape);
          },
          "operand"_a,
          nb::sig(
              "def operand_shape(self, operand: MLOperand) -> list[int | dict[str, typing.Any]]"))
      .def(
          "operand_data_type",
          [](BuilderHandle& self, nb::handle op) {
            check_builder_usable(self);
            OperandId id = operand_id(self, op, "operand_data_type");
            return std::string(data_type_name(unwrap(self.builder->operand_desc(id)).data_type));
          },
          "operand"_a, nb::sig("def operand_data_type(self, operand: MLOperand) -> str"))
      .def(
          "build",
          [](BuilderHandle& self, nb::handle outputs) {
            check_builder_usable(self);
            reserve_python_objects("build");
            auto outs = outputs_arg(self, outputs, "build");
            Graph g = unwrap(self.builder->finish(outs));
            return GraphHandle{self.context, unwrap(self.context->compile(std::move(g)))};
          },
          "outputs"_a,
          nb::sig("def build(self, outputs: collections.abc.Mapping[str, MLOperand]) -> MLGraph"))
      .def(
          "save",
          [](BuilderHandle& self, nb::handle outputs, nb::handle path) {
            check_builder_usable(self);
            auto outs = outputs_arg(self, outputs, "save");
            std::string p =
                nb::cast<std::string>(nb::module_::import_("os").attr("fsdecode")(path));
            // extract() does not consume the builder: it may be saved again, then built.
            Graph g = unwrap(self.builder->extract(outs));
            Status s;
            {
              nb::gil_scoped_release release;
              s = save_graph(g, p);
            }
            check(s);
          },
          "outputs"_a, "path"_a,
          nb::sig("def save(self, outputs: collections.abc.Mapping[str, MLOperand], "
                  "path: str | os.PathLike) -> None"));
  bind_operations(builder);

  operand.def("__init__", [](OperandHandle*) { no_direct_construction("MLOperand"); })
      .def("__repr__",
           [](const OperandHandle& o) { return "MLOperand(id=" + std::to_string(o.id) + ")"; });

  graph.def("__init__", [](GraphHandle*) { no_direct_construction("MLGraph"); })
      .def_prop_ro("input_descriptors",
                   [](const GraphHandle& g) { return descriptors(g.graph->graph(), true); })
      .def_prop_ro("output_descriptors",
                   [](const GraphHandle& g) { return descriptors(g.graph->graph(), false); })
      .def_prop_ro("operand_count",
                   [](const GraphHandle& g) { return g.graph->graph().operands.size(); })
      .def_prop_ro("operation_count",
                   [](const GraphHandle& g) { return g.graph->graph().nodes.size(); })
      .def_prop_ro("compile_stats",
                   [](const GraphHandle& g) {
                     // What the compiler did (graph/passes) and the latest plan's memory.
                     const CompileStats s = g.graph->stats();
                     nb::dict passes;
                     for (const auto& [name, n] : s.passes) passes[name.c_str()] = n;
                     nb::dict d;
                     d["nodes_before"] = s.nodes_before;
                     d["nodes_after"] = s.nodes_after;
                     d["passes"] = passes;
                     nb::dict ops;
                     for (const auto& [name, n] : s.ops_after) ops[name.c_str()] = n;
                     d["ops_after"] = ops;
                     d["fused_steps"] = s.fused_steps;
                     d["arena_bytes"] = s.arena_bytes;
                     d["unshared_bytes"] = s.unshared_bytes;
                     d["plans"] = s.plans;
                     d["shared_constants"] = s.shared_constants;
                     d["reused_prepared"] = s.reused_prepared;
                     d["constant_bytes"] = s.constant_bytes;
                     d["reused_constant_bytes"] = s.reused_constant_bytes;
                     return d;
                   })
      .def(
          "set_profiling", [](GraphHandle& g, bool on) { g.graph->set_profiling(on); },
          nb::arg("on"),
          "Time every node of later dispatches (clears earlier timings); see profile().")
      .def_prop_ro("profile",
                   [](const GraphHandle& g) {
                     // Per-node time of the latest profiled plan, in execution order.
                     const Profile p = g.graph->profile();
                     nb::list nodes;
                     for (const NodeProfile& n : p.nodes) {
                       nb::dict d;
                       d["op"] = n.op;
                       d["output"] = n.output;
                       d["shape"] = n.shape;
                       d["flops"] = n.flops;
                       d["total_ms"] = n.total_ns * 1e-6;
                       nodes.append(d);
                     }
                     nb::dict d;
                     d["runs"] = p.runs;
                     d["nodes"] = nodes;
                     return d;
                   })
      .def("get_input_names", [](const GraphHandle& g) { return g.graph->input_names(); })
      .def("get_output_names", [](const GraphHandle& g) { return g.graph->output_names(); })
      .def("__repr__", [](const GraphHandle& g) {
        auto list = [](const std::vector<std::string>& names) {
          std::string s = "[";
          for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
          return s + "]";
        };
        return "MLGraph(inputs=" + list(g.graph->input_names()) +
               ", outputs=" + list(g.graph->output_names()) + ")";
      });

  bind_introspection(graph);

  tensor.def("__init__", [](TensorHandle*) { no_direct_construction("MLTensor"); })
      .def_prop_ro("data_type",
                   [](const TensorHandle& t) { return data_type_name(t.tensor->data_type()); })
      .def_prop_ro("shape", [](const TensorHandle& t) { return t.tensor->shape(); })
      .def_prop_ro("size", [](const TensorHandle& t) { return t.tensor->element_count(); })
      .def_prop_ro("readable", [](const TensorHandle& t) { return t.tensor->readable(); })
      .def_prop_ro("writable", [](const TensorHandle& t) { return t.tensor->writable(); })
      .def_prop_ro("exportable_to_gpu",
                   [](const TensorHandle& t) { return t.tensor->exportable_to_gpu(); })
      .def("destroy", [](TensorHandle& t) { t.tensor->destroy(); })
      .def("__repr__", [](const TensorHandle& t) {
        return std::string("MLTensor(dtype='") + data_type_name(t.tensor->data_type()) +
               "', shape=" + python_list(t.tensor->shape()) +
               ", readable=" + (t.tensor->readable() ? "True" : "False") +
               ", writable=" + (t.tensor->writable() ? "True" : "False") + ")";
      });
}
