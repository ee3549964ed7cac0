// The lock that makes a saved graph file and its weights sidecar one unit across processes.
//
// save_graph renames the sidecar and then the graph into place; both renames are atomic, but
// a load that reads the graph of one save and opens the sidecar of the next, or two saves
// whose renames interleave, would see a mismatched pair (refused by the weights record,
// although a complete pair was on disk all along). A save holds the lock exclusively around
// its two renames, a load holds it shared while it reads the graph and opens (maps) the
// sidecar.
//
// The lock is flock(2) on the directory that holds the pair (both files are always in the
// same directory): no lock file is left next to a model and loads write nothing; it is per
// open file, so it also orders the threads of one process; the kernel releases it when a
// process dies (a save killed inside it blocks nobody); it is advisory (other programs are
// unaffected). Saves to other graphs of the same directory take turns for their renames only.
// Where the directory cannot be opened or flock is unsupported (some network file systems)
// the lock is not held, and the weights record remains the safeguard.
#pragma once

#include <string>

namespace webnn::format {

class PairLock {
 public:
  // Exclusive, for a save of `graph_path`.
  static PairLock for_save(const std::string& graph_path);
  // Shared, for a load of `graph_path`.
  static PairLock for_load(const std::string& graph_path);

  PairLock(PairLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  PairLock& operator=(PairLock&&) = delete;
  PairLock(const PairLock&) = delete;
  ~PairLock();

  bool held() const { return fd_ >= 0; }

 private:
  explicit PairLock(int fd) : fd_(fd) {}
  static PairLock acquire(const std::string& graph_path, bool exclusive);
  int fd_ = -1;
};

}  // namespace webnn::format
