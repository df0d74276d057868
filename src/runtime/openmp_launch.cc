// Parallel loops of compiled kernels on OpenMP's threads (thread_pool.h, ParallelRuntime): in a
// model whose library functions run on oneDNN, which Debian builds on OpenMP, a second team of
// threads (the pool's) would take turns with OpenMP's on the same cores: after a call each
// team's idle threads spin for a while, holding the core the other team's next call needs. With
// the kernels on OpenMP too, one team runs everything. Compiled with -fopenmp.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tirtune/runtime/thread_pool.h"

namespace tirtune::runtime {
namespace {

std::atomic<ParallelRuntime> g_runtime{ParallelRuntime::kPool};

}  // namespace

void SetParallelRuntime(ParallelRuntime runtime) {
  if (const char* forced = std::getenv("TIRTUNE_PARALLEL_RUNTIME"); forced != nullptr) {
    if (std::strcmp(forced, "pool") == 0) runtime = ParallelRuntime::kPool;
    if (std::strcmp(forced, "openmp") == 0) runtime = ParallelRuntime::kOpenMp;
  }
  g_runtime.store(runtime, std::memory_order_relaxed);
}

ParallelRuntime CurrentParallelRuntime() { return g_runtime.load(std::memory_order_relaxed); }

int32_t OpenMpLaunch(TirtuneParallelBody body, void* closure, int64_t extent, int32_t max_tasks,
                     int threads) {
  if (extent <= 0) return 0;
  int64_t tasks = max_tasks > 0 ? max_tasks : threads;
  tasks = std::min<int64_t>({tasks, extent, threads});
  if (tasks <= 1 || omp_in_parallel()) return body(0, extent, closure);
  std::atomic<int32_t> result{0};
#pragma omp parallel num_threads(static_cast <int>(tasks))
  {
    int64_t begin, end;
    ThreadPool::ChunkBounds(extent, tasks, omp_get_thread_num(), &begin, &end);
    if (begin < end) {
      int32_t rc = body(begin, end, closure);
      int32_t none = 0;
      if (rc != 0) result.compare_exchange_strong(none, rc, std::memory_order_relaxed);
    }
  }
  return result.load(std::memory_order_relaxed);
}

}  // namespace tirtune::runtime
