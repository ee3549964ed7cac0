// Back-to-back parallel regions of a few tasks each: the pattern of a graph of small kernels.
// Before the claim protocol was fixed, a worker holding a used-up claim of one region could run a
// task of the next one, which then ran twice: the pool hung or returned early within ~10^5
// regions at 2-4 threads. A watchdog turns a hang into a failure instead of a stuck suite.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

namespace webnn {
namespace {

// Aborts the process with a message unless stop() is called within `limit`.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, const char* what)
      : thread_([this, limit, what] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!cv_.wait_for(lock, limit, [this] { return stopped_; })) {
            std::fprintf(stderr, "watchdog: %s did not finish within %lld s (hang)\n", what,
                         static_cast<long long>(limit.count()));
            std::fflush(stderr);
            std::_Exit(3);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::thread thread_;
};

void stress(int threads, int regions) {
  ThreadPool pool(threads);
  // Each task writes its slot of a per-region array on the caller's stack; a task run twice, run
  // for the wrong region or still running after parallel_for returned shows as a wrong count.
  for (int r = 0; r < regions; ++r) {
    const int tasks = 1 + r % 8;
    int hits[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::atomic<int> total{0};
    pool.parallel_for(tasks, [&](int64_t t, int) {
      ++hits[t];
      total.fetch_add(1, std::memory_order_relaxed);
    });
    ASSERT_EQ(total.load(), tasks) << "region " << r << " at " << threads << " threads";
    for (int t = 0; t < tasks; ++t) {
      ASSERT_EQ(hits[t], 1) << "task " << t << " of region " << r << " at " << threads
                            << " threads";
    }
  }
}

TEST(ThreadPoolStressTest, BackToBackSmallRegionsRunEachTaskOnce) {
  Watchdog watchdog(std::chrono::seconds(120), "thread pool stress");
  for (int threads : {2, 3, 4}) stress(threads, 1000000);
}

TEST(ThreadPoolStressTest, ConcurrentCallersShareOnePool) {
  // Two callers race for the pool: one gets it, the other runs inline; both must see every task
  // of their own regions exactly once.
  Watchdog watchdog(std::chrono::seconds(120), "concurrent pool callers");
  ThreadPool pool(2);
  std::atomic<bool> failed{false};
  auto caller = [&] {
    for (int r = 0; r < 50000 && !failed; ++r) {
      const int tasks = 1 + r % 5;
      std::atomic<int> hits[5] = {0, 0, 0, 0, 0};
      pool.parallel_for(tasks, [&](int64_t t, int) { hits[t].fetch_add(1); });
      for (int t = 0; t < tasks; ++t) {
        if (hits[t].load() != 1) failed = true;
      }
    }
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_FALSE(failed.load());
}

// A task's exception (std::bad_alloc from a kernel's scratch) reaches the caller of
// parallel_for after every task has finished or been skipped, whichever thread threw it: on a
// worker it used to end the process (std::terminate). The pool serves the next regions.
TEST(ThreadPoolStressTest, TaskExceptionIsRethrownOnTheCaller) {
  Watchdog watchdog(std::chrono::seconds(60), "TaskExceptionIsRethrownOnTheCaller");
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    for (int r = 0; r < 500; ++r) {
      const int tasks = 2 + r % 7, failing = r % tasks;
      std::atomic<int> started{0}, finished{0};
      bool caught = false;
      try {
        pool.parallel_for(tasks, [&](int64_t t, int) {
          started.fetch_add(1);
          // Every task but the failing one takes a little while, so that some run on workers
          // and some are still running when it throws.
          if (t == failing) throw std::bad_alloc();
          for (int i = 0; i < 3; ++i) std::this_thread::yield();
          finished.fetch_add(1);
        });
      } catch (const std::bad_alloc&) {
        caught = true;
      }
      ASSERT_TRUE(caught) << "region " << r;
      // Nothing of the region runs after parallel_for returns.
      const int done = finished.load();
      EXPECT_EQ(started.load(), done + 1);
      std::this_thread::yield();
      EXPECT_EQ(finished.load(), done);
      std::atomic<int> total{0};
      pool.parallel_for(tasks, [&](int64_t, int) { total.fetch_add(1); });
      ASSERT_EQ(total.load(), tasks) << "region " << r;
    }
  }
}

TEST(ThreadPoolStressTest, OnlyTheFirstOfSeveralExceptionsIsRethrown) {
  ThreadPool pool(4);
  for (int r = 0; r < 200; ++r) {
    try {
      pool.parallel_for(64, [&](int64_t t, int) {
        if (t % 3 == 0) throw std::runtime_error("task " + std::to_string(t));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("task ", 0), 0u);
    }
  }
}

}  // namespace
}  // namespace webnn
