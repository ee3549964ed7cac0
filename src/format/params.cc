#include "format/params.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace webnn::format {

namespace {

enum class Category { kOperand, kOperandList, kOther };

struct FieldInfo {
  const char* name;
  unsigned flags;
  Category category;
};

struct FieldLister {
  std::vector<FieldInfo> fields;
  void operator()(const char* n, OperandRef&, unsigned f = 0, const char* = nullptr) {
    fields.push_back({n, f, Category::kOperand});
  }
  void operator()(const char* n, OperandList&, unsigned f = 0, const char* = nullptr) {
    fields.push_back({n, f, Category::kOperandList});
  }
  template <class T>
  void operator()(const char* n, T&, unsigned f = 0, const char* = nullptr) {
    fields.push_back({n, f, Category::kOther});
  }
};

std::vector<FieldInfo> fields_of(const OpParams& params) {
  FieldLister lister;
  visit_params(params, lister);
  return lister.fields;
}

// Keys older writers emitted that carry no information (format.md §5.3).
bool is_ignored_legacy_key(std::string_view key) {
  return key == "hasBias" || key == "hasScale" || key == "has_bias" || key == "has_scale" ||
         key == "batchDimensions" || key == "batch_dimensions";
}

// Optional list fields where an empty list is meaningful (reduce over no axes, identity
// permutation of a scalar); for the others upstream's `[]` means "absent" (format.md §10).
bool empty_list_is_meaningful(std::string_view field) {
  return field == "axes" || field == "permutation";
}

// Optional operands the canonical form writes positionally (format.md §5.3 quantize rows).
bool positional_optional_operand(std::string_view field) { return field == "zero_point"; }

// ---- reading ------------------------------------------------------------------------------

struct FieldAssigner {
  const std::map<std::string, Value>& values;  // field name -> value
  const NameResolver& resolve;
  const std::string& source;
  std::string op;
  Status status;

  template <class T>
  void operator()(const char* name, T& field, unsigned flags = 0, const char* = nullptr) {
    if (!status.is_ok()) return;
    auto it = values.find(name);
    if (it == values.end()) return;
    const Value& v = it->second;
    // null means "use the default"; params start out holding the defaults.
    if (v.kind == Value::Kind::kNull) return;
    status = convert(v, field, flags, name);
  }

  template <class... Args>
  Status bad(const Value& v, const char* name, const Args&... args) {
    return error_at(source, v.loc, op, ": option '", file_key(name), "' ", args...);
  }

  Status operand(const Value& v, const char* name, OperandRef& out) {
    if (!v.is_name()) return bad(v, name, "must name a value (got ", v.kind_name(), ")");
    auto id = resolve(v.s);
    if (!id) return error_at(source, v.loc, op, ": unknown value '", v.s, "'");
    out = OperandRef{*id};
    return Status::ok();
  }
  Status convert(const Value& v, OperandRef& f, unsigned, const char* name) {
    return operand(v, name, f);
  }
  Status convert(const Value& v, OperandList& f, unsigned, const char* name) {
    if (v.kind != Value::Kind::kArray) return bad(v, name, "must be a list of value names");
    f.clear();
    for (const Value& item : v.items) {
      OperandRef r;
      WEBNN_RETURN_IF_ERROR(operand(item, name, r));
      f.push_back(r);
    }
    return Status::ok();
  }
  Status integer(const Value& v, const char* name, unsigned flags, int64_t& out) {
    if (v.kind != Value::Kind::kInt) {
      if (v.kind == Value::Kind::kUint) return bad(v, name, "is out of the int64 range");
      return bad(v, name, "must be an integer (got ", v.kind_name(), ")");
    }
    if ((flags & kUnsigned) && v.i < 0) return bad(v, name, "must not be negative (got ", v.i, ")");
    out = v.i;
    return Status::ok();
  }
  Status convert(const Value& v, int64_t& f, unsigned flags, const char* name) {
    return integer(v, name, flags, f);
  }
  Status convert(const Value& v, double& f, unsigned, const char* name) {
    if (!v.is_number()) return bad(v, name, "must be a number (got ", v.kind_name(), ")");
    f = v.as_double();
    return Status::ok();
  }
  Status convert(const Value& v, bool& f, unsigned, const char* name) {
    if (v.kind != Value::Kind::kBool) return bad(v, name, "must be true or false");
    f = v.b;
    return Status::ok();
  }
  Status convert(const Value& v, std::string& f, unsigned, const char* name) {
    if (v.kind != Value::Kind::kString) return bad(v, name, "must be a string");
    f = v.s;
    return Status::ok();
  }
  Status convert(const Value& v, DataType& f, unsigned, const char* name) {
    if (v.kind != Value::Kind::kString) return bad(v, name, "must be a data type string");
    auto t = parse_data_type(v.s);
    if (!t) t = short_type_name(v.s);
    if (!t) return bad(v, name, "has an unknown data type \"", v.s, "\"");
    f = *t;
    return Status::ok();
  }
  Status int_list(const Value& v, const char* name, unsigned flags, IntList& out) {
    if (v.kind != Value::Kind::kArray) return bad(v, name, "must be a list of integers");
    out.clear();
    for (const Value& item : v.items) {
      int64_t x = 0;
      WEBNN_RETURN_IF_ERROR(integer(item, name, flags, x));
      out.push_back(x);
    }
    return Status::ok();
  }
  Status convert(const Value& v, IntList& f, unsigned flags, const char* name) {
    return int_list(v, name, flags, f);
  }
  Status convert(const Value& v, OptIntList& f, unsigned flags, const char* name) {
    if (v.kind == Value::Kind::kArray && v.items.empty() && !empty_list_is_meaningful(name)) {
      f.reset();
      return Status::ok();
    }
    f.emplace();
    return int_list(v, name, flags, *f);
  }
  Status convert(const Value& v, OptDoubleList& f, unsigned, const char* name) {
    if (v.kind != Value::Kind::kArray) return bad(v, name, "must be a list of numbers");
    if (v.items.empty()) {
      f.reset();
      return Status::ok();
    }
    f.emplace();
    for (const Value& item : v.items) {
      if (!item.is_number()) return bad(item, name, "must be a list of numbers");
      f->push_back(item.as_double());
    }
    return Status::ok();
  }
  Status convert(const Value& v, OptStringList& f, unsigned, const char* name) {
    if (v.kind != Value::Kind::kArray) return bad(v, name, "must be a list of strings");
    if (v.items.empty()) {
      f.reset();
      return Status::ok();
    }
    f.emplace();
    for (const Value& item : v.items) {
      if (item.kind != Value::Kind::kString) return bad(item, name, "must be a list of strings");
      f->push_back(item.s);
    }
    return Status::ok();
  }
  Status convert(const Value& v, Shape& f, unsigned, const char* name) {
    if (v.kind != Value::Kind::kArray) return bad(v, name, "must be a list of dimensions");
    if (v.items.size() > kMaxRank) return bad(v, name, "has more than ", kMaxRank, " dimensions");
    f.clear();
    for (const Value& d : v.items) {
      if (d.kind == Value::Kind::kInt) {
        f.push_back(Dim(d.i));
        continue;
      }
      const Value* dn = d.kind == Value::Kind::kObject ? d.find("name") : nullptr;
      const Value* dm = d.kind == Value::Kind::kObject ? d.find("maxSize") : nullptr;
      if (!dm && d.kind == Value::Kind::kObject) dm = d.find("max_size");
      if (!dn || !dm || dn->kind != Value::Kind::kString || dm->kind != Value::Kind::kInt ||
          d.members.size() != 2) {
        return bad(d, name, "entries must be integers or {\"name\": string, \"maxSize\": int}");
      }
      f.push_back(Dim(dn->s, dm->i));
    }
    return Status::ok();
  }
  Status scalar(const Value& v, const char* name, Scalar& out) {
    if (v.kind == Value::Kind::kInt) {
      out = Scalar::from_int(v.i);
    } else if (v.kind == Value::Kind::kUint) {
      out = Scalar::from_uint(v.u);
    } else if (v.kind == Value::Kind::kDouble) {
      out = Scalar::from_double(v.d);
    } else {
      return bad(v, name, "must be a number (got ", v.kind_name(), ")");
    }
    return Status::ok();
  }
  Status convert(const Value& v, Scalar& f, unsigned, const char* name) {
    return scalar(v, name, f);
  }
  Status convert(const Value& v, OptScalar& f, unsigned, const char* name) {
    f.emplace();
    return scalar(v, name, *f);
  }
  Status convert(const Value& v, Splits& f, unsigned flags, const char* name) {
    if (v.kind == Value::Kind::kArray) {
      f = Splits{false, 0, {}};
      return int_list(v, name, kUnsigned, f.sizes);
    }
    f = Splits{true, 0, {}};
    return integer(v, name, kUnsigned, f.count);
  }
};

// ---- writing ------------------------------------------------------------------------------

struct FieldValue {
  const char* name;
  unsigned flags;
  Category category;
  Value value;
};

struct FieldCollector {
  const std::function<std::string(OperandId)>* name_of;  // null while collecting defaults
  std::vector<FieldValue> out;

  void add(const char* n, unsigned f, Category c, Value v) {
    out.push_back({n, f, c, std::move(v)});
  }
  Value ident(OperandRef r) const {
    if (!r.present() || !name_of) return Value::null();
    return Value::string((*name_of)(r.id), Value::Kind::kIdent);
  }
  static Value ints(const IntList& l) {
    Value a = Value::array();
    for (int64_t x : l) a.items.push_back(Value::integer(x));
    return a;
  }
  static Value scalar(const Scalar& s) {
    switch (s.kind) {
      case Scalar::Kind::kInt:
        return Value::integer(s.i);
      case Scalar::Kind::kUint:
        return s.u > static_cast<uint64_t>(INT64_MAX) ? Value::uinteger(s.u)
                                                      : Value::integer(static_cast<int64_t>(s.u));
      case Scalar::Kind::kFloat:
        break;
    }
    return Value::number(s.f);
  }

  void operator()(const char* n, OperandRef& r, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOperand, ident(r));
  }
  void operator()(const char* n, OperandList& l, unsigned f = 0, const char* = nullptr) {
    Value a = Value::array();
    for (OperandRef r : l) a.items.push_back(ident(r));
    add(n, f, Category::kOperandList, std::move(a));
  }
  void operator()(const char* n, int64_t& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, Value::integer(v));
  }
  void operator()(const char* n, double& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, Value::number(v));
  }
  void operator()(const char* n, bool& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, Value::boolean(v));
  }
  void operator()(const char* n, std::string& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, Value::string(v));
  }
  void operator()(const char* n, DataType& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, Value::string(data_type_name(v)));
  }
  void operator()(const char* n, IntList& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, ints(v));
  }
  void operator()(const char* n, OptIntList& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, v ? ints(*v) : Value::null());
  }
  void operator()(const char* n, OptDoubleList& v, unsigned f = 0, const char* = nullptr) {
    Value a = Value::null();
    if (v) {
      a = Value::array();
      for (double x : *v) a.items.push_back(Value::number(x));
    }
    add(n, f, Category::kOther, std::move(a));
  }
  void operator()(const char* n, OptStringList& v, unsigned f = 0, const char* = nullptr) {
    Value a = Value::null();
    if (v) {
      a = Value::array();
      for (const std::string& x : *v) a.items.push_back(Value::string(x));
    }
    add(n, f, Category::kOther, std::move(a));
  }
  void operator()(const char* n, Shape& v, unsigned f = 0, const char* = nullptr) {
    Value a = Value::array();
    for (const Dim& d : v) {
      if (d.is_static()) {
        a.items.push_back(Value::integer(d.value));
        continue;
      }
      Value o = Value::object();
      o.members.emplace_back("name", Value::string(d.name));
      o.members.emplace_back("maxSize", Value::integer(d.value));
      a.items.push_back(std::move(o));
    }
    add(n, f, Category::kOther, std::move(a));
  }
  void operator()(const char* n, Scalar& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, scalar(v));
  }
  void operator()(const char* n, OptScalar& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, v ? scalar(*v) : Value::null());
  }
  void operator()(const char* n, Splits& v, unsigned f = 0, const char* = nullptr) {
    add(n, f, Category::kOther, v.is_count ? Value::integer(v.count) : ints(v.sizes));
  }
};

// Non-finite doubles have no text form: unbounded clamp limits become null (= absent),
// anything else cannot be saved (format.md §5.2).
Status check_finite(Value& v, std::string_view field, OpKind kind) {
  if (v.kind == Value::Kind::kDouble && !std::isfinite(v.d)) {
    if ((field == "min_value" && v.d < 0) || (field == "max_value" && v.d > 0)) {
      v = Value::null();
      return Status::ok();
    }
    return make_error(ErrorKind::kValue, op_spec_name(kind), ": option '", file_key(field), "' is ",
                      std::isnan(v.d) ? "NaN" : "infinite",
                      ", which the text format cannot represent");
  }
  for (Value& item : v.items) WEBNN_RETURN_IF_ERROR(check_finite(item, field, kind));
  return Status::ok();
}

}  // namespace

std::string file_key(std::string_view field_name) {
  if (field_name == "data_type") return "to";
  return camel_case(field_name);
}

Status apply_args(OpKind kind, const std::vector<ArgDoc>& args, const NameResolver& resolve,
                  const std::string& source, const Loc& stmt_loc, OpParams& params,
                  std::string& label) {
  const std::string op = op_spec_name(kind);
  std::vector<FieldInfo> fields = fields_of(params);
  std::map<std::string, Value> values;     // field name -> value
  std::map<std::string, bool> positional;  // operand fields given positionally
  std::map<std::string, bool> named;
  size_t next = 0;
  for (const ArgDoc& a : args) {
    if (!a.key.empty()) continue;
    while (next < fields.size() && fields[next].category == Category::kOther) ++next;
    if (next >= fields.size()) {
      return error_at(source, a.loc, op, ": too many positional operands");
    }
    const FieldInfo& f = fields[next];
    if (f.category == Category::kOperandList) {
      Value& list = values[f.name];
      list.kind = Value::Kind::kArray;
      list.loc = a.loc;
      list.items.push_back(a.value);
    } else {
      values[f.name] = a.value;
      ++next;
    }
    positional[f.name] = true;
  }
  for (const ArgDoc& a : args) {
    if (a.key.empty()) continue;
    if (a.key == "label") {
      if (a.value.kind == Value::Kind::kNull) continue;
      if (a.value.kind != Value::Kind::kString) {
        return error_at(source, a.value.loc, op, ": label must be a string");
      }
      label = a.value.s;
      continue;
    }
    if (is_ignored_legacy_key(a.key)) continue;
    const FieldInfo* field = nullptr;
    for (const FieldInfo& f : fields) {
      // Aliases: the plain camelCase (cast's legacy `dataType`) and the snake_case name.
      if (a.key == file_key(f.name) || a.key == camel_case(f.name) || a.key == f.name) field = &f;
    }
    if (!field) return error_at(source, a.loc, op, ": unknown option '", a.key, "'");
    if (named[field->name]) {
      return error_at(source, a.loc, op, ": option '", file_key(field->name), "' given twice");
    }
    named[field->name] = true;
    if (field->category == Category::kOperand) {
      // Legacy exporters wrote operand indices as integers next to the positional operand.
      if (a.value.is_integer()) {
        if (positional[field->name]) continue;
        return error_at(source, a.value.loc, op, ": option '", a.key,
                        "' must name a value (integer operand indices are not supported)");
      }
      if (a.value.kind == Value::Kind::kNull && positional[field->name]) continue;
    } else if (positional[field->name]) {
      return error_at(source, a.loc, op, ": option '", a.key, "' given twice");
    }
    values[field->name] = a.value;
  }
  for (const FieldInfo& f : fields) {
    if (!(f.flags & kRequired)) continue;
    auto it = values.find(f.name);
    if (it == values.end() || it->second.kind == Value::Kind::kNull) {
      if (f.category == Category::kOther) {
        return error_at(source, stmt_loc, op, ": missing required argument '", file_key(f.name),
                        "'");
      }
      return error_at(source, stmt_loc, op, ": missing operand '", file_key(f.name), "'");
    }
  }
  FieldAssigner assigner{values, resolve, source, op, Status::ok()};
  visit_params(params, assigner);
  return assigner.status;
}

Expected<std::vector<std::string>> format_args(
    const Node& node, const std::function<std::string(OperandId)>& name_of) {
  FieldCollector actual{&name_of, {}}, defaults{nullptr, {}};
  visit_params(node.params, actual);
  visit_params(default_params(node.kind), defaults);
  std::vector<std::string> positional, required;
  struct Option {
    unsigned order;  // position in the spec's options dictionary (options.h dict_order)
    std::string key, text;
  };
  std::vector<Option> options;
  for (size_t k = 0; k < actual.out.size(); ++k) {
    FieldValue& f = actual.out[k];
    std::string key = file_key(f.name);
    if (f.category == Category::kOperandList) {
      for (const Value& item : f.value.items) positional.push_back(item.s);
      continue;
    }
    if (f.category == Category::kOperand) {
      if (f.value.kind == Value::Kind::kNull) continue;
      if ((f.flags & kRequired) || positional_optional_operand(f.name)) {
        positional.push_back(f.value.s);
      } else {
        options.push_back({dict_order_of(f.flags), key, f.value.s});
      }
      continue;
    }
    WEBNN_RETURN_IF_ERROR(check_finite(f.value, f.name, node.kind));
    if (f.flags & kRequired) {
      required.push_back(key + "=" + format_value(f.value));
    } else if (!f.value.same_as(defaults.out[k].value) && f.value.kind != Value::Kind::kNull) {
      options.push_back({dict_order_of(f.flags), key, format_value(f.value)});
    }
  }
  // Options in the order of the spec's dictionary (format.md §5.3); structs without one keep
  // the visit order (all positions 0).
  std::stable_sort(options.begin(), options.end(),
                   [](const Option& a, const Option& b) { return a.order < b.order; });
  std::vector<std::string> out = std::move(positional);
  for (std::string& r : required) out.push_back(std::move(r));
  for (const Option& o : options) out.push_back(o.key + "=" + o.text);
  if (!node.label.empty()) out.push_back("label=" + quote_text_string(node.label));
  return out;
}

std::string quote_text_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string format_value(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kBool:
      return v.b ? "true" : "false";
    case Value::Kind::kInt:
      return std::to_string(v.i);
    case Value::Kind::kUint:
      return std::to_string(v.u);
    case Value::Kind::kDouble:
      return format_double(v.d);
    case Value::Kind::kString:
      return quote_text_string(v.s);
    case Value::Kind::kIdent:
      return v.s;
    case Value::Kind::kArray: {
      std::string out = "[";
      for (size_t k = 0; k < v.items.size(); ++k) {
        if (k) out += ", ";
        out += format_value(v.items[k]);
      }
      return out + "]";
    }
    case Value::Kind::kObject: {
      std::string out = "{";
      for (size_t k = 0; k < v.members.size(); ++k) {
        if (k) out += ", ";
        out += quote_text_string(v.members[k].first) + ": " + format_value(v.members[k].second);
      }
      return out + "}";
    }
  }
  return "null";
}

}  // namespace webnn::format
