// The runtime thread pool: every iteration is covered exactly once, chunks are contiguous and
// balanced, nested and concurrent launches run serially, errors propagate, and many small
// launches in a row stay correct (and are timed).
#include "tirtune/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "tirtune/runtime/c_runtime_api.h"

namespace tirtune::runtime {
namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  explicit Coverage(int64_t n) : hits(n) {}
};

int32_t CountHits(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<Coverage*>(closure);
  for (int64_t i = begin; i < end; ++i) c->hits[i].fetch_add(1);
  std::lock_guard<std::mutex> lock(c->mutex);
  c->threads.insert(std::this_thread::get_id());
  c->chunks.emplace_back(begin, end);
  return 0;
}

TEST(ThreadPool, EveryIterationRunsExactlyOnce) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 4});
  for (int64_t extent : {1, 2, 3, 4, 5, 7, 64, 1000, 12345}) {
    for (int32_t max_tasks : {0, 1, 2, 3, 8, 100}) {
      Coverage c(extent);
      ASSERT_EQ(pool.Launch(&CountHits, &c, extent, max_tasks), 0);
      for (int64_t i = 0; i < extent; ++i) {
        ASSERT_EQ(c.hits[i].load(), 1) << "extent " << extent << " max_tasks " << max_tasks;
      }
      int64_t expected_chunks = std::min<int64_t>(extent, max_tasks > 0 ? max_tasks : 4);
      EXPECT_EQ(static_cast<int64_t>(c.chunks.size()), expected_chunks);
    }
  }
}

TEST(ThreadPool, ChunksAreContiguousAndBalanced) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t t = 0; t < 4; ++t) {
    int64_t begin, end;
    ThreadPool::ChunkBounds(10, 4, t, &begin, &end);
    chunks.emplace_back(begin, end);
  }
  EXPECT_EQ(chunks, (std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, 6}, {6, 8}, {8, 10}}));
}

TEST(ThreadPool, EmptyExtentCallsNothing) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  Coverage c(0);
  EXPECT_EQ(pool.Launch(&CountHits, &c, 0), 0);
  EXPECT_EQ(pool.Launch(&CountHits, &c, -5), 0);
  EXPECT_TRUE(c.chunks.empty());
}

TEST(ThreadPool, WorkersShareTheWork) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3});
  std::set<std::thread::id> seen;
  // Chunks that take a while give every worker time to wake and claim one.
  for (int rep = 0; rep < 20 && seen.size() < 2; ++rep) {
    Coverage c(3);
    pool.ParallelFor(3, [&](int64_t begin, int64_t end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      CountHits(begin, end, &c);
    });
    seen.insert(c.threads.begin(), c.threads.end());
  }
  EXPECT_GE(seen.size(), 2u);
}

TEST(ThreadPool, NestedLaunchRunsSeriallyOnTheCallingThread) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 4});
  std::atomic<int> inner_total{0};
  std::atomic<bool> inner_on_other_thread{false};
  pool.ParallelFor(8, [&](int64_t begin, int64_t end) {
    EXPECT_TRUE(ThreadPool::InParallelRegion());
    for (int64_t i = begin; i < end; ++i) {
      std::thread::id outer = std::this_thread::get_id();
      int chunks = 0;
      pool.ParallelFor(16, [&](int64_t b, int64_t e) {
        ++chunks;
        if (std::this_thread::get_id() != outer) inner_on_other_thread = true;
        inner_total += static_cast<int>(e - b);
      });
      EXPECT_EQ(chunks, 1);
    }
  });
  EXPECT_FALSE(ThreadPool::InParallelRegion());
  EXPECT_FALSE(inner_on_other_thread.load());
  EXPECT_EQ(inner_total.load(), 8 * 16);
}

int32_t FailOnChunkStartingAtTwo(int64_t begin, int64_t, void*) { return begin == 2 ? 7 : 0; }

TEST(ThreadPool, FirstNonZeroReturnIsReported) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  EXPECT_EQ(pool.Launch(&FailOnChunkStartingAtTwo, nullptr, 4, 4), 7);
  EXPECT_EQ(pool.Launch(&FailOnChunkStartingAtTwo, nullptr, 4, 1), 0);  // one chunk [0, 4)
}

TEST(ThreadPool, ExceptionsFromChunksAreRethrown) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  EXPECT_THROW(pool.ParallelFor(10,
                                [](int64_t begin, int64_t) {
                                  if (begin > 0) throw std::runtime_error("chunk failed");
                                }),
               std::runtime_error);
  // The pool is usable afterwards.
  Coverage c(10);
  EXPECT_EQ(pool.Launch(&CountHits, &c, 10), 0);
  EXPECT_EQ(c.hits[9].load(), 1);
}

TEST(ThreadPool, ManySmallLaunchesStayCorrect) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  std::vector<int64_t> data(64, 0);
  constexpr int kLaunches = 20000;
  auto start = std::chrono::steady_clock::now();
  for (int rep = 0; rep < kLaunches; ++rep) {
    pool.ParallelFor(64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) data[i] += 1;
    });
  }
  double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      kLaunches;
  for (int64_t v : data) ASSERT_EQ(v, kLaunches);
  std::printf("[ThreadPool] launch overhead (2 threads, back to back): %.2f us\n", us);
}

TEST(ThreadPool, LaunchesAfterSleepingWakeTheWorkers) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2, .spin_iterations = 10});
  for (int rep = 0; rep < 50; ++rep) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // workers go to sleep
    Coverage c(100);
    ASSERT_EQ(pool.Launch(&CountHits, &c, 100), 0);
    for (int64_t i = 0; i < 100; ++i) ASSERT_EQ(c.hits[i].load(), 1);
  }
}

TEST(ThreadPool, ConcurrentLaunchersAllFinishCorrectly) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3});
  std::vector<std::thread> launchers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    launchers.emplace_back([&] {
      for (int rep = 0; rep < 500; ++rep) {
        Coverage c(37);
        if (pool.Launch(&CountHits, &c, 37) != 0) ++failures;
        for (int64_t i = 0; i < 37; ++i) {
          if (c.hits[i].load() != 1) ++failures;
        }
      }
    });
  }
  for (std::thread& t : launchers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, DestroyingRightAfterALaunchDoesNotHang) {
  // The shutdown's wake-up must not be mistaken for a launch by a worker still waking from the
  // last real one.
  for (int rep = 0; rep < 2000; ++rep) {
    ThreadPool pool(ThreadPoolOptions{.num_threads = 3, .spin_iterations = rep % 3 == 0 ? 0 : 50});
    Coverage c(8);
    ASSERT_EQ(pool.Launch(&CountHits, &c, 8), 0);
  }
}

TEST(ThreadPool, PinnedWorkersRun) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2, .pin_workers = true});
  Coverage c(50);
  EXPECT_EQ(pool.Launch(&CountHits, &c, 50), 0);
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(c.hits[i].load(), 1);
}

TEST(RuntimeApi, ParallelForUsesTheGlobalPool) {
  Coverage c(1000);
  EXPECT_EQ(tirtune_parallel_for(&CountHits, &c, 1000, 0), 0);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(c.hits[i].load(), 1);
  EXPECT_EQ(static_cast<int>(c.chunks.size()), std::min(1000, GlobalThreadPool().num_threads()));
}

// On OpenMP's threads: every iteration once, in at most `threads` (or max_tasks) contiguous
// chunks, a nested launch serial, the first non-zero return reported; tirtune_parallel_for goes
// there while the runtime is OpenMP's.
TEST(RuntimeApi, OpenMpLaunchesCoverTheExtentOnceAndNestSerially) {
  Coverage c(1001);
  EXPECT_EQ(OpenMpLaunch(&CountHits, &c, 1001, 0, 3), 0);
  for (int64_t i = 0; i < 1001; ++i) ASSERT_EQ(c.hits[i].load(), 1) << i;
  EXPECT_EQ(c.chunks.size(), 3u);
  Coverage two(10);
  EXPECT_EQ(OpenMpLaunch(&CountHits, &two, 10, 2, 4), 0);
  EXPECT_EQ(two.chunks.size(), 2u);
  auto nested = [](int64_t begin, int64_t end, void* closure) -> int32_t {
    auto* c = static_cast<Coverage*>(closure);
    for (int64_t i = begin; i < end; ++i) {
      if (OpenMpLaunch(&CountHits, c, 1, 0, 4) != 0) return 1;  // serial: one chunk
    }
    return 0;
  };
  Coverage inner(1);
  EXPECT_EQ(OpenMpLaunch(nested, &inner, 4, 0, 2), 0);
  EXPECT_EQ(inner.hits[0].load(), 4);
  auto fails = [](int64_t begin, int64_t, void*) -> int32_t { return begin == 0 ? 0 : 7; };
  EXPECT_EQ(OpenMpLaunch(fails, nullptr, 8, 0, 2), 7);
  SetParallelRuntime(ParallelRuntime::kOpenMp);
  if (std::getenv("TIRTUNE_PARALLEL_RUNTIME") == nullptr) {
    EXPECT_EQ(CurrentParallelRuntime(), ParallelRuntime::kOpenMp);
  }
  Coverage api(500);
  EXPECT_EQ(tirtune_parallel_for(&CountHits, &api, 500, 0), 0);
  for (int64_t i = 0; i < 500; ++i) ASSERT_EQ(api.hits[i].load(), 1);
  SetParallelRuntime(ParallelRuntime::kPool);
}

TEST(RuntimeApi, WorkspaceIsAligned) {
  for (int64_t bytes : {0, 1, 63, 64, 100000}) {
    void* p = tirtune_workspace_alloc(bytes, 64);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    tirtune_workspace_free(p);
  }
  EXPECT_EQ(tirtune_workspace_alloc(16, 3), nullptr);  // not a power of two
  EXPECT_EQ(tirtune_workspace_alloc(-1, 64), nullptr);
}

TEST(RuntimeApi, AFreedWorkspaceIsReusedByTheNextAllocationOfItsSize) {
  // A kernel allocating in a parallel loop does so on every call: the second call must not
  // go back to malloc (an mmap and fresh page faults for blocks of 128 KiB or more).
  void* first = tirtune_workspace_alloc(166000, 64);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, 166000);
  tirtune_workspace_free(first);
  void* again = tirtune_workspace_alloc(166000, 64);
  EXPECT_EQ(again, first);
  // A block four times too large is not handed out for a small request, nor a smaller one for
  // a larger request; both stay usable.
  void* small = tirtune_workspace_alloc(1000, 64);
  EXPECT_NE(small, again);
  void* larger = tirtune_workspace_alloc(400000, 128);
  ASSERT_NE(larger, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(larger) % 128, 0u);
  std::memset(larger, 2, 400000);
  tirtune_workspace_free(small);
  tirtune_workspace_free(again);
  tirtune_workspace_free(larger);
  tirtune_workspace_free(nullptr);
}

TEST(RuntimeApi, WorkspacesOfManyThreadsAndSizesStayApart) {
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &errors] {
      for (int round = 0; round < 200; ++round) {
        int64_t bytes = 64 + (round * 7919 + t * 104729) % 300000;
        auto* p = static_cast<unsigned char*>(tirtune_workspace_alloc(bytes, 64));
        auto* q = static_cast<unsigned char*>(tirtune_workspace_alloc(bytes / 2 + 1, 64));
        if (p == nullptr || q == nullptr || p == q) {
          ++errors;
          continue;
        }
        std::memset(p, t, static_cast<size_t>(bytes));
        std::memset(q, t + 1, static_cast<size_t>(bytes / 2 + 1));
        if (p[bytes - 1] != t || q[0] != t + 1) ++errors;
        tirtune_workspace_free(q);
        tirtune_workspace_free(p);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST(RuntimeApi, SymbolTableNamesEveryFunction) {
  std::set<std::string> names;
  for (const RuntimeSymbol& s : RuntimeSymbols()) {
    EXPECT_NE(s.address, nullptr);
    names.insert(s.name);
  }
  EXPECT_EQ(names, (std::set<std::string>{"tirtune_parallel_for", "tirtune_workspace_alloc",
                                          "tirtune_workspace_free"}));
}

}  // namespace
}  // namespace tirtune::runtime
