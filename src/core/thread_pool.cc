#include "core/thread_pool.h"

#include <cstdlib>
#include <new>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace webnn {

namespace {

// Spinning before sleeping keeps the hand-off between consecutive kernels of a graph in the
// microsecond range; the bound keeps idle workers from burning a shared core for long.
constexpr int kSpinIterations = 4000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

int default_thread_count() {
  if (const char* env = std::getenv("WEBNN_NUM_THREADS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) return n > 1024 ? 1024 : static_cast<int>(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {}

namespace {

long current_pid() {
#if defined(__unix__) || defined(__APPLE__)
  return static_cast<long>(getpid());
#else
  return 0;
#endif
}

}  // namespace

bool ThreadPool::forked() const { return !workers_.empty() && owner_pid_ != current_pid(); }

ThreadPool::~ThreadPool() {
  std::lock_guard<std::mutex> lock(region_mutex_);
  if (forked()) {
    // The workers belong to the parent process; joining or detaching their handles here would
    // fail, so the handles are abandoned (a small leak in the child).
    new std::vector<std::thread>(std::move(workers_));
    return;
  }
  {
    std::lock_guard<std::mutex> sleep(sleep_mutex_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::start_workers() {
  // Workers start from the generation before the first region: a thread scheduled late must
  // not mistake a later generation (even the destructor's) for one it has already seen.
  const uint32_t seen = generation_.load(std::memory_order_acquire);
  owner_pid_ = current_pid();
  workers_.reserve(num_threads_ - 1);
  for (int t = 1; t < num_threads_; ++t) {
    workers_.emplace_back([this, t, seen] { worker_main(t, seen); });
  }
}

void ThreadPool::try_start_workers() {
  // A thread the system refuses (no memory for its stack under an address-space limit) is not
  // an error: the region runs on the workers started so far and on the caller, and a later
  // region tries again.
  try {
    start_workers();
  } catch (const std::system_error&) {
  } catch (const std::bad_alloc&) {
  }
}

void ThreadPool::worker_main(int thread, uint32_t seen) {
  for (;;) {
    uint32_t g = generation_.load(std::memory_order_acquire);
    for (int i = 0; g == seen && i < kSpinIterations; ++i) {
      cpu_relax();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      std::unique_lock<std::mutex> sleep(sleep_mutex_);
      wake_.wait(sleep, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    work(g, thread);
  }
}

void ThreadPool::work(uint32_t generation, int thread) {
  // A claim is valid only for its own region. run() closes the previous region (claim_ moves to
  // the new generation with no task open) before it rewrites fn_/ctx_/tasks_, and writes those
  // fields with release stores. So a worker that read the new fields while still holding a claim
  // of the old region is ordered after the close, and its compare-and-swap on the old value fails;
  // a successful claim proves the fields read before it belong to the claimed region.
  for (;;) {
    uint64_t c = claim_.load(std::memory_order_acquire);
    if (static_cast<uint32_t>(c >> 32) != generation) return;
    const int64_t index = static_cast<int64_t>(c & 0xffffffffu);
    if (index == kClosedIndex) return;
    TaskFn fn = fn_.load(std::memory_order_acquire);
    void* ctx = ctx_.load(std::memory_order_acquire);
    const int64_t tasks = tasks_.load(std::memory_order_acquire);
    if (index >= tasks) return;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
    if (!failed_.load(std::memory_order_acquire)) {
      try {
        fn(ctx, index, thread);
      } catch (...) {
        // Kept for run() to rethrow on the caller (the task's done_ below still counts).
        std::lock_guard<std::mutex> failure(failure_mutex_);
        if (!failure_) failure_ = std::current_exception();
        failed_.store(true, std::memory_order_release);
      }
    }
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == tasks) {
      // Taking the mutex orders this notification after the caller's check-then-sleep.
      {
        std::lock_guard<std::mutex> sleep(sleep_mutex_);
      }
      finished_.notify_all();
    }
  }
}

void ThreadPool::run(int64_t tasks, TaskFn fn, void* ctx) {
  std::unique_lock<std::mutex> lock(region_mutex_, std::try_to_lock);
  // Inline when there is nothing to share, when the pool is busy (see parallel_for), or in a
  // forked child, where the workers do not exist.
  if (num_threads_ == 1 || tasks == 1 || !lock.owns_lock() || tasks >= kClosedIndex || forked()) {
    for (int64_t i = 0; i < tasks; ++i) fn(ctx, i, 0);
    return;
  }
  // start_workers() is called again until one starts: a system that refused every thread once
  // may have room later.
  if (workers_.empty()) try_start_workers();
  if (workers_.empty()) {
    for (int64_t i = 0; i < tasks; ++i) fn(ctx, i, 0);
    return;
  }
  failure_ = nullptr;  // no task of this pool runs now: the previous region has finished
  failed_.store(false, std::memory_order_relaxed);
  const uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  const uint64_t base = static_cast<uint64_t>(generation) << 32;
  // Close the previous region before its fields change (see work()).
  claim_.store(base | kClosedIndex, std::memory_order_seq_cst);
  fn_.store(fn, std::memory_order_release);
  ctx_.store(ctx, std::memory_order_release);
  tasks_.store(tasks, std::memory_order_release);
  done_.store(0, std::memory_order_release);
  claim_.store(base, std::memory_order_release);  // open: task 0 is next
  {
    std::lock_guard<std::mutex> sleep(sleep_mutex_);
    generation_.store(generation, std::memory_order_release);
  }
  wake_.notify_all();
  work(generation, 0);
  int64_t d = done_.load(std::memory_order_acquire);
  for (int i = 0; d != tasks && i < kSpinIterations; ++i) {
    cpu_relax();
    d = done_.load(std::memory_order_acquire);
  }
  if (d != tasks) {
    std::unique_lock<std::mutex> sleep(sleep_mutex_);
    finished_.wait(sleep, [&] { return done_.load(std::memory_order_acquire) == tasks; });
  }
  if (failed_.load(std::memory_order_acquire)) {
    std::exception_ptr failure;
    {
      std::lock_guard<std::mutex> lock_failure(failure_mutex_);
      failure.swap(failure_);
    }
    std::rethrow_exception(failure);
  }
}

}  // namespace webnn
