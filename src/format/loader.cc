// GraphDoc -> Graph through GraphBuilder (format.md §7): the same validation and shape
// inference as Python calls, with every failure reported as kIo at the file position.
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>

#include "format/document.h"
#include "format/file_io.h"
#include "format/pair_lock.h"
#include "format/params.h"
#include "format/weights.h"
#include "format/weights_record.h"
#include "webnn/builder.h"
#include "webnn/format.h"

namespace webnn {

namespace {

using format::ConstInit;
using format::DeclDoc;
using format::GraphDoc;
using format::Loc;
using format::Value;

// @scalar expands a literal to a whole tensor: bound what a tiny hostile file can allocate.
constexpr uint64_t kMaxScalarBytes = uint64_t{1} << 30;

// Re-anchors a builder/weights error at a file position as an OSError-class failure.
Status at(const GraphDoc& doc, Loc loc, const Status& s) {
  return format::error_at(doc.source, loc, s.message());
}

template <class T>
Status store_int(const Value& v, const char* type_name, T& out) {
  using Limits = std::numeric_limits<T>;
  bool ok = false;
  if (v.kind == Value::Kind::kDouble) {
    // Float literals truncate toward zero, then must fit: [-2^(N-1), 2^(N-1)) or [0, 2^N).
    double t = std::trunc(v.d);
    double hi = std::ldexp(1.0, Limits::digits);
    ok = t < hi && (Limits::is_signed ? t >= -hi : t >= 0);
    if (ok) out = static_cast<T>(t);
  } else if (v.kind == Value::Kind::kInt) {
    ok = v.i >= static_cast<int64_t>(Limits::min()) &&
         (v.i < 0 || static_cast<uint64_t>(v.i) <= static_cast<uint64_t>(Limits::max()));
    if (ok) out = static_cast<T>(v.i);
  } else if (v.kind == Value::Kind::kUint) {
    ok = v.u <= static_cast<uint64_t>(Limits::max());
    if (ok) out = static_cast<T>(v.u);
  }
  if (!ok) {
    return make_error(ErrorKind::kIo, "@scalar ", format::format_value(v), " is out of range for ",
                      type_name);
  }
  return Status::ok();
}

// One element of `type` holding the literal `v`, as little-endian bytes (4-bit: one nibble).
Status scalar_element(const Value& v, DataType type, std::vector<uint8_t>& elem) {
  const char* name = data_type_name(type);
  auto put = [&](const auto& x) {
    elem.resize(sizeof x);
    std::memcpy(elem.data(), &x, sizeof x);
  };
  auto as_double = [&]() -> double {
    return v.kind == Value::Kind::kInt    ? static_cast<double>(v.i)
           : v.kind == Value::Kind::kUint ? static_cast<double>(v.u)
                                          : v.d;
  };
  switch (type) {
    case DataType::kFloat32: {
      // int64 -> float rounds once, to nearest.
      float f = v.kind == Value::Kind::kInt    ? static_cast<float>(v.i)
                : v.kind == Value::Kind::kUint ? static_cast<float>(v.u)
                                               : static_cast<float>(v.d);
      if (!std::isfinite(f))
        return make_error(ErrorKind::kIo, "@scalar is out of range for float32");
      put(f);
      return Status::ok();
    }
    case DataType::kFloat16: {
      float16 h = static_cast<float16>(as_double());
      if (!std::isfinite(static_cast<float>(h))) {
        return make_error(ErrorKind::kIo, "@scalar is out of range for float16");
      }
      put(h);
      return Status::ok();
    }
#define WEBNN_INT_CASE(kind, T)                      \
  case DataType::kind: {                             \
    T x{};                                           \
    WEBNN_RETURN_IF_ERROR(store_int<T>(v, name, x)); \
    put(x);                                          \
    return Status::ok();                             \
  }
      WEBNN_INT_CASE(kInt32, int32_t)
      WEBNN_INT_CASE(kUint32, uint32_t)
      WEBNN_INT_CASE(kInt64, int64_t)
      WEBNN_INT_CASE(kUint64, uint64_t)
      WEBNN_INT_CASE(kInt8, int8_t)
      WEBNN_INT_CASE(kUint8, uint8_t)
#undef WEBNN_INT_CASE
    case DataType::kInt4:
    case DataType::kUint4: {
      int8_t x = 0;
      WEBNN_RETURN_IF_ERROR(store_int<int8_t>(v, name, x));
      bool ok = type == DataType::kInt4 ? x >= -8 && x <= 7 : x >= 0 && x <= 15;
      if (!ok)
        return make_error(ErrorKind::kIo, "@scalar ", static_cast<int>(x), " is out of range for ",
                          name);
      elem.assign(1, static_cast<uint8_t>(x) & 0x0F);
      return Status::ok();
    }
  }
  return make_error(ErrorKind::kInternal, "unknown data type");
}

Expected<std::vector<uint8_t>> scalar_tensor(const Value& v, const OperandDesc& desc,
                                             uint64_t count, uint64_t bytes) {
  if (bytes > kMaxScalarBytes) {
    return make_error(ErrorKind::kIo, "@scalar would expand to ", bytes,
                      " bytes; store a constant this large in a weights file");
  }
  std::vector<uint8_t> elem;
  WEBNN_RETURN_IF_ERROR(scalar_element(v, desc.data_type, elem));
  std::vector<uint8_t> out(bytes);
  if (is_4bit(desc.data_type)) {
    uint8_t nibble = elem[0];
    for (uint64_t k = 0; k < bytes; ++k) out[k] = static_cast<uint8_t>(nibble | (nibble << 4));
    if (count % 2 == 1) out[bytes - 1] = nibble;  // odd count: last high nibble is 0 (§4.4)
    return out;
  }
  for (uint64_t k = 0; k < count; ++k)
    std::memcpy(out.data() + k * elem.size(), elem.data(), elem.size());
  return out;
}

class Loader {
 public:
  Loader(const GraphDoc& doc, const std::string& path,
         const std::optional<format::WeightsRecord>& record)
      : doc_(doc), path_(path), record_(record) {}

  Expected<Graph> load() {
    for (const DeclDoc& d : doc_.inputs) {
      WEBNN_RETURN_IF_ERROR(check_new_name(d.name, d.loc));
      auto id = builder_.input(d.name, d.shape, d.data_type);
      if (!id) return at(doc_, d.loc, id.status());
      names_[d.name] = *id;
      kinds_[d.name] = "an input";
    }
    for (const DeclDoc& d : doc_.consts) WEBNN_RETURN_IF_ERROR(add_constant(d));
    for (const format::StmtDoc& s : doc_.nodes) WEBNN_RETURN_IF_ERROR(add_statement(s));
    std::vector<NamedOperand> outputs;
    for (const format::OutputDoc& o : doc_.outputs) {
      bool seen = false;
      for (const NamedOperand& prev : outputs) seen = seen || prev.name == o.name;
      if (seen) continue;  // a name listed twice counts once (format.md §5.4)
      auto it = names_.find(o.value);
      if (it == names_.end()) {
        return format::error_at(doc_.source, o.loc, "output '", o.value, "' is not defined");
      }
      if (auto k = kinds_.find(o.value); k != kinds_.end()) {
        return format::error_at(doc_.source, o.loc, "output '", o.value, "' is ", k->second,
                                "; outputs must be operation results (wrap it in identity)");
      }
      outputs.push_back({o.name, it->second});
    }
    if (outputs.empty()) return format::error_at(doc_.source, Loc{}, "the graph has no outputs");
    auto graph = builder_.finish(outputs);
    if (!graph) return format::error_at(doc_.source, Loc{}, graph.status().message());
    // Loaded values keep their file names so that saving again reproduces the file.
    for (const auto& [name, id] : names_) graph->operands[id].name = name;
    return graph;
  }

 private:
  Status check_new_name(const std::string& name, Loc loc) {
    if (names_.count(name))
      return format::error_at(doc_.source, loc, "'", name, "' is already defined");
    return Status::ok();
  }

  Status add_constant(const DeclDoc& d) {
    WEBNN_RETURN_IF_ERROR(check_new_name(d.name, d.loc));
    OperandDesc desc{d.data_type, d.shape};
    // Valid dimensions first, so sizes below cannot overflow or go negative.
    for (const Dim& dim : d.shape) {
      if (dim.is_dynamic() || dim.value < 1 || dim.value > kMaxDimension) {
        return format::error_at(doc_.source, d.loc, "constant '", d.name, "': dimension ",
                                dim_to_string(dim), " is not valid (must be in [1, ", kMaxDimension,
                                "])");
      }
    }
    auto count = element_count(desc.shape);
    if (!count) return at(doc_, d.loc, count.status());
    auto bytes = storage_bytes(desc.data_type, *count);
    if (!bytes) return at(doc_, d.loc, bytes.status());
    std::shared_ptr<const ConstantData> data;
    switch (d.init.kind) {
      case ConstInit::Kind::kWeights: {
        if (!weights_) {
          auto w = format::open_weights_for(path_, record_ ? &*record_ : nullptr);
          if (!w) return at(doc_, d.init.loc, w.status());
          weights_ = std::move(*w);
        }
        auto loaded = weights_->load(d.init.key, desc);
        if (!loaded) return at(doc_, d.init.loc, loaded.status());
        data = std::move(*loaded);
        break;
      }
      case ConstInit::Kind::kScalar: {
        auto filled = scalar_tensor(d.init.scalar, desc, *count, *bytes);
        if (!filled) return at(doc_, d.init.loc, filled.status());
        data = std::make_shared<const ConstantData>(std::move(*filled));
        break;
      }
      case ConstInit::Kind::kBytes:
        if (d.init.bytes.size() != *bytes) {
          return format::error_at(doc_.source, d.init.loc, "constant '", d.name, "': @bytes has ",
                                  d.init.bytes.size(), " bytes, ", desc_to_string(desc), " needs ",
                                  *bytes);
        }
        data = std::make_shared<const ConstantData>(d.init.bytes);
        break;
    }
    auto id = builder_.constant(desc, std::move(data));
    if (!id) return at(doc_, d.loc, id.status());
    names_[d.name] = *id;
    kinds_[d.name] = "a constant";
    return Status::ok();
  }

  Status add_statement(const format::StmtDoc& s) {
    auto kind = op_from_spec_name(s.op);
    if (!kind) return format::error_at(doc_.source, s.op_loc, "unknown operation '", s.op, "'");
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      WEBNN_RETURN_IF_ERROR(check_new_name(s.outputs[k], s.loc));
      for (size_t j = 0; j < k; ++j) {
        if (s.outputs[j] == s.outputs[k]) {
          return format::error_at(doc_.source, s.loc, "'", s.outputs[k], "' is assigned twice");
        }
      }
    }
    OpParams params = default_params(*kind);
    std::string label;
    auto resolve = [this](const std::string& name) -> std::optional<OperandId> {
      auto it = names_.find(name);
      if (it == names_.end()) return std::nullopt;
      return it->second;
    };
    WEBNN_RETURN_IF_ERROR(
        format::apply_args(*kind, s.args, resolve, doc_.source, s.loc, params, label));
    auto outs = builder_.add_op(*kind, std::move(params), label);
    if (!outs) return at(doc_, s.loc, outs.status());
    if (outs->size() != s.outputs.size()) {
      return format::error_at(doc_.source, s.loc, s.op, " produces ", outs->size(),
                              outs->size() == 1 ? " result" : " results", ", but ",
                              s.outputs.size(), s.outputs.size() == 1 ? " name is" : " names are",
                              " given");
    }
    for (size_t k = 0; k < outs->size(); ++k) names_[s.outputs[k]] = (*outs)[k];
    return Status::ok();
  }

  const GraphDoc& doc_;
  const std::string& path_;
  const std::optional<format::WeightsRecord>& record_;
  GraphBuilder builder_;
  std::unordered_map<std::string, OperandId> names_;
  std::unordered_map<std::string, const char*> kinds_;  // inputs and constants
  std::unique_ptr<format::WeightsFile> weights_;
};

}  // namespace

Expected<Graph> load_graph_source(std::string_view source, const std::string& path,
                                  GraphFileInfo* info) {
  try {
    if (source.size() >= 3 && source.substr(0, 3) == "\xEF\xBB\xBF") source.remove_prefix(3);
    size_t first = source.find_first_not_of(" \t\r\n");
    bool json = first != std::string_view::npos && source[first] == '{';
    std::optional<format::WeightsRecord> record;
    if (!json) {
      WEBNN_ASSIGN_OR_RETURN(record, format::parse_weights_record(source, path));
    }
    auto doc = json ? format::parse_json_graph(source, path) : format::parse_text(source, path);
    if (!doc) return doc.status();
    if (info) *info = GraphFileInfo{doc->name, doc->quantized};
    return Loader(*doc, path, record).load();
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::kIo, path, ": out of memory while loading the graph");
  }
}

Expected<Graph> load_graph_file(const std::string& path, GraphFileInfo* info) {
  // Shared with other loads, exclusive of a save's renames (format/pair_lock.h): the graph
  // and the sidecar it opens (maps) come from one save. The sidecar stays mapped after the
  // lock is released, whatever later saves rename over it.
  format::PairLock lock = format::PairLock::for_load(path);
  WEBNN_ASSIGN_OR_RETURN(std::string text, format::read_file(path));
  return load_graph_source(text, path, info);
}

}  // namespace webnn
