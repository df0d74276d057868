// Measuring compiled candidates: what a candidate is, what can happen to it (MeasureStatus), and
// the Runner interface that the local worker pool (runner_pool.h) and the device pool behind a
// broker (remote_runner.h) implement. A crash, a hang or a wrong result becomes a MeasureResult
// status and never takes the tuner down.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/measure/runner_protocol.h"
#include "tirtune/measure/timer.h"

namespace tirtune {

/// What the runner says about a candidate.
enum class MeasureStatus {
  kOk,
  kBuildError,    // lowering or code generation failed (set by Measurer, never by the runner)
  kRuntimeError,  // a signal (named in `signal_name`), an exception or a load failure
  kTimeout,
  kWrongResult,  // max errors in the result
  kRunnerLost,   // the worker could not be started or died for a reason not the candidate's
  kDeviceLost,   // a device pool's job was taken by two agents and both died: not retried again
};
const char* MeasureStatusName(MeasureStatus status);

struct MeasureResult {
  MeasureStatus status = MeasureStatus::kOk;
  /// Empty when ok; otherwise what went wrong.
  std::string message;
  /// "SIGSEGV", ... when a signal ended the worker; empty otherwise.
  std::string signal_name;
  double max_abs_error = 0;
  double max_rel_error = 0;
  /// Seconds per call, one sample per repeat; empty unless ok.
  std::vector<double> seconds;
  double median = 0;
  /// Calls per repeat.
  int number = 0;
  /// The device that measured it, as records name devices; empty: this host.
  std::string device;
  /// Every parameter after one run, for MeasureCandidate::return_outputs.
  std::vector<NDArray> outputs;
  bool ok() const { return status == MeasureStatus::kOk; }
};

/// One compiled candidate to measure.
struct MeasureCandidate {
  /// A relocatable object made by EmitObject, defining `func_name`.
  std::string object;
  std::string func_name;
  /// Target::str() of the target it was compiled for.
  std::string target;
  /// One per kernel parameter (see ArgSpecsOf).
  std::vector<ArgSpec> args;
  /// Parameter i is filled by FillRandom(seed + i) over RandomRangeFor(dtype).
  uint64_t seed = 0;
  /// Empty (run without verifying) or one per parameter, undefined for one not to compare; e.g.
  /// InterpretWithRandomInputs(func, seed).
  std::vector<NDArray> expected;
  /// The most terms one output element sums (LongestReduction), widening float32 tolerances.
  double reduction_length = 1;
  /// Run once and return every parameter (MeasureResult::outputs) instead of verifying and
  /// timing: computing a reference in a runner. Local runners only.
  bool return_outputs = false;
  /// A library candidate: the composite's description, `object` empty (RunRequest::library).
  std::string library;
};

/// The argument specs of `func`'s parameters, its layout-free ones (a model's weights) marked
/// constant; their shapes must be constant.
std::vector<ArgSpec> ArgSpecsOf(const PrimFunc& func);

/// Cutting slow candidates short while tuning (RunnerPool::Measure): a candidate far slower than
/// the fastest known is out of the race, and timing it precisely would only cost time.
struct SlowCutoff {
  /// 0: off. Otherwise a candidate whose verification run is `factor` times slower than the
  /// fastest median known (and longer than one timed repeat, `TimerConfig::min_repeat_ms`) is
  /// not timed further (that run is its only sample), and one that has
  /// not answered `grace_s + 2 × factor ×` that median after it was sent is stopped as a timeout.
  double factor = 0;
  /// The fastest median known before the batch; 0 for none. The batch's own results lower it as
  /// they come in.
  double best_seconds = 0;
  /// Whatever the best: a verification run longer than this is the only sample (one call of a
  /// kernel that slow ranks it well enough, and repeats would cost seconds each). 0: none.
  /// Default 1 s.
  double long_run_seconds = 1;
  /// Time for loading and verifying on top of the cut timeout. Default 5 s.
  double grace_s = 5;
};

/// Called after each candidate of a batch is measured, from the thread that measured it (calls
/// can overlap with several workers): the candidate's index and its result.
using MeasureCallback = std::function<void(size_t index, const MeasureResult& result)>;

/// Where candidates are measured: a local pool of runner processes (RunnerPool) or a pool of
/// devices behind a broker (RemoteRunner). The tuner, `tirtune time` and the Measurer do not know
/// which: statuses, the slow-candidate cutoff and the per-candidate timeout mean the same on both.
class Runner {
 public:
  virtual ~Runner() = default;

  /// Measures every candidate; one result per candidate, in order. A candidate's failure is its
  /// result's status, never a throw; UserError when the runner as a whole cannot measure (no
  /// live device of the class, the broker unreachable for too long).
  virtual std::vector<MeasureResult> Measure(const std::vector<MeasureCandidate>& candidates,
                                             const SlowCutoff& cutoff = {},
                                             const MeasureCallback& on_result = {}) = 0;
  MeasureResult MeasureOne(const MeasureCandidate& candidate) {
    return Measure({candidate}).front();
  }

  /// Where candidates go, for logs: "local runner (1 worker)", "redis://127.0.0.1:6379 ...".
  virtual std::string Describe() const = 0;

  /// The next candidates are measured by processes that have measured nothing yet, where the
  /// runner's processes are its own (a local pool starts its workers again; a device pool's
  /// agents are not restarted: a no-op). Where a kernel's buffers land in physical memory, and
  /// so in the caches' sets, stays as it is for a process's life: a kernel sensitive to it can be
  /// fast in one process and 10% slower in the next (a GEMM 128 x 3072 x 768 reading B with a
  /// 12 KiB stride: 1.20 against 1.36 ms on Zen 5), so measurements that decide between close
  /// records are taken in several processes.
  virtual void StartAfresh() {}
};

}  // namespace tirtune
