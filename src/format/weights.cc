#include "format/weights.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "format/document.h"
#include "format/json.h"
#include "format/weights_record.h"

namespace webnn::format {

namespace {

struct DtypeInfo {
  const char* code;
  DataType type;
};
constexpr DtypeInfo kSafeTensorsTypes[] = {
    {"F32", DataType::kFloat32}, {"F16", DataType::kFloat16}, {"I32", DataType::kInt32},
    {"U32", DataType::kUint32},  {"I64", DataType::kInt64},   {"U64", DataType::kUint64},
    {"I8", DataType::kInt8},     {"U8", DataType::kUint8},
};

// Element size of SafeTensors dtypes we may meet (also ones we cannot load), 0 if unknown.
uint64_t safetensors_element_size(const std::string& code) {
  if (code == "F64" || code == "I64" || code == "U64") return 8;
  if (code == "F32" || code == "I32" || code == "U32") return 4;
  if (code == "F16" || code == "BF16" || code == "I16" || code == "U16") return 2;
  if (code == "I8" || code == "U8" || code == "BOOL" || code == "F8_E4M3" || code == "F8_E5M2") {
    return 1;
  }
  return 0;
}

uint64_t read_u64le(const uint8_t* p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

// A non-negative integer JSON value (byte offsets may exceed INT64_MAX in hostile files).
bool as_u64(const Value& v, uint64_t& out) {
  if (v.kind == Value::Kind::kInt && v.i >= 0) {
    out = static_cast<uint64_t>(v.i);
    return true;
  }
  if (v.kind == Value::Kind::kUint) {
    out = v.u;
    return true;
  }
  return false;
}

Status read_shape(const Value& v, const std::string& where, std::vector<int64_t>& out) {
  if (v.kind != Value::Kind::kArray) {
    return error_at(where, v.loc, "\"shape\" must be an array of non-negative integers");
  }
  for (const Value& d : v.items) {
    if (d.kind != Value::Kind::kInt || d.i < 0) {
      return error_at(where, d.loc, "\"shape\" must be an array of non-negative integers");
    }
    out.push_back(d.i);
  }
  return Status::ok();
}

std::string shape_text(const std::vector<int64_t>& s) { return shape_to_string(s); }

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t k = 0; k < suffix.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + k])) != suffix[k]) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string sanitise_key(const std::string& key) {
  std::string out;
  for (size_t k = 0; k < key.size(); ++k) {
    if (key[k] == ':' && k + 1 < key.size() && key[k + 1] == ':') {
      out += "__";
      ++k;
    } else {
      out += key[k] == '.' ? '_' : key[k];
    }
  }
  return out;
}

const char* safetensors_dtype(DataType t) {
  for (const DtypeInfo& d : kSafeTensorsTypes) {
    if (d.type == t) return d.code;
  }
  return nullptr;
}

Expected<std::unique_ptr<WeightsFile>> WeightsFile::open_safetensors(const std::string& path) {
  std::unique_ptr<WeightsFile> w(new WeightsFile());
  w->safetensors_ = true;
  WEBNN_ASSIGN_OR_RETURN(w->file_, MappedFile::open(path));
  const uint64_t size = w->file_->size();
  if (size < 8) {
    return make_error(ErrorKind::kIo, path, ": not a SafeTensors file (", size,
                      " bytes, shorter than the 8-byte header length)");
  }
  const uint64_t header_len = read_u64le(w->file_->data());
  // A length beyond any real header means the file is something else: say so without echoing
  // its first bytes as a number.
  if (header_len > kMaxSafeTensorsHeader) {
    return make_error(ErrorKind::kIo, path,
                      ": not a SafeTensors file (its header length field is larger than the ",
                      kMaxSafeTensorsHeader, "-byte limit)");
  }
  if (header_len > size - 8) {
    return make_error(ErrorKind::kIo, path, ": truncated SafeTensors file (the header declares ",
                      header_len, " bytes, ", size - 8, " follow the length field)");
  }
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;
  std::string_view header(reinterpret_cast<const char*>(w->file_->data() + 8), header_len);
  const std::string where = path + " (header)";
  WEBNN_ASSIGN_OR_RETURN(Value root, parse_json(header, where));
  if (root.kind != Value::Kind::kObject) {
    return error_at(where, root.loc, "the SafeTensors header must be a JSON object");
  }
  for (const auto& [key, entry] : root.members) {
    if (key == "__metadata__") {
      // String values only (the SafeTensors rule); others are ignored, not fatal.
      for (const auto& [name, value] : entry.members) {
        if (value.kind == Value::Kind::kString) w->metadata_[name] = value.s;
      }
      continue;
    }
    StoredTensor t;
    t.key = key;
    t.has_shape = true;
    const Value* dtype = entry.find("dtype");
    const Value* shape = entry.find("shape");
    const Value* offsets = entry.find("data_offsets");
    if (entry.kind != Value::Kind::kObject || !dtype || dtype->kind != Value::Kind::kString ||
        !shape || !offsets) {
      return error_at(where, entry.loc, "tensor \"", key,
                      "\" needs \"dtype\", \"shape\" and \"data_offsets\"");
    }
    t.dtype = dtype->s;
    WEBNN_RETURN_IF_ERROR(read_shape(*shape, where, t.shape));
    uint64_t begin = 0, end = 0;
    if (offsets->kind != Value::Kind::kArray || offsets->items.size() != 2 ||
        !as_u64(offsets->items[0], begin) || !as_u64(offsets->items[1], end) || begin > end) {
      return error_at(where, offsets->loc, "tensor \"", key,
                      "\": \"data_offsets\" must be [begin, end] with begin <= end");
    }
    if (end > data_size) {
      return error_at(where, offsets->loc, "tensor \"", key, "\": data_offsets [", begin, ", ", end,
                      "] go past the end of the data (", data_size, " bytes)");
    }
    t.offset = data_start + begin;
    t.length = end - begin;
    if (uint64_t elem = safetensors_element_size(t.dtype)) {
      auto count = element_count(t.shape);
      if (!count || *count > UINT64_MAX / elem || *count * elem != t.length) {
        return error_at(where, entry.loc, "tensor \"", key, "\": ", t.length,
                        " bytes do not match dtype ", t.dtype, " and shape ", shape_text(t.shape));
      }
    }
    w->by_key_[key] = w->tensors_.size();
    w->tensors_.push_back(std::move(t));
  }
  // Overlapping tensors would alias each other's bytes: SafeTensors forbids them.
  std::vector<const StoredTensor*> sorted;
  for (const StoredTensor& t : w->tensors_) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(),
            [](const StoredTensor* a, const StoredTensor* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < sorted.size(); ++k) {
    if (sorted[k]->offset < sorted[k - 1]->offset + sorted[k - 1]->length) {
      return make_error(ErrorKind::kIo, path, ": tensors \"", escape_control(sorted[k - 1]->key),
                        "\" and \"", escape_control(sorted[k]->key), "\" overlap");
    }
  }
  for (size_t k = 0; k < w->tensors_.size(); ++k) {
    w->by_sanitised_key_[sanitise_key(w->tensors_[k].key)].push_back(k);
  }
  return w;
}

Expected<std::unique_ptr<WeightsFile>> WeightsFile::open_blob(const std::string& blob_path,
                                                              const std::string& manifest_path) {
  std::unique_ptr<WeightsFile> w(new WeightsFile());
  WEBNN_ASSIGN_OR_RETURN(w->file_, MappedFile::open(blob_path));
  const uint64_t size = w->file_->size();
  const uint8_t* data = w->file_->data();
  if (size < 8 || std::memcmp(data, "WGWT", 4) != 0) {
    return make_error(ErrorKind::kIo, blob_path, ": not a weights blob (missing WGWT header)");
  }
  uint32_t version = data[4] | (data[5] << 8) | (data[6] << 16) | (uint32_t{data[7]} << 24);
  if (version != 1) {
    return make_error(ErrorKind::kIo, blob_path, ": unsupported weights blob version ", version);
  }
  WEBNN_ASSIGN_OR_RETURN(std::string text, read_file(manifest_path));
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
  WEBNN_ASSIGN_OR_RETURN(Value root, parse_json(text, manifest_path));
  const Value* tensors = root.kind == Value::Kind::kObject ? root.find("tensors") : nullptr;
  if (!tensors || tensors->kind != Value::Kind::kObject) {
    return error_at(manifest_path, root.loc, "the manifest needs a \"tensors\" object");
  }
  for (const auto& [key, entry] : tensors->members) {
    StoredTensor t;
    t.key = key;
    const Value* offset = entry.kind == Value::Kind::kObject ? entry.find("byteOffset") : nullptr;
    const Value* length = entry.kind == Value::Kind::kObject ? entry.find("byteLength") : nullptr;
    if (!offset || !length || !as_u64(*offset, t.offset) || !as_u64(*length, t.length)) {
      return error_at(manifest_path, entry.loc, "tensor \"", key,
                      "\" needs non-negative integer \"byteOffset\" and \"byteLength\"");
    }
    if (t.offset < 8 || t.offset > size || t.length > size - t.offset) {
      return error_at(manifest_path, entry.loc, "tensor \"", key, "\": bytes [", t.offset, ", +",
                      t.length, ") are outside the blob's data (", size, " bytes)");
    }
    if (const Value* dt = entry.find("dataType"); dt && dt->kind != Value::Kind::kNull) {
      if (dt->kind != Value::Kind::kString) {
        return error_at(manifest_path, dt->loc, "\"dataType\" must be a string");
      }
      t.dtype = dt->s;
    }
    if (const Value* shape = entry.find("shape"); shape && shape->kind != Value::Kind::kNull) {
      WEBNN_RETURN_IF_ERROR(read_shape(*shape, manifest_path, t.shape));
      t.has_shape = true;
    }
    w->by_key_[key] = w->tensors_.size();
    w->tensors_.push_back(std::move(t));
  }
  for (size_t k = 0; k < w->tensors_.size(); ++k) {
    w->by_sanitised_key_[sanitise_key(w->tensors_[k].key)].push_back(k);
  }
  return w;
}

Expected<const StoredTensor*> WeightsFile::find(const std::string& key) const {
  if (auto it = by_key_.find(key); it != by_key_.end()) return &tensors_[it->second];
  auto it = by_sanitised_key_.find(sanitise_key(key));
  if (it == by_sanitised_key_.end()) {
    return make_error(ErrorKind::kIo, "weights '", escape_control(key), "' not found in '", path(),
                      "'");
  }
  if (it->second.size() > 1) {
    return make_error(ErrorKind::kIo, "weights '", escape_control(key), "' is ambiguous in '",
                      path(), "' ('", escape_control(tensors_[it->second[0]].key), "' and '",
                      escape_control(tensors_[it->second[1]].key), "' both match)");
  }
  return &tensors_[it->second[0]];
}

Expected<std::shared_ptr<const ConstantData>> WeightsFile::load(const std::string& key,
                                                                const OperandDesc& desc) const {
  WEBNN_ASSIGN_OR_RETURN(const StoredTensor* t, find(key));
  auto fail = [&](const auto&... args) {
    return Status(ErrorKind::kIo,
                  escape_control(str_cat("weights '", key, "' in '", path(), "': ", args...)));
  };
  WEBNN_ASSIGN_OR_RETURN(uint64_t count, element_count(desc.shape));
  WEBNN_ASSIGN_OR_RETURN(uint64_t packed, storage_bytes(desc.data_type, count));
  std::vector<int64_t> want_shape = static_sizes(desc.shape);
  if (t->has_shape && t->shape != want_shape) {
    return fail("stored shape ", shape_text(t->shape), " differs from the declared ",
                shape_text(want_shape));
  }
  const uint8_t* bytes = file_->data() + t->offset;
  std::shared_ptr<const void> owner = file_;
  if (safetensors_) {
    if (t->dtype == "BF16" && desc.data_type == DataType::kFloat32) {
      // bfloat16 is the top half of a float32: widen once at load.
      std::vector<uint8_t> out(count * 4);
      for (uint64_t k = 0; k < count; ++k) {
        out[k * 4] = out[k * 4 + 1] = 0;
        out[k * 4 + 2] = bytes[k * 2];
        out[k * 4 + 3] = bytes[k * 2 + 1];
      }
      return std::make_shared<const ConstantData>(std::move(out));
    }
    const char* want = safetensors_dtype(desc.data_type);
    if (!want) return fail("4-bit constants cannot be stored in SafeTensors (use @bytes)");
    if (t->dtype != want) {
      return fail("stored dtype ", t->dtype, " does not match the declared ",
                  data_type_name(desc.data_type), " (", want, ")");
    }
  } else {
    if (!t->dtype.empty()) {
      auto stored = parse_data_type(t->dtype);
      if (!stored) stored = short_type_name(t->dtype);
      if (!stored) return fail("unknown dataType \"", t->dtype, "\"");
      if (*stored != desc.data_type) {
        return fail("stored dataType ", data_type_name(*stored), " does not match the declared ",
                    data_type_name(desc.data_type));
      }
    }
    if (is_4bit(desc.data_type) && t->length == count && count != packed) {
      // One value per byte (low nibble), as the webnn-graph packer writes: repack.
      std::vector<uint8_t> nibbles(bytes, bytes + count);
      for (uint8_t& n : nibbles) n &= 0x0F;
      std::vector<uint8_t> out(packed);
      pack_4bit(nibbles.data(), count, out.data());
      return std::make_shared<const ConstantData>(std::move(out));
    }
  }
  if (t->length != packed) {
    return fail(t->length, " bytes stored, ", desc_to_string(desc), " needs ", packed);
  }
  // Kernels read a constant as float*, int64_t*, ...: a view must be aligned for its element
  // type. SafeTensors packs tensors back to back (no holes allowed), so one stored after an
  // odd-sized tensor, like any offset of a foreign file, may start at any byte: copied once.
  if (reinterpret_cast<uintptr_t>(bytes) % element_size(desc.data_type) != 0) {
    return std::make_shared<const ConstantData>(std::vector<uint8_t>(bytes, bytes + packed));
  }
  return std::make_shared<const ConstantData>(std::move(owner), bytes, packed);
}

namespace {

// The sidecar a weights record describes (weights_record.h): it must be the file save wrote.
Expected<std::unique_ptr<WeightsFile>> open_recorded(const std::string& graph_path,
                                                     const WeightsRecord& record) {
  const std::string path =
      join_path(parent_dir(graph_path), file_stem(graph_path) + ".safetensors");
  auto mismatch = [&](const auto&... why) {
    return make_error(ErrorKind::kIo, "'", path, "' is not the weights file saved with '",
                      graph_path, "': ", why...,
                      " (a save was interrupted between its two files, or one was replaced; "
                      "save the graph again)");
  };
  if (!is_regular_file(path)) {
    return make_error(ErrorKind::kIo, "'", graph_path, "' was saved with its weights in '", path,
                      "', which is missing");
  }
  WEBNN_ASSIGN_OR_RETURN(auto w, WeightsFile::open_safetensors(path));
  if (w->file_size() != record.bytes) {
    return mismatch("it has ", w->file_size(), " bytes, the graph records ", record.bytes);
  }
  auto it = w->metadata().find(kSha256MetadataKey);
  if (it == w->metadata().end() || it->second != record.sha256) {
    return mismatch("its digest differs from the one the graph records");
  }
  return w;
}

}  // namespace

Expected<std::unique_ptr<WeightsFile>> open_weights_for(const std::string& graph_path,
                                                        const WeightsRecord* record) {
  if (record) return open_recorded(graph_path, *record);
  const std::string dir = parent_dir(graph_path);
  const std::string stem = file_stem(graph_path);
  const std::string candidates[] = {"model.safetensors", stem + ".safetensors", stem + ".weights",
                                    "model.weights"};
  for (const std::string& name : candidates) {
    std::string path = join_path(dir, name);
    if (!is_regular_file(path)) continue;
    if (ends_with_ci(path, ".safetensors") || ends_with_ci(path, ".safetensor")) {
      return WeightsFile::open_safetensors(path);
    }
    for (const std::string& manifest : {std::string("manifest.json"), stem + ".manifest.json"}) {
      std::string mpath = join_path(dir, manifest);
      if (is_regular_file(mpath)) return WeightsFile::open_blob(path, mpath);
    }
    return make_error(ErrorKind::kIo, "weights blob '", path,
                      "' has no manifest (looked for manifest.json and ", stem, ".manifest.json)");
  }
  return make_error(ErrorKind::kIo, "no weights file found next to '", graph_path,
                    "' (looked for model.safetensors, ", stem, ".safetensors, ", stem,
                    ".weights, model.weights)");
}

Expected<std::string> safetensors_header(const std::vector<TensorToWrite>& tensors,
                                         const std::string& sha256) {
  std::string json = "{\"__metadata__\":{\"format\":\"pt\"";
  if (!sha256.empty()) json += str_cat(",\"", kSha256MetadataKey, "\":\"", sha256, "\"");
  json += "}";
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    const char* code = safetensors_dtype(t.data_type);
    if (!code) {
      return make_error(ErrorKind::kInternal, "SafeTensors cannot hold ",
                        data_type_name(t.data_type));
    }
    json += ',';
    json += json_quote(t.key);
    json += ":{\"dtype\":\"";
    json += code;
    json += "\",\"shape\":[";
    for (size_t k = 0; k < t.shape.size(); ++k) {
      if (k) json += ",";
      json += std::to_string(t.shape[k]);
    }
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + t.size) + "]}";
    offset += t.size;
  }
  json += "}";
  // Padding keeps the data section 8-byte aligned, so mapped tensors are aligned too.
  while ((json.size() + 8) % 8 != 0) json += ' ';
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int k = 0; k < 8; ++k) out[k] = static_cast<char>((n >> (8 * k)) & 0xFF);
  return out + json;
}

}  // namespace webnn::format
