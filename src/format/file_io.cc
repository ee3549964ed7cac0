#include "format/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace webnn::format {

namespace {

Status io_error(const std::string& what, const std::string& path, int err) {
  return make_error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo, what, " '", path,
                    "': ", std::strerror(err));
}

}  // namespace

std::string parent_dir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string file_stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = name.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Expected<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return io_error("cannot read", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::kIo, "cannot read '", path, "': not a regular file");
  }
  std::string out;
  try {
    out.resize(static_cast<size_t>(st.st_size));
  } catch (const std::bad_alloc&) {
    ::close(fd);
    return make_error(ErrorKind::kIo, "'", path, "' is too large to read");
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      return io_error("cannot read", path, err);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return out;
}

Expected<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::kIo, "'", path, "' is not a regular file");
  }
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = static_cast<uint64_t>(st.st_size);
  if (m->size_ > 0) {
    void* p = ::mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return io_error("cannot map", path, err);
    }
    m->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
  return std::shared_ptr<const MappedFile>(std::move(m));
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

Expected<std::unique_ptr<AtomicFile>> AtomicFile::create(const std::string& path) {
  std::string dir = parent_dir(path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return io_error("cannot write into directory", dir, errno);
  if (!S_ISDIR(st.st_mode)) return make_error(ErrorKind::kIo, "'", dir, "' is not a directory");
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return make_error(ErrorKind::kIo, "cannot write '", path, "': it is a directory");
  }
  static std::atomic<uint64_t> counter{0};
  std::unique_ptr<AtomicFile> f(new AtomicFile());
  f->path_ = path;
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string temp = join_path(dir, "." + name + ".tmp" + std::to_string(::getpid()) + "." +
                                          std::to_string(counter.fetch_add(1)));
    // 0666 filtered by the umask: the final file gets the usual permissions.
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      f->fd_ = fd;
      f->temp_path_ = temp;
      return f;
    }
    if (errno != EEXIST) return io_error("cannot create a temporary file for", path, errno);
  }
  return make_error(ErrorKind::kIo, "cannot create a temporary file for '", path, "'");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

Status AtomicFile::write(const void* data, uint64_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    size_t chunk = size > (uint64_t{1} << 30) ? size_t{1} << 30 : static_cast<size_t>(size);
    ssize_t n = ::write(fd_, p, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error("cannot write", path_, n < 0 ? errno : EIO);
    p += n;
    size -= static_cast<uint64_t>(n);
  }
  return Status::ok();
}

Status AtomicFile::flush() {
  if (fd_ < 0) return Status::ok();
  if (::fsync(fd_) != 0) return io_error("cannot flush", path_, errno);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return io_error("cannot write", path_, errno);
  return Status::ok();
}

Status AtomicFile::commit(bool sync_directory) {
  WEBNN_RETURN_IF_ERROR(flush());
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    return io_error("cannot replace", path_, errno);
  committed_ = true;
  if (!sync_directory) return Status::ok();
  // The rename itself must reach the disk too, or a power loss could undo it.
  int dir = ::open(parent_dir(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::ok();
}

}  // namespace webnn::format
