#include "fuzz_targets.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "format/document.h"
#include "format/file_io.h"
#include "format/weights.h"
#include "fuzz_builder.h"
#include "webnn/format.h"

namespace webnn::fuzz {

namespace {

// A private scratch directory for the files a target must write (loaders take paths).
const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string templ = std::string(base) + "/webnn-fuzz-XXXXXX";
    if (!::mkdtemp(templ.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    return templ;
  }();
  return dir;
}

bool write_whole(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

// Graph files rejected by the loader are reported; only their messages are checked.
std::string check_graph_file(std::string_view source) {
  // A directory with no weights in it: @weights references fail with a clear error.
  const std::string path = "/nonexistent-webnn-fuzz/graph.webnn";
  GraphFileInfo info;
  auto graph = load_graph_source(source, path, &info);
  if (!graph) return check_status(graph.status(), "load");
  // A loaded graph must survive save + load unchanged (format.md §6, last paragraph).
  auto text = format_graph(*graph, info);
  if (!text) return check_status(text.status(), "format_graph");
  const std::string saved = scratch_dir() + "/roundtrip.webnn";
  Status s = save_graph(*graph, saved, info);
  if (!s.is_ok()) return check_status(s, "save_graph");
  GraphFileInfo info2;
  auto again = load_graph_file(saved, &info2);
  if (!again) return "the saved graph does not load again: " + again.status().message();
  auto text2 = format_graph(*again, info2);
  if (!text2) return "the reloaded graph cannot be printed: " + text2.status().message();
  if (*text2 != *text) return "save + load changed the graph:\n" + *text + "\n---\n" + *text2;
  return "";
}

std::string load_every_tensor(const format::WeightsFile& w) {
  for (const format::StoredTensor& t : w.tensors()) {
    // The declared type a graph would have: the stored one, when it names a type we know.
    std::optional<DataType> type = parse_data_type(t.dtype);
    if (!type) type = format::short_type_name(t.dtype);
    if (!type) {
      for (DataType d : mask_to_list(kAllTypes)) {
        const char* code = format::safetensors_dtype(d);
        if (code && t.dtype == code) type = d;
      }
    }
    if (!type && t.dtype == "BF16") type = DataType::kFloat32;
    if (!type) type = DataType::kUint8;
    OperandDesc desc{*type, {}};
    if (t.has_shape) {
      for (int64_t d : t.shape) desc.shape.push_back(Dim(d));
    } else {
      desc.shape.push_back(Dim(static_cast<int64_t>(t.length)));
    }
    auto c = w.load(t.key, desc);
    if (!c) {
      if (std::string f = check_status(c.status(), "load"); !f.empty()) return f;
      continue;
    }
    // Touch every byte: a view past the mapping is caught by ASan or a fault.
    unsigned sum = 0;
    for (size_t k = 0; k < (*c)->size(); ++k) sum += (*c)->data()[k];
    (void)sum;
  }
  return "";
}

}  // namespace

std::string check_status(const Status& s, const char* what) {
  if (s.kind() == ErrorKind::kInternal) {
    return std::string(what) + ": internal error from user input: " + s.message();
  }
  // Messages name positions, sizes and values, never raw bytes: no control characters and
  // valid UTF-8 (file names and keys in them were validated or escaped).
  format::Loc bad;
  if (!format::valid_utf8(s.message(), &bad)) {
    return std::string(what) + ": error message is not valid UTF-8: " + s.message();
  }
  for (unsigned char c : s.message()) {
    if (c < 0x20 || c == 0x7F) {
      return std::string(what) + ": error message contains a control character: " + s.message();
    }
  }
  return "";
}

std::string text_parser(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Text only: the JSON form has its own target.
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return "";
  return check_graph_file(text);
}

std::string json_graph(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return "";
  return check_graph_file(text);
}

std::string weights_manifest(const uint8_t* data, size_t size) {
  if (size < 2) return "";
  size_t manifest_len = data[0] | (size_t{data[1]} << 8);
  data += 2;
  size -= 2;
  if (manifest_len > size) manifest_len = size;
  const std::string manifest = scratch_dir() + "/manifest.json";
  const std::string blob = scratch_dir() + "/model.weights";
  if (!write_whole(manifest, data, manifest_len) ||
      !write_whole(blob, data + manifest_len, size - manifest_len)) {
    return "cannot write the scratch files";
  }
  auto w = format::WeightsFile::open_blob(blob, manifest);
  if (!w) return check_status(w.status(), "open_blob");
  return load_every_tensor(**w);
}

std::string safetensors(const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/model.safetensors";
  if (!write_whole(path, data, size)) return "cannot write the scratch file";
  auto w = format::WeightsFile::open_safetensors(path);
  if (!w) return check_status(w.status(), "open_safetensors");
  return load_every_tensor(**w);
}

std::string builder(const uint8_t* data, size_t size) { return run_builder(data, size); }

std::string run_target(const std::string& name, const uint8_t* data, size_t size) {
  if (name == "text_parser") return text_parser(data, size);
  if (name == "json_graph") return json_graph(data, size);
  if (name == "weights_manifest") return weights_manifest(data, size);
  if (name == "safetensors") return safetensors(data, size);
  if (name == "builder") return builder(data, size);
  return "unknown target " + name;
}

}  // namespace webnn::fuzz
