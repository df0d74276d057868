// The GPU-semantics executor: every thread of a block is a fiber (ucontext) running the kernel on
// its own interpreter program; sync_threads() switches back to the block's scheduler, which
// starts the next phase once every thread waits at the same barrier.
#include "tirtune/interp/gpu_executor.h"

#include <fmt/format.h>
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

#include "program.h"
#include "race_detector.h"

namespace tirtune {
namespace {

using interp::Machine;
using interp::PhaseClock;
using interp::Program;
using interp::RaceDetector;

// Deep enough for the interpreter's recursion over any loop nest; pages are touched on demand.
constexpr size_t kFiberStackBytes = 256 * 1024;

// The kernel as a function the interpreter runs: its global buffers, its shared buffers and the
// six thread indices (an int64 array) as parameters, the indices bound by lets around the body.
PrimFunc ThreadFunction(const GpuKernel& kernel, Buffer* index) {
  *index = Buffer("thread_index", DataType::Index(), {IntImm(DataType::Index(), 6)});
  std::vector<Buffer> params = kernel.params;
  params.insert(params.end(), kernel.shared.begin(), kernel.shared.end());
  params.push_back(*index);
  Stmt body = kernel.body;
  for (int axis = 2; axis >= 0; --axis) {
    body = MakeLetStmt(kernel.thread_idx[axis],
                       MakeBufferLoad(*index, {IntImm(DataType::Index(), 3 + axis)}), body);
  }
  for (int axis = 2; axis >= 0; --axis) {
    body = MakeLetStmt(kernel.block_idx[axis],
                       MakeBufferLoad(*index, {IntImm(DataType::Index(), axis)}), body);
  }
  return PrimFunc(kernel.name, params, body);
}

class BlockScheduler;

// One GPU thread: its program, its fiber, and where it stands.
struct GpuThread final : interp::BarrierHandler {
  std::unique_ptr<Program> program;
  Machine machine;
  NDArray index = NDArray::Empty({6}, DataType::Index());
  std::unique_ptr<char[]> stack{new char[kFiberStackBytes]};
  ucontext_t context;
  BlockScheduler* scheduler = nullptr;
  int waiting_at = -1;  // the number of the barrier it stands at
  int shuffle_at = -1;  // the number of the warp shuffle it stands at
  interp::Scalar shuffle_value{}, shuffle_result{};
  int64_t shuffle_mask = 0;
  bool done = false;
  std::exception_ptr error;

  void Arrive(int barrier, Machine& m) override;
  interp::Scalar Shuffle(int shuffle, interp::Scalar value, int64_t lane_mask,
                         Machine& m) override;
};

// Runs the blocks of one kernel.
class BlockScheduler {
 public:
  BlockScheduler(const GpuKernel& kernel, const std::vector<NDArray>& globals,
                 const GpuExecutorConfig& config)
      : kernel_(kernel), globals_(globals), config_(config) {
    func_ = ThreadFunction(kernel, &index_);
    clock_.block_dim = kernel.block;
    threads_.resize(kernel.ThreadsPerBlock());
    for (auto& t : threads_) {
      t = std::make_unique<GpuThread>();
      t->program = std::make_unique<Program>(func_);
      t->scheduler = this;
      t->machine.barrier = t.get();
    }
    if (config_.detect_races) {
      for (const Buffer& b : kernel.shared) {
        detectors_.push_back(
            std::make_unique<RaceDetector>(b->name, b.ConstNumElements(), &clock_));
      }
      // Every thread's slot of shared buffer i reports to detector i.
      for (auto& t : threads_) {
        for (size_t i = 0; i < kernel.shared.size(); ++i) {
          t->program->params()[kernel.params.size() + i].slot->observer = detectors_[i].get();
        }
      }
    }
  }

  void RunAll() {
    const auto& g = kernel_.grid;
    for (int64_t z = 0; z < g[2]; ++z) {
      for (int64_t y = 0; y < g[1]; ++y) {
        for (int64_t x = 0; x < g[0]; ++x) RunBlock({x, y, z});
      }
    }
  }

  ucontext_t* scheduler_context() { return &scheduler_context_; }

 private:
  void RunBlock(std::array<int64_t, 3> block) {
    clock_.block_text =
        fmt::format("block ({}, {}, {}) of kernel {}", block[0], block[1], block[2], kernel_.name);
    // Step 1. Shared memory for this block, poisoned; every thread bound to it at its start.
    std::vector<NDArray> args = globals_;
    for (const Buffer& b : kernel_.shared) {
      NDArray a = NDArray::Empty({b.ConstNumElements()}, b->dtype);
      a.Fill(b->dtype.is_float() ? std::nan("") : 0.0);
      args.push_back(a);
    }
    args.emplace_back();
    const auto& d = kernel_.block;
    for (size_t t = 0; t < threads_.size(); ++t) {
      GpuThread& thread = *threads_[t];
      int64_t* index = static_cast<int64_t*>(thread.index.raw());
      int64_t tt = static_cast<int64_t>(t);
      int64_t values[6] = {block[0],  block[1],         block[2],
                           tt % d[0], tt / d[0] % d[1], tt / (d[0] * d[1])};
      std::copy(values, values + 6, index);
      args.back() = thread.index;
      interp::BindArguments(func_, *thread.program, args, thread.machine);
      thread.done = false;
      thread.waiting_at = -1;
      thread.shuffle_at = -1;
      thread.error = nullptr;
      getcontext(&thread.context);
      thread.context.uc_stack.ss_sp = thread.stack.get();
      thread.context.uc_stack.ss_size = kFiberStackBytes;
      thread.context.uc_link = &scheduler_context_;
      makecontext(&thread.context, &BlockScheduler::FiberMain, 0);
    }
    // Step 2. Phases: every thread runs to its next barrier (or its end); then they must agree.
    // Within a phase, threads stopped at a warp shuffle exchange their values warp by warp and
    // go on (a shuffle orders nothing in shared memory: the phase stays the same).
    while (true) {
      ++clock_.phase;
      std::vector<bool> run(threads_.size());
      for (size_t t = 0; t < threads_.size(); ++t) run[t] = !threads_[t]->done;
      do {
        for (size_t t = 0; t < threads_.size(); ++t) {
          if (!run[t]) continue;
          GpuThread& thread = *threads_[t];
          clock_.thread = static_cast<int32_t>(t);
          starting_ = &thread;
          swapcontext(&scheduler_context_, &thread.context);
          if (thread.error) Rethrow(thread.error, static_cast<int32_t>(t));
        }
      } while (ExchangeShuffles(&run));
      if (CheckBarrierAgreement()) return;
    }
  }

  // Every warp whose threads stopped at a warp shuffle: checks that all of its threads stand at
  // the same one, hands each the value of its partner lane and marks it to run on (`run`).
  // Returns whether any thread was at a shuffle.
  bool ExchangeShuffles(std::vector<bool>* run) {
    constexpr size_t kWarp = 32;
    bool any = false;
    for (size_t w = 0; w < threads_.size(); w += kWarp) {
      size_t lanes = std::min(kWarp, threads_.size() - w);
      const GpuThread& first = *threads_[w];
      bool at_shuffle = false;
      for (size_t l = 0; l < lanes; ++l) at_shuffle |= threads_[w + l]->shuffle_at >= 0;
      if (!at_shuffle) continue;
      any = true;
      for (size_t l = 0; l < lanes; ++l) {
        const GpuThread& other = *threads_[w + l];
        if (other.shuffle_at == first.shuffle_at && first.shuffle_at >= 0) continue;
        auto where = [](const GpuThread& th) {
          return th.shuffle_at >= 0 ? std::string("waits at a warp shuffle")
                 : th.done          ? std::string("finished the kernel")
                                    : std::string("waits at a sync_threads()");
        };
        throw GpuRaceError(fmt::format(
            "warp divergence in {}: {} {}, but {} {}{}; every thread of a warp must reach the "
            "same warp_shuffle_xor",
            clock_.block_text, ThreadText(static_cast<int32_t>(w)), where(first),
            ThreadText(static_cast<int32_t>(w + l)), where(other),
            first.shuffle_at >= 0 && other.shuffle_at >= 0 ? " (a different one)" : ""));
      }
      for (size_t l = 0; l < lanes; ++l) {
        GpuThread& thread = *threads_[w + l];
        size_t partner = l ^ static_cast<size_t>(thread.shuffle_mask);
        if (thread.shuffle_mask < 0 || partner >= lanes) {
          throw GpuRaceError(fmt::format(
              "warp shuffle in {}: {} reads lane {} (its lane {} xor {}), which its warp of {} "
              "threads does not have",
              clock_.block_text, ThreadText(static_cast<int32_t>(w + l)), partner, l,
              thread.shuffle_mask, lanes));
        }
        thread.shuffle_result = threads_[w + partner]->shuffle_value;
      }
      for (size_t l = 0; l < lanes; ++l) threads_[w + l]->shuffle_at = -1;
    }
    for (size_t t = 0; t < threads_.size(); ++t) (*run)[t] = false;
    if (!any) return false;
    // Those just released run on; a thread at a barrier waits for the next phase.
    for (size_t t = 0; t < threads_.size(); ++t) {
      const GpuThread& thread = *threads_[t];
      (*run)[t] = !thread.done && thread.waiting_at < 0;
    }
    return true;
  }

  // True when every thread has finished; throws when some wait at a barrier that others skip.
  bool CheckBarrierAgreement() const {
    const GpuThread& first = *threads_[0];
    for (size_t t = 1; t < threads_.size(); ++t) {
      const GpuThread& other = *threads_[t];
      if (other.done == first.done && other.waiting_at == first.waiting_at) continue;
      auto where = [](const GpuThread& th) {
        return th.done ? std::string("finished the kernel")
                       : std::string("waits at a sync_threads()");
      };
      throw GpuRaceError(fmt::format(
          "barrier divergence in {}: {} {}, but {} {}{}; every thread of a block must reach the "
          "same sync_threads()",
          clock_.block_text, ThreadText(0), where(first), ThreadText(static_cast<int32_t>(t)),
          where(other), first.done || other.done ? "" : " (a different one)"));
    }
    return first.done;
  }

  std::string ThreadText(int32_t t) const {
    const auto& d = kernel_.block;
    return fmt::format("thread ({}, {}, {})", t % d[0], t / d[0] % d[1], t / (d[0] * d[1]));
  }

  [[noreturn]] void Rethrow(std::exception_ptr error, int32_t thread) const {
    try {
      std::rethrow_exception(error);
    } catch (const GpuRaceError&) {
      throw;
    } catch (const InterpError& e) {
      throw InterpError(fmt::format("{}, {}: {}", clock_.block_text, ThreadText(thread), e.what()));
    }
    TT_UNREACHABLE("an exception that is no exception");
  }

  static void FiberMain() {
    GpuThread* thread = current_->starting_;
    try {
      thread->program->body().Exec(thread->machine);
    } catch (...) {
      thread->error = std::current_exception();
    }
    thread->done = true;
    thread->waiting_at = -1;
    // Returning resumes uc_link, the scheduler.
  }

 public:
  // The scheduler whose fibers are running (one kernel runs at a time on a thread).
  static thread_local BlockScheduler* current_;

 private:
  const GpuKernel& kernel_;
  const std::vector<NDArray>& globals_;
  const GpuExecutorConfig& config_;
  PrimFunc func_;
  Buffer index_;
  PhaseClock clock_;
  std::vector<std::unique_ptr<GpuThread>> threads_;
  std::vector<std::unique_ptr<RaceDetector>> detectors_;
  ucontext_t scheduler_context_;
  GpuThread* starting_ = nullptr;
};

thread_local BlockScheduler* BlockScheduler::current_ = nullptr;

void GpuThread::Arrive(int barrier, Machine& /*m*/) {
  waiting_at = barrier;
  swapcontext(&context, scheduler->scheduler_context());
  waiting_at = -1;
}

interp::Scalar GpuThread::Shuffle(int shuffle, interp::Scalar value, int64_t lane_mask,
                                  Machine& /*m*/) {
  shuffle_at = shuffle;
  shuffle_value = value;
  shuffle_mask = lane_mask;
  swapcontext(&context, scheduler->scheduler_context());
  return shuffle_result;
}

}  // namespace

void ExecuteGpuModule(const GpuModule& module, const std::vector<NDArray>& args,
                      const GpuExecutorConfig& config) {
  if (args.size() != module.params.size()) {
    throw InterpError(fmt::format("module {} takes {} arguments, got {}", module.name,
                                  module.params.size(), args.size()));
  }
  // The host: intermediates (poisoned, like shared memory), then the kernels in order.
  std::vector<NDArray> intermediates;
  for (const Buffer& b : module.global_allocs) {
    NDArray a = NDArray::Empty({b.ConstNumElements()}, b->dtype);
    a.Fill(b->dtype.is_float() ? std::nan("") : 0.0);
    intermediates.push_back(a);
  }
  for (const GpuKernel& kernel : module.kernels) {
    std::vector<NDArray> globals;
    for (const Buffer& b : kernel.params) {
      for (size_t i = 0; i < module.params.size(); ++i) {
        if (module.params[i].same_as(b)) globals.push_back(args[i]);
      }
      for (size_t i = 0; i < module.global_allocs.size(); ++i) {
        if (module.global_allocs[i].same_as(b)) globals.push_back(intermediates[i]);
      }
    }
    TT_ICHECK(globals.size() == kernel.params.size(), "kernel {} uses a buffer the module lacks",
              kernel.name);
    BlockScheduler scheduler(kernel, globals, config);
    BlockScheduler* outer = BlockScheduler::current_;
    BlockScheduler::current_ = &scheduler;
    try {
      scheduler.RunAll();
    } catch (...) {
      BlockScheduler::current_ = outer;
      throw;
    }
    BlockScheduler::current_ = outer;
  }
}

}  // namespace tirtune
