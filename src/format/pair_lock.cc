#include "format/pair_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "format/file_io.h"

namespace webnn::format {

PairLock PairLock::acquire(const std::string& graph_path, bool exclusive) {
  int fd = ::open(parent_dir(graph_path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return PairLock(-1);
  int rc;
  do {
    rc = ::flock(fd, exclusive ? LOCK_EX : LOCK_SH);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {  // ENOLCK, EOPNOTSUPP: not held
    ::close(fd);
    return PairLock(-1);
  }
  return PairLock(fd);
}

PairLock PairLock::for_save(const std::string& graph_path) { return acquire(graph_path, true); }

PairLock PairLock::for_load(const std::string& graph_path) { return acquire(graph_path, false); }

PairLock::~PairLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor of the open file unlocks it
}

}  // namespace webnn::format
