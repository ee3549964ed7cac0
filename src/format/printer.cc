// The canonical writer (format.md §6, api.md §9.7): Graph -> `.webnn` text + SafeTensors.
#include <functional>
#include <mutex>
#include <set>

#include "format/document.h"
#include "format/file_io.h"
#include "format/pair_lock.h"
#include "format/params.h"
#include "format/sha256.h"
#include "format/weights.h"
#include "format/weights_record.h"
#include "webnn/format.h"

namespace webnn {

namespace {

using format::quote_text_string;

struct Printed {
  std::string text;
  std::vector<OperandId> weights;  // constants stored in the sidecar, in declaration order
  std::vector<std::string> weight_keys;
};

Status check_name(const std::string& name, const char* what) {
  if (!format::is_text_identifier(name) || format::is_reserved_word(name)) {
    return make_error(ErrorKind::kValue, "save: ", what, " name '", name,
                      "' cannot be written in the text format (names must match "
                      "[A-Za-z_/$][A-Za-z0-9_./]* and not be true, false or null)");
  }
  return Status::ok();
}

std::string type_text(const OperandDesc& d) {
  std::string out = format::short_type_name(d.data_type);
  out += "[";
  for (size_t k = 0; k < d.shape.size(); ++k) {
    if (k) out += ", ";
    const Dim& dim = d.shape[k];
    out += dim.is_static()
               ? std::to_string(dim.value)
               : "dyn(" + quote_text_string(dim.name) + ", " + std::to_string(dim.value) + ")";
  }
  return out + "]";
}

// Names of every operand the text mentions (api.md §9.7): inputs keep theirs, graph outputs
// take their output names, named values (loaded graphs) keep theirs when free, everything
// else becomes operand_<id>. Extra output names of an already named operand are aliases.
class Namer {
 public:
  Status assign(const Graph& g) {
    names_.assign(g.operands.size(), "");
    std::vector<bool> used(g.operands.size(), false);
    for (const Node& n : g.nodes) {
      for (OperandId id : n.inputs()) used[id] = true;
      for (OperandId id : n.outputs) used[id] = true;
    }
    std::set<std::string> inputs, constants;
    for (OperandId id : g.inputs) {
      const std::string& name = g.operands[id].name;
      WEBNN_RETURN_IF_ERROR(check_name(name, "input"));
      take(id, name);
      inputs.insert(name);
    }
    for (size_t id = 0; id < g.operands.size(); ++id) {
      const Operand& op = g.operands[id];
      if (!used[id] || op.kind != OperandKind::kConstant || op.name.empty()) continue;
      WEBNN_RETURN_IF_ERROR(check_name(op.name, "constant"));
      if (taken_.count(op.name)) {
        return make_error(ErrorKind::kValue, "save: constant name '", op.name, "' is used twice");
      }
      take(static_cast<OperandId>(id), op.name);
      constants.insert(op.name);
    }
    for (const NamedOperand& o : g.outputs) {
      WEBNN_RETURN_IF_ERROR(check_name(o.name, "output"));
      if (inputs.count(o.name) || constants.count(o.name)) {
        return make_error(ErrorKind::kValue, "save: output name '", o.name,
                          "' is also the name of ",
                          inputs.count(o.name) ? "an input" : "a constant",
                          "; the text format has a single namespace");
      }
      if (g.operands[o.id].kind != OperandKind::kOutput) {
        return make_error(ErrorKind::kValue, "save: output '", o.name,
                          "' is an input or constant; wrap it in identity()");
      }
      if (taken_.count(o.name)) {
        return make_error(ErrorKind::kValue, "save: duplicate output name '", o.name, "'");
      }
      if (names_[o.id].empty()) {
        take(o.id, o.name);
      } else {
        aliases_.emplace_back(o.name, o.id);
        taken_.insert(o.name);
      }
    }
    // Two passes: names carried by values are reserved before any operand_<id> is made up.
    for (size_t id = 0; id < g.operands.size(); ++id) {
      const std::string& name = g.operands[id].name;
      if (used[id] && names_[id].empty() && !name.empty() && format::is_text_identifier(name) &&
          !format::is_reserved_word(name) && !taken_.count(name)) {
        take(static_cast<OperandId>(id), name);
      }
    }
    for (size_t id = 0; id < g.operands.size(); ++id) {
      if (!used[id] || !names_[id].empty()) continue;
      std::string name = "operand_" + std::to_string(id);
      for (int k = 1; taken_.count(name); ++k) {
        name = "operand_" + std::to_string(id) + "_" + std::to_string(k);
      }
      take(static_cast<OperandId>(id), name);
    }
    return Status::ok();
  }

  const std::string& name(OperandId id) const { return names_[id]; }
  const std::vector<std::pair<std::string, OperandId>>& aliases() const { return aliases_; }

 private:
  void take(OperandId id, const std::string& name) {
    names_[id] = name;
    taken_.insert(name);
  }
  std::vector<std::string> names_;
  std::set<std::string> taken_;
  std::vector<std::pair<std::string, OperandId>> aliases_;
};

Expected<Printed> print_graph(const Graph& g, const GraphFileInfo& info) {
  Namer namer;
  WEBNN_RETURN_IF_ERROR(namer.assign(g));
  auto name_of = [&](OperandId id) { return namer.name(id); };
  Printed p;
  std::string& out = p.text;
  out = "webnn_graph " + quote_text_string(info.name) + " v2" +
        (info.quantized ? " @quantized" : "") + " {\n";
  if (!g.inputs.empty()) {
    out += "  inputs {\n";
    for (OperandId id : g.inputs) {
      out += "    " + namer.name(id) + ": " + type_text(g.desc(id)) + ";\n";
    }
    out += "  }\n\n";
  }
  std::string consts;
  for (size_t id = 0; id < g.operands.size(); ++id) {
    const Operand& op = g.operands[id];
    if (op.kind != OperandKind::kConstant || namer.name(static_cast<OperandId>(id)).empty()) {
      continue;
    }
    if (!op.constant) {
      return make_error(ErrorKind::kInternal, "save: constant ", id, " has no data");
    }
    const std::string& name = namer.name(static_cast<OperandId>(id));
    consts += "    " + name + ": " + type_text(op.desc);
    if (is_4bit(op.desc.data_type)) {
      // SafeTensors has no 4-bit dtype: packed bytes go inline (api.md §9.7).
      consts += " @bytes([";
      for (size_t k = 0; k < op.constant->size(); ++k) {
        if (k) consts += ", ";
        consts += std::to_string(op.constant->data()[k]);
      }
      consts += "])";
    } else {
      consts += " @weights(" + quote_text_string(name) + ")";
      p.weights.push_back(static_cast<OperandId>(id));
      p.weight_keys.push_back(name);
    }
    consts += ";\n";
  }
  if (!consts.empty()) out += "  consts {\n" + consts + "  }\n\n";
  out += "  nodes {\n";
  for (const Node& node : g.nodes) {
    WEBNN_ASSIGN_OR_RETURN(std::vector<std::string> args, format::format_args(node, name_of));
    out += "    ";
    if (op_multi_output(node.kind)) {
      out += "[";
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        out += (k ? ", " : "") + namer.name(node.outputs[k]);
      }
      out += "]";
    } else {
      out += namer.name(node.outputs[0]);
    }
    out += " = ";
    out += op_spec_name(node.kind);
    out += "(";
    for (size_t k = 0; k < args.size(); ++k) out += (k ? ", " : "") + args[k];
    out += ");\n";
  }
  for (const auto& [alias, id] : namer.aliases()) {
    out += "    " + alias + " = identity(" + namer.name(id) + ");\n";
  }
  out += "  }\n\n  outputs {";
  for (const NamedOperand& o : g.outputs) out += " " + o.name + ";";
  out += " }\n}\n";
  return p;
}

}  // namespace

Expected<std::string> format_graph(const Graph& graph, const GraphFileInfo& info) {
  WEBNN_ASSIGN_OR_RETURN(Printed p, print_graph(graph, info));
  return std::move(p.text);
}

Status save_graph(const Graph& graph, const std::string& path, const GraphFileInfo& info) {
  WEBNN_ASSIGN_OR_RETURN(Printed p, print_graph(graph, info));
  const std::string sidecar_path =
      format::join_path(format::parent_dir(path), format::file_stem(path) + ".safetensors");
  if (!p.weights.empty() && sidecar_path == path) {
    return make_error(ErrorKind::kValue, "save: '", path,
                      "' would be overwritten by its own weights sidecar; use a .webnn path");
  }
  // Everything is written to temp files first; renames happen only once all writes succeeded.
  WEBNN_ASSIGN_OR_RETURN(std::unique_ptr<format::AtomicFile> text_file,
                         format::AtomicFile::create(path));
  std::unique_ptr<format::AtomicFile> sidecar;
  if (!p.weights.empty()) {
    std::vector<format::TensorToWrite> tensors;
    for (size_t k = 0; k < p.weights.size(); ++k) {
      const Operand& op = graph.operands[p.weights[k]];
      tensors.push_back({p.weight_keys[k], op.desc.data_type, static_sizes(op.desc.shape),
                         op.constant->data(), op.constant->size()});
    }
    // The digest pairs the two files (format/weights_record.h): both renames below are
    // atomic, but a kill between them must not leave a graph that loads another save's data.
    format::Sha256 digest;
    uint64_t data_bytes = 0;
    for (const format::TensorToWrite& t : tensors) {
      digest.update(t.data, t.size);
      data_bytes += t.size;
    }
    format::WeightsRecord record;
    record.sha256 = digest.hex_digest();
    WEBNN_ASSIGN_OR_RETURN(std::string header, format::safetensors_header(tensors, record.sha256));
    record.bytes = header.size() + data_bytes;
    WEBNN_ASSIGN_OR_RETURN(sidecar, format::AtomicFile::create(sidecar_path));
    WEBNN_RETURN_IF_ERROR(sidecar->write(header.data(), header.size()));
    for (const format::TensorToWrite& t : tensors) {
      WEBNN_RETURN_IF_ERROR(sidecar->write(t.data, t.size));
    }
    p.text = format::format_weights_record(record) + p.text;
  }
  WEBNN_RETURN_IF_ERROR(text_file->write(p.text.data(), p.text.size()));
  // Both files reach the disk before either is renamed, so that the renames follow each
  // other closely; they happen under the pair lock (format/pair_lock.h), so that no load in
  // any process sees the graph of one save with the sidecar of another, and no other save's
  // renames come in between. The mutexes still order the threads of this process where the
  // directory cannot be locked (striped by the path as written).
  if (sidecar) WEBNN_RETURN_IF_ERROR(sidecar->flush());
  WEBNN_RETURN_IF_ERROR(text_file->flush());
  static std::mutex commit_locks[16];
  std::lock_guard<std::mutex> lock(commit_locks[std::hash<std::string>{}(path) % 16]);
  format::PairLock pair_lock = format::PairLock::for_save(path);
  if (sidecar) WEBNN_RETURN_IF_ERROR(sidecar->commit(/*sync_directory=*/false));
  return text_file->commit();
}

}  // namespace webnn
