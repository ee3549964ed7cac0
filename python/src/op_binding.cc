#include "op_binding.h"

#include <nanobind/stl/string.h>

#include <map>
#include <sstream>

#include "convert.h"
#include "errors.h"
#include "instance_table.h"

namespace webnn::py {

namespace {

struct FieldInfo {
  std::string name;
  unsigned flags;
  std::string alias;
};

// Collects the fields of a params struct in visit order.
struct FieldLister {
  std::vector<FieldInfo> fields;
  template <class T>
  void operator()(const char* name, T&, unsigned flags = 0, const char* alias = nullptr) {
    fields.push_back({name, flags, alias ? alias : ""});
  }
};

std::vector<FieldInfo> fields_of(OpKind kind) {
  FieldLister lister;
  visit_params(default_params(kind), lister);
  return lister.fields;
}

// Assigns Python values to params fields, converting each by the field's C++ type. None never
// reaches it: call_operation() drops None options (the default stays) and rejects required ones.
struct FieldAssigner {
  const BuilderHandle& self;
  const std::map<std::string, nb::handle>& values;
  std::string op;

  std::string what(const char* name) const { return op + ": " + name; }
  bool find(const char* name, nb::handle& out) const {
    auto it = values.find(name);
    if (it == values.end()) return false;
    out = it->second;
    return true;
  }

  void operator()(const char* name, OperandRef& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (!find(name, h)) return;
    f = OperandRef{operand_id(self, h, what(name))};
  }
  void operator()(const char* name, OperandList& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (!find(name, h)) return;
    f.clear();
    for (nb::handle item : to_sequence(h, what(name))) {
      f.push_back(OperandRef{operand_id(self, item, what(name))});
    }
  }
  void operator()(const char* name, int64_t& f, unsigned flags = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = to_int64(h, what(name), flags & kUnsigned);
  }
  void operator()(const char* name, double& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = to_double(h, what(name));
  }
  void operator()(const char* name, bool& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = to_bool(h, what(name));
  }
  void operator()(const char* name, std::string& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = to_string(h, what(name));
  }
  void operator()(const char* name, DataType& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = parse_data_type(h, what(name));
  }
  void operator()(const char* name, IntList& f, unsigned flags = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = int_list(h, name, flags);
  }
  void operator()(const char* name, OptIntList& f, unsigned flags = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = int_list(h, name, flags);
  }
  void operator()(const char* name, OptDoubleList& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (!find(name, h)) return;
    f.emplace();
    for (nb::handle item : to_sequence(h, what(name))) f->push_back(to_double(item, what(name)));
  }
  void operator()(const char* name, OptStringList& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (!find(name, h)) return;
    f.emplace();
    for (nb::handle item : to_sequence(h, what(name))) f->push_back(to_string(item, what(name)));
  }
  void operator()(const char* name, Shape& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = parse_shape(h, what(name), true);
  }
  void operator()(const char* name, Scalar& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = scalar(h, name);
  }
  void operator()(const char* name, OptScalar& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (find(name, h)) f = scalar(h, name);
  }
  void operator()(const char* name, Splits& f, unsigned = 0, const char* = nullptr) {
    nb::handle h;
    if (!find(name, h)) return;
    if (is_python_int(h)) {
      f = Splits{true, to_int64(h, what(name), true), {}};
    } else if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
      f = Splits{false, 0, int_list(h, name, kUnsigned)};
    } else {
      throw_error(PyExc_TypeError, what(name) + " must be an int or a list of ints");
    }
  }

  IntList int_list(nb::handle h, const char* name, unsigned flags) const {
    IntList out;
    for (nb::handle item : to_sequence(h, what(name))) {
      out.push_back(to_int64(item, what(name), flags & kUnsigned));
    }
    return out;
  }
  // Integers stay exact (int64, or uint64 above INT64_MAX); floats stay double.
  Scalar scalar(nb::handle h, const char* name) const {
    if (is_python_int(h)) {
      nb::object index = nb::steal(PyNumber_Index(h.ptr()));
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
      if (overflow == 0) return Scalar::from_int(v);
      unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
      if (PyErr_Occurred()) {
        PyErr_Clear();
        throw_error(PyExc_ValueError, what(name) + " is out of the 64-bit integer range");
      }
      return Scalar::from_uint(u);
    }
    return Scalar::from_double(to_double(h, what(name)));
  }
};

nb::object call_operation(BuilderHandle& self, OpKind kind, nb::args args, nb::kwargs kwargs) {
  check_builder_usable(self);
  const std::string op = op_python_name(kind);
  reserve_python_objects(op.c_str());  // before the node is added (see multi-output below)
  std::vector<FieldInfo> fields = fields_of(kind);
  std::map<std::string, nb::handle> values;
  std::string label;
  size_t positional = 0;
  // pywebnn's pad(input, padding, mode, value): a str third argument is the mode, and so is a
  // None one followed by a numeric value (the spec form's fourth argument is the str mode).
  if (kind == OpKind::kPad && args.size() >= 3 &&
      (PyUnicode_Check(args[2].ptr()) || (args[2].is_none() && args.size() == 4 &&
                                          !args[3].is_none() && !PyUnicode_Check(args[3].ptr())))) {
    if (args.size() > 4) throw_error(PyExc_TypeError, "pad() takes at most 4 positional arguments");
    values["mode"] = args[2];
    if (args.size() == 4) values["value"] = args[3];
    args = nb::steal<nb::args>(PyTuple_GetSlice(args.ptr(), 0, 2));
  }
  for (nb::handle a : args) {
    while (positional < fields.size() && (fields[positional].flags & kKeywordOnly)) ++positional;
    if (positional >= fields.size()) {
      throw_error(PyExc_TypeError, op + "() takes at most " + std::to_string(fields.size()) +
                                       " positional arguments");
    }
    values[fields[positional++].name] = a;
  }
  for (auto [key, value] : kwargs) {
    std::string k = nb::cast<std::string>(key);
    if (k == "label") {
      if (!value.is_none()) label = to_string(value, op + ": label");
      continue;
    }
    const FieldInfo* field = nullptr;
    for (const FieldInfo& f : fields) {
      if (f.name == k || (!f.alias.empty() && f.alias == k)) field = &f;
    }
    if (!field) {
      throw_error(PyExc_TypeError, op + "() got an unexpected keyword argument '" + k + "'");
    }
    if (values.count(field->name)) {
      throw_error(PyExc_TypeError,
                  op + "() got multiple values for argument '" + field->name + "'");
    }
    values[field->name] = value;
  }
  // None for an optional argument means "absent": the default applies (ops.md §1.2). Required
  // arguments have no default, so None there is a type error.
  for (const FieldInfo& f : fields) {
    auto it = values.find(f.name);
    if (it != values.end() && it->second.is_none()) {
      if (f.flags & kRequired) {
        throw_error(PyExc_TypeError,
                    op + "(): argument '" + f.name + "' is required and cannot be None");
      }
      values.erase(it);
    }
    if ((f.flags & kRequired) && !values.count(f.name)) {
      throw_error(PyExc_TypeError, op + "() missing required argument '" + f.name + "'");
    }
  }
  OpParams params = default_params(kind);
  FieldAssigner assigner{self, values, op};
  visit_params(params, assigner);
  std::vector<OperandId> outs = unwrap(self.builder->add_op(kind, std::move(params), label));
  if (!op_multi_output(kind)) return nb::cast(OperandHandle{self.builder, outs[0]});
  reserve_python_objects(op.c_str(), outs.size());
  nb::list result;
  for (OperandId id : outs) result.append(nb::cast(OperandHandle{self.builder, id}));
  return result;
}

// ---- signature text --------------------------------------------------------------------

std::string py_repr(double v) { return nb::cast<std::string>(nb::repr(nb::float_(v))); }

struct SignatureWriter {
  std::vector<std::string> positional, keyword_only;
  void add(const char* name, unsigned flags, const std::string& type, const std::string& dflt) {
    std::string text = std::string(name) + ": " + type;
    if (!(flags & kRequired)) text += " = " + dflt;
    (flags & kKeywordOnly ? keyword_only : positional).push_back(text);
  }
  void operator()(const char* n, OperandRef&, unsigned f = 0, const char* = nullptr) {
    add(n, f, f & kRequired ? "MLOperand" : "MLOperand | None", "None");
  }
  void operator()(const char* n, OperandList&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "collections.abc.Sequence[MLOperand]", "");
  }
  void operator()(const char* n, int64_t& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, "int", std::to_string(v));
  }
  void operator()(const char* n, double& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, "float", py_repr(v));
  }
  void operator()(const char* n, bool& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, "bool", v ? "True" : "False");
  }
  void operator()(const char* n, std::string& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, "str", "'" + v + "'");
  }
  void operator()(const char* n, DataType& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, "str", std::string("'") + data_type_name(v) + "'");
  }
  void operator()(const char* n, IntList&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "collections.abc.Sequence[int]", "");
  }
  void operator()(const char* n, OptIntList&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "collections.abc.Sequence[int] | None", "None");
  }
  void operator()(const char* n, OptDoubleList&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "collections.abc.Sequence[float] | None", "None");
  }
  void operator()(const char* n, OptStringList&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "collections.abc.Sequence[str] | None", "None");
  }
  void operator()(const char* n, Shape&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "collections.abc.Sequence[int | dict[str, typing.Any]]", "");
  }
  void operator()(const char* n, Scalar& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, "int | float", v.kind == Scalar::Kind::kFloat ? py_repr(v.f) : std::to_string(v.i));
  }
  void operator()(const char* n, OptScalar&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "int | float | None", "None");
  }
  void operator()(const char* n, Splits&, unsigned f = 0, const char* = nullptr) {
    add(n, f, "int | collections.abc.Sequence[int]", "");
  }
};

}  // namespace

void check_builder_usable(const BuilderHandle& self) {
  if (self.builder->built()) {
    throw_error(PyExc_RuntimeError, "MLGraphBuilder: build() has already been called");
  }
}

OperandId operand_id(const BuilderHandle& self, nb::handle value, const std::string& what) {
  if (!nb::isinstance<OperandHandle>(value)) {
    throw_error(PyExc_TypeError, what + " must be an MLOperand (got " +
                                     nb::cast<std::string>(nb::type_name(value.type())) + ")");
  }
  const OperandHandle& operand = nb::cast<const OperandHandle&>(value);
  if (operand.builder != self.builder) {
    throw_error(PyExc_ValueError, what + ": operand was created by another MLGraphBuilder");
  }
  return operand.id;
}

std::string op_signature(OpKind kind, const char* python_name) {
  SignatureWriter w;
  visit_params(default_params(kind), w);
  std::string text = std::string("def ") + python_name + "(self";
  for (const std::string& p : w.positional) text += ", " + p;
  text += ", *";
  for (const std::string& p : w.keyword_only) text += ", " + p;
  text += ", label: str = '') -> ";
  text += op_multi_output(kind) ? "list[MLOperand]" : "MLOperand";
  return text;
}

void bind_operations(nb::class_<BuilderHandle>& cls) {
  auto bind = [&](OpKind kind, const char* name) {
    // nb::sig keeps a pointer: the texts live as long as the module.
    static std::vector<std::unique_ptr<std::string>> signatures;
    signatures.push_back(std::make_unique<std::string>(op_signature(kind, name)));
    cls.def(
        name,
        [kind](BuilderHandle& self, nb::args args, nb::kwargs kwargs) {
          return call_operation(self, kind, args, kwargs);
        },
        nb::sig(signatures.back()->c_str()));
  };
  for (int i = 0; i < kOpCount; ++i) {
    auto kind = static_cast<OpKind>(i);
    bind(kind, op_python_name(kind));
  }
  bind(OpKind::kWhere, "where_");  // pywebnn's spelling
}

}  // namespace webnn::py
