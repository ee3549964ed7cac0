// A persistent pool of worker threads owned by one context. Kernels split their work into
// tasks and run them with parallel_for; the calling thread takes tasks too.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace webnn {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread; values below 1 mean 1. Workers start on the first
  // parallel region that needs them, so a context that never runs one costs no threads.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(task, thread) for every task in [0, tasks) and returns when all have finished.
  // `thread` is in [0, num_threads()) and is unique among concurrently running calls, so it can
  // index per-thread scratch. A caller that finds the pool busy (another dispatch, or a nested
  // call from inside a task) runs its tasks inline on its own thread, as thread 0 of its own
  // region: fn must not assume that thread 0 is the pool's creator.
  // An exception thrown by a task (std::bad_alloc from a kernel's scratch) is rethrown here, on
  // the calling thread, once every task has finished or been skipped: on a worker it would end
  // the process (std::terminate), and on the caller it would leave workers running tasks whose
  // captures are gone. The tasks not yet started when one throws are skipped.
  template <class F>
  void parallel_for(int64_t tasks, F&& fn) {
    using Fn = std::remove_reference_t<F>;
    if (tasks <= 0) return;
    auto call = [](void* ctx, int64_t task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); };
    run(tasks, call, const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using TaskFn = void (*)(void* ctx, int64_t task, int thread);
  void run(int64_t tasks, TaskFn fn, void* ctx);
  void start_workers();
  void worker_main(int thread, uint32_t seen);
  // Claims and runs tasks of the region tagged `generation` until none are left.
  void work(uint32_t generation, int thread);
  // Starts the workers that the system lets it start (see run()).
  void try_start_workers();

  // True in a child created by fork() after the workers started: they do not exist there.
  bool forked() const;

  const int num_threads_;
  std::vector<std::thread> workers_;
  long owner_pid_ = 0;       // the process that started the workers
  std::mutex region_mutex_;  // one parallel region at a time
  // The current region. `claim_` packs the region's generation (high 32 bits) with the next
  // unclaimed task index (low 32 bits); the index kClosedIndex marks a region being set up. A
  // claim is a compare-and-swap on that word, so it can only take a task of the region whose
  // fields the worker read (see work()); each task runs exactly once and done_ cannot overshoot.
  static constexpr int64_t kClosedIndex = 0xffffffff;
  std::atomic<TaskFn> fn_{nullptr};
  std::atomic<void*> ctx_{nullptr};
  std::atomic<int64_t> tasks_{0};
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<uint32_t> generation_{0};  // bumped to wake workers
  std::atomic<bool> stop_{false};
  // The first exception of the current region's tasks (rethrown by run()), and a flag that
  // lets the others skip their tasks.
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::atomic<bool> failed_{false};
  // Sleeping after the spin: condition variables rather than std::atomic::wait, whose
  // libstdc++ 11/12 implementation can miss wake-ups.
  std::mutex sleep_mutex_;
  std::condition_variable wake_;      // workers: generation_ changed
  std::condition_variable finished_;  // caller: done_ reached tasks_
};

// WEBNN_NUM_THREADS when set to a positive integer, else the number of hardware threads.
int default_thread_count();

}  // namespace webnn
