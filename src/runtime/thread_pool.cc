// The fork-join thread pool behind tirtune_parallel_for. A launch publishes its chunk count and
// body, wakes the workers (only those asleep cost a futex call), runs chunks itself, and waits for
// the last chunk. Chunks are claimed with a CAS on a ticket that carries the launch's epoch, so a
// worker that wakes late can never claim a chunk of a launch it has not seen published.
#include "tirtune/runtime/thread_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <memory>
#include <mutex>

namespace tirtune::runtime {
namespace {

thread_local bool tls_in_parallel_region = false;

constexpr uint32_t kClosedTicket = 0xffffffffu;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

uint32_t* FutexWord(std::atomic<uint32_t>* word) { return reinterpret_cast<uint32_t*>(word); }

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

int UsableCpuCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void PinCurrentThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort
}

// The closure ParallelFor passes through the C interface.
struct FunctionClosure {
  const std::function<void(int64_t, int64_t)>* fn;
  std::mutex mutex;
  std::exception_ptr error;
};

int32_t CallFunction(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<FunctionClosure*>(closure);
  try {
    (*c->fn)(begin, end);
    return 0;
  } catch (...) {
    std::lock_guard<std::mutex> lock(c->mutex);
    if (!c->error) c->error = std::current_exception();
    return -1;
  }
}

}  // namespace

ThreadPool::ThreadPool(const ThreadPoolOptions& options) : options_(options) {
  int threads = options.num_threads > 0 ? options.num_threads : UsableCpuCount();
  options_.num_threads = threads;
  workers_.reserve(threads - 1);
  for (int k = 0; k + 1 < threads; ++k) workers_.emplace_back([this, k] { WorkerMain(k); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(&epoch_);
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::InParallelRegion() { return tls_in_parallel_region; }

void ThreadPool::ChunkBounds(int64_t extent, int64_t num_tasks, int64_t task, int64_t* begin,
                             int64_t* end) {
  int64_t base = extent / num_tasks;
  int64_t rem = extent % num_tasks;
  *begin = task * base + std::min(task, rem);
  *end = *begin + base + (task < rem ? 1 : 0);
}

int32_t ThreadPool::Launch(TirtuneParallelBody body, void* closure, int64_t extent,
                           int32_t max_tasks) {
  if (extent <= 0) return 0;
  int64_t tasks = max_tasks > 0 ? max_tasks : num_threads();
  tasks = std::min<int64_t>({tasks, extent, INT32_MAX});
  if (tasks <= 1 || workers_.empty() || tls_in_parallel_region) return body(0, extent, closure);
  bool expected = false;
  if (!busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    return body(0, extent, closure);  // another thread holds the pool
  }

  // Step 1. Close the previous launch: after this exchange no chunk of it can be claimed, and
  // (being a read-modify-write) it orders every earlier claim before the writes below.
  uint32_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  ticket_.exchange((uint64_t{epoch} << 32) | kClosedTicket, std::memory_order_acq_rel);
  // Step 2. Describe this launch, then open its ticket and wake the sleepers.
  body_.store(body, std::memory_order_relaxed);
  closure_.store(closure, std::memory_order_relaxed);
  extent_.store(extent, std::memory_order_relaxed);
  num_tasks_.store(tasks, std::memory_order_relaxed);
  done_tasks_.store(0, std::memory_order_relaxed);
  result_.store(0, std::memory_order_relaxed);
  ticket_.store(uint64_t{epoch} << 32, std::memory_order_release);
  epoch_.store(epoch, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) FutexWakeAll(&epoch_);

  // Step 3. Work alongside the workers, then wait for the chunks they claimed.
  tls_in_parallel_region = true;
  RunTasks(epoch);
  for (uint64_t spins = 0; done_tasks_.load(std::memory_order_acquire) != tasks; ++spins) {
    if (spins < (1u << 16)) {
      CpuRelax();
    } else {
      std::this_thread::yield();  // a worker was descheduled; let it run
    }
  }
  tls_in_parallel_region = false;
  int32_t result = result_.load(std::memory_order_relaxed);
  busy_.store(false, std::memory_order_release);
  return result;
}

void ThreadPool::RunTasks(uint32_t epoch) {
  uint64_t ticket = ticket_.load(std::memory_order_acquire);
  for (;;) {
    if (static_cast<uint32_t>(ticket >> 32) != epoch) return;
    uint32_t task = static_cast<uint32_t>(ticket);
    // Read before the claim; only used when the claim succeeds, which proves the launch is still
    // the one whose fields were read (see Launch, step 1).
    int64_t num_tasks = num_tasks_.load(std::memory_order_relaxed);
    if (task == kClosedTicket || task >= num_tasks) return;
    if (!ticket_.compare_exchange_weak(ticket, ticket + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      continue;
    }
    int64_t begin, end;
    ChunkBounds(extent_.load(std::memory_order_relaxed), num_tasks, task, &begin, &end);
    int32_t rc =
        body_.load(std::memory_order_relaxed)(begin, end, closure_.load(std::memory_order_relaxed));
    if (rc != 0) {
      int32_t none = 0;
      result_.compare_exchange_strong(none, rc, std::memory_order_relaxed);
    }
    done_tasks_.fetch_add(1, std::memory_order_release);
    ticket = ticket_.load(std::memory_order_acquire);
  }
}

uint32_t ThreadPool::WaitForLaunch(uint32_t seen) {
  for (int k = 0; k < options_.spin_iterations; ++k) {
    uint32_t epoch = epoch_.load(std::memory_order_acquire);
    if (epoch != seen) return epoch;
    CpuRelax();
  }
  for (;;) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (epoch_.load(std::memory_order_seq_cst) == seen) FutexWait(&epoch_, seen);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    uint32_t epoch = epoch_.load(std::memory_order_acquire);
    if (epoch != seen) return epoch;
  }
}

void ThreadPool::WorkerMain(int index) {
  tls_in_parallel_region = true;  // a parallel loop inside a chunk runs serially
  if (options_.pin_workers) PinCurrentThread((index + 1) % UsableCpuCount());
  uint32_t seen = 0;
  for (;;) {
    // The epoch that ended the wait is the one acted on: re-reading it could skip the shutdown's
    // bump (treating it as a launch) and then sleep forever.
    seen = WaitForLaunch(seen);
    if (stop_.load(std::memory_order_acquire)) return;
    RunTasks(seen);
  }
}

void ThreadPool::ParallelFor(int64_t extent, const std::function<void(int64_t, int64_t)>& fn,
                             int32_t max_tasks) {
  FunctionClosure closure;
  closure.fn = &fn;
  Launch(&CallFunction, &closure, extent, max_tasks);
  if (closure.error) std::rethrow_exception(closure.error);
}

namespace {

std::mutex global_pool_mutex;
ThreadPoolOptions global_pool_options;
std::unique_ptr<ThreadPool> global_pool;
std::atomic<ThreadPool*> global_pool_ptr{nullptr};

}  // namespace

ThreadPool& GlobalThreadPool() {
  ThreadPool* pool = global_pool_ptr.load(std::memory_order_acquire);
  if (pool != nullptr) return *pool;
  std::lock_guard<std::mutex> lock(global_pool_mutex);
  if (!global_pool) {
    global_pool = std::make_unique<ThreadPool>(global_pool_options);
    global_pool_ptr.store(global_pool.get(), std::memory_order_release);
  }
  return *global_pool;
}

bool ConfigureGlobalThreadPool(const ThreadPoolOptions& options) {
  std::lock_guard<std::mutex> lock(global_pool_mutex);
  if (global_pool) {
    int wanted = options.num_threads > 0 ? options.num_threads : UsableCpuCount();
    return global_pool->num_threads() == wanted;
  }
  global_pool_options = options;
  return true;
}

}  // namespace tirtune::runtime
