// File primitives for graph files: whole-file reads, read-only memory maps shared by the
// constants that view into them, and atomic writes (temp file in the same directory, then
// rename) so a failed save never leaves a partial file behind.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "webnn/status.h"

namespace webnn::format {

// Whole file as bytes. kNotFound when it does not exist, kIo otherwise.
Expected<std::string> read_file(const std::string& path);

bool is_regular_file(const std::string& path);

// A read-only private mapping of a whole file; pages are shared with the page cache, so
// constants viewing into it cost no extra copy.
class MappedFile {
 public:
  static Expected<std::shared_ptr<const MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  std::string path_;
};

// Writes `path` atomically: data goes to a uniquely named temp file next to it, commit()
// flushes and renames it into place; destroying an uncommitted file removes the temp file.
class AtomicFile {
 public:
  // kNotFound when the parent directory does not exist; kIo for other failures.
  static Expected<std::unique_ptr<AtomicFile>> create(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  Status write(const void* data, uint64_t size);
  // fsync + close: the data is on disk, the file not yet in place (idempotent).
  Status flush();
  // flush, rename over `path`, then (unless told not to, when another file's commit in the
  // same directory follows) fsync the directory so that the rename survives a power loss.
  Status commit(bool sync_directory = true);

 private:
  AtomicFile() = default;
  int fd_ = -1;
  std::string path_;
  std::string temp_path_;
  bool committed_ = false;
};

// The directory part of `path` ("." when none) and the file name without its last
// extension (format.md §9.4 `<stem>`).
std::string parent_dir(const std::string& path);
std::string file_stem(const std::string& path);
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace webnn::format
