// The JSON form `webnn-graph-json` (format.md §8) -> GraphDoc.
#include "format/document.h"
#include "format/json.h"

namespace webnn::format {

namespace {

class JsonGraphReader {
 public:
  explicit JsonGraphReader(const std::string& source) : source_(source) {}

  Expected<GraphDoc> read(const Value& root) {
    GraphDoc doc;
    doc.source = source_;
    if (root.kind != Value::Kind::kObject) return error(root, "the graph must be a JSON object");
    for (const auto& [key, v] : root.members) {
      if (key == "format") {
        if (v.kind != Value::Kind::kString || v.s != "webnn-graph-json") {
          return error(v, "\"format\" must be \"webnn-graph-json\"");
        }
      } else if (key == "version") {
        if (!v.is_integer() || (v.i != 1 && v.i != 2) || v.kind == Value::Kind::kUint) {
          return error(v, "unsupported format version (this reader accepts 1 and 2)");
        }
      } else if (key == "name") {
        WEBNN_RETURN_IF_ERROR(string_of(v, "\"name\"", doc.name));
      } else if (key == "quantized") {
        if (v.kind == Value::Kind::kNull) continue;
        if (v.kind != Value::Kind::kBool) return error(v, "\"quantized\" must be a boolean");
        doc.quantized = v.b;
      } else if (key == "inputs") {
        WEBNN_RETURN_IF_ERROR(read_decls(v, false, doc.inputs));
      } else if (key == "consts") {
        WEBNN_RETURN_IF_ERROR(read_decls(v, true, doc.consts));
      } else if (key == "nodes") {
        WEBNN_RETURN_IF_ERROR(read_nodes(v, doc));
      } else if (key == "outputs") {
        WEBNN_RETURN_IF_ERROR(read_outputs(v, doc));
      } else {
        return error(v, "unknown top-level key \"", key, "\"");
      }
    }
    return doc;
  }

 private:
  template <class... Args>
  Status error(const Value& at, const Args&... args) {
    return error_at(source_, at.loc, args...);
  }
  Status string_of(const Value& v, const char* what, std::string& out) {
    if (v.kind != Value::Kind::kString) return error(v, what, " must be a string");
    out = v.s;
    return Status::ok();
  }

  Status read_shape(const Value& v, bool is_const, DeclDoc& d) {
    if (v.kind != Value::Kind::kArray) return error(v, "\"shape\" must be an array");
    if (v.items.size() > kMaxRank) return error(v, "rank exceeds the maximum of ", kMaxRank);
    for (const Value& dim : v.items) {
      if (dim.kind == Value::Kind::kInt) {
        d.shape.push_back(Dim(dim.i));
        continue;
      }
      if (dim.kind != Value::Kind::kObject) {
        return error(dim, "a dimension must be an integer or {\"name\", \"maxSize\"}");
      }
      if (is_const) return error(dim, "dynamic dimensions are not allowed in constants");
      const Value* name = dim.find("name");
      const Value* max = dim.find("maxSize");
      if (!max) max = dim.find("max_size");
      if (!name || name->kind != Value::Kind::kString || !max || max->kind != Value::Kind::kInt ||
          dim.members.size() != 2) {
        return error(dim, "a dynamic dimension is {\"name\": string, \"maxSize\": integer}");
      }
      d.shape.push_back(Dim(name->s, max->i));
    }
    return Status::ok();
  }

  Status read_type(const Value& v, DataType& out) {
    if (v.kind != Value::Kind::kString) return error(v, "\"dataType\" must be a string");
    auto t = parse_data_type(v.s);
    if (!t) t = short_type_name(v.s);
    if (!t) return error(v, "unknown data type \"", v.s, "\"");
    out = *t;
    return Status::ok();
  }

  Status read_init(const Value& v, DeclDoc& d) {
    d.init.loc = v.loc;
    if (v.kind != Value::Kind::kObject) return error(v, "\"init\" must be an object");
    const Value* kind = v.find("kind");
    if (!kind || kind->kind != Value::Kind::kString) return error(v, "\"init\" needs a \"kind\"");
    if (kind->s == "weights") {
      d.init.kind = ConstInit::Kind::kWeights;
      const Value* ref = v.find("ref");
      if (!ref) return error(v, "weights \"init\" needs a \"ref\"");
      return string_of(*ref, "\"ref\"", d.init.key);
    }
    if (kind->s == "scalar") {
      d.init.kind = ConstInit::Kind::kScalar;
      const Value* value = v.find("value");
      if (!value || !value->is_number())
        return error(v, "scalar \"init\" needs a numeric \"value\"");
      d.init.scalar = *value;
      return Status::ok();
    }
    if (kind->s == "inlineBytes") {
      d.init.kind = ConstInit::Kind::kBytes;
      const Value* bytes = v.find("bytes");
      if (!bytes || bytes->kind != Value::Kind::kArray) {
        return error(v, "inlineBytes \"init\" needs a \"bytes\" array");
      }
      for (const Value& b : bytes->items) {
        if (b.kind != Value::Kind::kInt || b.i < 0 || b.i > 255) {
          return error(b, "byte values must be integers 0-255");
        }
        d.init.bytes.push_back(static_cast<uint8_t>(b.i));
      }
      return Status::ok();
    }
    return error(*kind, "unknown init kind \"", kind->s, "\"");
  }

  Status read_decls(const Value& v, bool is_const, std::vector<DeclDoc>& out) {
    if (v.kind == Value::Kind::kNull) return Status::ok();
    if (v.kind != Value::Kind::kObject) return error(v, "declarations must be a JSON object");
    for (const auto& [name, decl] : v.members) {
      DeclDoc d;
      d.name = name;
      d.loc = decl.loc;
      if (decl.kind != Value::Kind::kObject) return error(decl, "a declaration must be an object");
      const Value* type = decl.find("dataType");
      const Value* shape = decl.find("shape");
      if (!type || !shape) return error(decl, "a declaration needs \"dataType\" and \"shape\"");
      WEBNN_RETURN_IF_ERROR(read_type(*type, d.data_type));
      WEBNN_RETURN_IF_ERROR(read_shape(*shape, is_const, d));
      if (is_const) {
        d.init.kind = ConstInit::Kind::kWeights;
        d.init.key = name;
        d.init.loc = decl.loc;
        if (const Value* init = decl.find("init"); init && init->kind != Value::Kind::kNull) {
          WEBNN_RETURN_IF_ERROR(read_init(*init, d));
        }
      }
      out.push_back(std::move(d));
    }
    return Status::ok();
  }

  Status read_nodes(const Value& v, GraphDoc& doc) {
    if (v.kind == Value::Kind::kNull) return Status::ok();
    if (v.kind != Value::Kind::kArray) return error(v, "\"nodes\" must be an array");
    for (const Value& n : v.items) {
      if (n.kind != Value::Kind::kObject) return error(n, "a node must be an object");
      StmtDoc s;
      s.loc = n.loc;
      s.op_loc = n.loc;
      std::string id;
      const Value* op = n.find("op");
      if (!op) return error(n, "a node needs an \"op\"");
      WEBNN_RETURN_IF_ERROR(string_of(*op, "\"op\"", s.op));
      s.op_loc = op->loc;
      if (const Value* idv = n.find("id")) WEBNN_RETURN_IF_ERROR(string_of(*idv, "\"id\"", id));
      if (const Value* ins = n.find("inputs"); ins && ins->kind != Value::Kind::kNull) {
        if (ins->kind != Value::Kind::kArray) return error(*ins, "\"inputs\" must be an array");
        for (const Value& in : ins->items) {
          if (in.kind != Value::Kind::kString) return error(in, "inputs are value name strings");
          s.args.push_back({"", in, in.loc});
        }
      }
      if (const Value* opts = n.find("options"); opts && opts->kind != Value::Kind::kNull) {
        if (opts->kind != Value::Kind::kObject)
          return error(*opts, "\"options\" must be an object");
        for (const auto& [key, value] : opts->members) s.args.push_back({key, value, value.loc});
      }
      if (const Value* outs = n.find("outputs"); outs && outs->kind != Value::Kind::kNull) {
        if (outs->kind != Value::Kind::kArray) return error(*outs, "\"outputs\" must be an array");
        for (const Value& o : outs->items) {
          if (o.kind != Value::Kind::kString) return error(o, "outputs are value name strings");
          s.outputs.push_back(o.s);
        }
      }
      if (s.outputs.empty()) {
        // Single-result nodes may omit "outputs": the result is named by "id".
        if (id.empty()) return error(n, "a node needs \"outputs\" or an \"id\"");
        s.outputs.push_back(id);
      }
      for (const auto& [key, value] : n.members) {
        if (key != "id" && key != "op" && key != "inputs" && key != "options" && key != "outputs") {
          return error(value, "unknown node key \"", key, "\"");
        }
      }
      doc.nodes.push_back(std::move(s));
    }
    return Status::ok();
  }

  Status read_outputs(const Value& v, GraphDoc& doc) {
    if (v.kind == Value::Kind::kArray) {
      for (const Value& o : v.items) {
        if (o.kind != Value::Kind::kString) return error(o, "output names must be strings");
        doc.outputs.push_back({o.s, o.s, o.loc});
      }
      return Status::ok();
    }
    if (v.kind != Value::Kind::kObject) return error(v, "\"outputs\" must be an object");
    for (const auto& [name, value] : v.members) {
      if (value.kind != Value::Kind::kString) return error(value, "an output maps to a value name");
      doc.outputs.push_back({name, value.s, value.loc});
    }
    return Status::ok();
  }

  const std::string& source_;
};

}  // namespace

Expected<GraphDoc> parse_json_graph(std::string_view text, const std::string& source) {
  WEBNN_ASSIGN_OR_RETURN(Value root, parse_json(text, source));
  return JsonGraphReader(source).read(root);
}

}  // namespace webnn::format
