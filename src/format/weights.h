// Weights containers (format.md §9): SafeTensors files and raw `.weights` blobs indexed by a
// `manifest.json`. Both are memory-mapped; constants view into the mapping unless their
// bytes must be converted (BF16 -> float32, unpacked 4-bit -> packed).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "format/file_io.h"
#include "webnn/graph.h"

namespace webnn::format {

struct WeightsRecord;  // weights_record.h

struct StoredTensor {
  std::string key;
  std::string dtype;       // SafeTensors "F32"...; manifest "float32"... or empty
  bool has_shape = false;  // manifests may omit the shape
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // absolute byte offset in the mapped file
  uint64_t length = 0;
};

class WeightsFile {
 public:
  // Validates the header and every tensor's byte range against the file size.
  static Expected<std::unique_ptr<WeightsFile>> open_safetensors(const std::string& path);
  static Expected<std::unique_ptr<WeightsFile>> open_blob(const std::string& blob_path,
                                                          const std::string& manifest_path);

  bool is_safetensors() const { return safetensors_; }
  const std::string& path() const { return file_->path(); }
  uint64_t file_size() const { return file_->size(); }
  const std::vector<StoredTensor>& tensors() const { return tensors_; }
  // SafeTensors `__metadata__` string entries (empty for blobs).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The bytes of tensor `key` (exact match, else the unique sanitised match of §9.4.5) for a
  // constant of `desc`; data type, shape and size must agree (kIo naming the key otherwise).
  Expected<std::shared_ptr<const ConstantData>> load(const std::string& key,
                                                     const OperandDesc& desc) const;

 private:
  WeightsFile() = default;
  Expected<const StoredTensor*> find(const std::string& key) const;

  std::shared_ptr<const MappedFile> file_;
  bool safetensors_ = false;
  std::vector<StoredTensor> tensors_;
  std::map<std::string, size_t> by_key_;
  std::map<std::string, std::vector<size_t>> by_sanitised_key_;
  std::map<std::string, std::string> metadata_;
};

// The SafeTensors reference implementation's header limit: a larger length field means the
// file is not SafeTensors.
inline constexpr uint64_t kMaxSafeTensorsHeader = 100'000'000;

// Finds the weights file next to `graph_path` (format.md §9.4: model.safetensors,
// <stem>.safetensors, <stem>.weights, model.weights; a blob needs manifest.json or
// <stem>.manifest.json) and opens it.
// With a weights `record` (the graph file's first line, weights_record.h) `<stem>.safetensors`
// is opened instead, the file save wrote, and must match the record's size and digest.
Expected<std::unique_ptr<WeightsFile>> open_weights_for(const std::string& graph_path,
                                                        const WeightsRecord* record = nullptr);

// `::` -> `__`, then `.` -> `_` (format.md §9.4.5).
std::string sanitise_key(const std::string& key);

struct TensorToWrite {
  std::string key;
  DataType data_type;  // not 4-bit: SafeTensors cannot hold packed nibbles
  std::vector<int64_t> shape;
  const uint8_t* data;
  uint64_t size;
};

// The 8-byte length prefix and the JSON header (padded with spaces to a multiple of 8) of a
// SafeTensors file holding `tensors` contiguously, in order; a non-empty `sha256` (of the data
// section) goes into `__metadata__` (weights_record.h).
Expected<std::string> safetensors_header(const std::vector<TensorToWrite>& tensors,
                                         const std::string& sha256 = "");
// SafeTensors dtype code ("F32") of a byte-sized data type.
const char* safetensors_dtype(DataType t);

}  // namespace webnn::format
