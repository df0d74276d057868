// The thread pool that runs parallel loops of compiled kernels: a fixed set of workers created
// once, woken per launch (spin briefly, then sleep on a futex), with the launching thread taking
// a share of the work. Generated code reaches it through tirtune_parallel_for
// (runtime/c_runtime_api.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "tirtune/runtime/c_runtime_api.h"

namespace tirtune::runtime {

struct ThreadPoolOptions {
  /// Threads that execute a launch, the launching thread included (so num_threads - 1 workers).
  /// 0 means the CPUs this process may run on. Default 0.
  int num_threads = 0;
  /// Pins worker k to CPU k + 1 (modulo the CPU count); the launching thread is left alone.
  /// Default false.
  bool pin_workers = false;
  /// Polls of the launch word a worker makes after a launch before it sleeps; larger values
  /// lower the latency of back-to-back launches at the price of busy CPU time. Default 20000
  /// (a few tens of microseconds).
  int spin_iterations = 20000;
};

/// A pool of workers for fork-join parallel loops. Launch() may be called from any thread;
/// one launch runs at a time and a concurrent or nested one runs serially on its caller.
class ThreadPool {
 public:
  explicit ThreadPool(const ThreadPoolOptions& options = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads that share a launch, the caller included.
  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls body(begin, end, closure) for contiguous chunks covering [0, extent), at most
  /// `max_tasks` of them (the pool size when max_tasks <= 0). Returns when all chunks are done:
  /// 0, or the first non-zero value a chunk returned.
  int32_t Launch(TirtuneParallelBody body, void* closure, int64_t extent, int32_t max_tasks = 0);

  /// C++ convenience over Launch: fn(begin, end) per chunk. An exception thrown by a chunk is
  /// rethrown here (the first one, after every chunk has finished).
  void ParallelFor(int64_t extent, const std::function<void(int64_t, int64_t)>& fn,
                   int32_t max_tasks = 0);

  /// True on a pool worker and on a launching thread while its launch runs.
  static bool InParallelRegion();

  /// Bounds [begin, end) of chunk `task` of `num_tasks` over [0, extent).
  static void ChunkBounds(int64_t extent, int64_t num_tasks, int64_t task, int64_t* begin,
                          int64_t* end);

 private:
  void WorkerMain(int index);
  // Claims and runs the tasks of launch `epoch` until none is left.
  void RunTasks(uint32_t epoch);
  // Spins, then sleeps, until the epoch differs from `seen`; returns the epoch it saw.
  uint32_t WaitForLaunch(uint32_t seen);

  ThreadPoolOptions options_;
  std::vector<std::thread> workers_;

  // The current launch. Written by the launching thread only while no task of the previous launch
  // can still be claimed (see Launch), read by whoever claims a task of it.
  std::atomic<TirtuneParallelBody> body_{nullptr};
  std::atomic<void*> closure_{nullptr};
  std::atomic<int64_t> extent_{0};
  std::atomic<int64_t> num_tasks_{0};

  // (epoch << 32) | next unclaimed task. Claiming is a CAS, so a task is claimed only while the
  // ticket still names the launch it belongs to.
  std::atomic<uint64_t> ticket_{0};
  // The epoch of the latest launch; workers sleep on it (futex word).
  std::atomic<uint32_t> epoch_{0};
  std::atomic<int32_t> sleepers_{0};
  std::atomic<int64_t> done_tasks_{0};
  std::atomic<int32_t> result_{0};
  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_{false};
};

/// The process-wide pool used by tirtune_parallel_for, created on first use.
ThreadPool& GlobalThreadPool();

/// Whose threads tirtune_parallel_for runs loops on: the pool's (the default), or OpenMP's, for a
/// process that also calls an OpenMP library (oneDNN) between kernels, so that one team of
/// threads runs everything (openmp_launch.cc). $TIRTUNE_PARALLEL_RUNTIME=pool|openmp overrides
/// what SetParallelRuntime is asked for.
enum class ParallelRuntime { kPool, kOpenMp };
void SetParallelRuntime(ParallelRuntime runtime);
ParallelRuntime CurrentParallelRuntime();
/// A launch on OpenMP's threads: one chunk per thread, at most `threads` of them, serial inside
/// a parallel region.
int32_t OpenMpLaunch(TirtuneParallelBody body, void* closure, int64_t extent, int32_t max_tasks,
                     int threads);

/// Sets the options the global pool is created with. Has an effect only before the pool
/// exists; returns false when it already exists with a different thread count.
bool ConfigureGlobalThreadPool(const ThreadPoolOptions& options);

/// A runtime function generated code may call, by its C name.
struct RuntimeSymbol {
  const char* name;
  void* address;
};
/// Every function of c_runtime_api.h, for code loaders that define them explicitly (a JIT linking
/// a kernel into a process whose executable does not export them).
const std::vector<RuntimeSymbol>& RuntimeSymbols();

}  // namespace tirtune::runtime
