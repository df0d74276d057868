// The whole measurement of a batch of candidates of one task: build them in parallel (Builder),
// then verify and time each on a Runner (the local RunnerPool, or a device pool) against the task's
// reference outputs, computed once per task. Every candidate ends with one MeasureResult; build
// failures are MeasureStatus::kBuildError.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/ir/function.h"
#include "tirtune/measure/builder.h"
#include "tirtune/measure/reference.h"
#include "tirtune/measure/runner.h"
#include "tirtune/measure/runner_pool.h"

namespace tirtune {

/// What every candidate of one function is checked against.
struct MeasureTask {
  /// The unscheduled function.
  PrimFunc original;
  Target target;
  /// Parameter i is filled by FillRandom(seed + i) (MakeRandomArgs).
  uint64_t seed = 1;
  std::vector<ArgSpec> args;
  /// One per parameter; undefined for a parameter the function does not write.
  std::vector<NDArray> expected;
  /// LongestReduction(original): widens the float32 tolerance of long sums.
  double reduction_length = 1;
  /// Where `expected` came from ("interpreter", "unscheduled function, compiled").
  std::string reference_source;
  /// The composite a library can run in the function's place (offload/library.h
  /// CompositeToJson), or empty. A scheduled function that Schedule::Offload marked is measured
  /// as that library's kernel.
  std::string library;
};

/// Computes the reference outputs of `original` (ComputeReference). With a `library` composite
/// (MeasureTask::library), the small constants whose values it states (CompositeToJson) hold
/// those values in the reference and in every candidate's run. UserError when the function
/// cannot be run, has non-constant parameter shapes, or the composite's description is malformed.
MeasureTask MakeMeasureTask(const PrimFunc& original, const Target& target, uint64_t seed = 1,
                            const ReferenceConfig& reference = {}, const std::string& library = "");

/// The candidate that measures the object of `built` (ok) against `task`'s reference.
MeasureCandidate CandidateFor(const MeasureTask& task, BuildResult built);

/// How the tuner times candidates unless told otherwise: 1 warm-up call, 3 repeats of at least
/// 10 ms each, no cache flush (cheaper than TimerConfig{}, which is meant for final numbers).
TimerConfig TuningTimerConfig();

/// The host as records name their device: "<CPU model name> (<N> cores)".
std::string HostDeviceDescription();
/// The device a local runner measures `target` on: the host's CPU, or for a cuda target the GPU
/// `cuda_device`: "<GPU name> (<N> SMs)" (the host's CPU when no GPU can be queried).
std::string DeviceDescription(const Target& target, int cuda_device = 0);

/// How a candidate was timed (TimerConfig): warm, with its weights evicted before each call, or
/// on flushed caches.
enum class RecordTiming : uint8_t { kWarm, kColdWeights, kFlushedCaches };
RecordTiming TimingOf(const TimerConfig& timer);
/// `device` as a record measured with `timing` names it: followed by ", warm", ", cold weights"
/// or ", flushed caches", so that the database says how each record was timed and a later run
/// can time its candidates the same way.
std::string TimedDevice(const std::string& device, RecordTiming timing);
/// How the record whose device TimedDevice wrote was timed; nullopt for a device without one of
/// the suffixes (records measured before timings were written down: either way).
std::optional<RecordTiming> RecordTimingOf(std::string_view device);

/// Where the time of one Measure call went, in seconds.
struct MeasureTimes {
  double build = 0;
  double run = 0;
};

/// A batch built once (Measurer::Build), to measure as often as needed (Measurer::MeasureBuilt):
/// the re-timing measures the same finalists in many runner processes.
struct BuiltBatch {
  /// One per function: its build error (MeasureStatus::kBuildError), or ok when it built.
  std::vector<MeasureResult> build_results;
  /// One per function: what the runner measures; nullopt for one that did not build.
  std::vector<std::optional<MeasureCandidate>> candidates;
};

class Measurer {
 public:
  /// Measures on a local RunnerPool made from `runner`.
  Measurer(BuilderConfig builder, RunnerConfig runner);
  /// Measures on `runner`, which must outlive the Measurer.
  Measurer(BuilderConfig builder, Runner& runner);

  /// Builds and measures each scheduled function (a schedule of task.original); one result per
  /// function, in order. Never throws for a candidate's failure. `cutoff` cuts slow candidates
  /// short (SlowCutoff); `on_result` is told of each candidate as its measurement ends (build
  /// failures included), with the index into `scheduled`.
  std::vector<MeasureResult> Measure(const MeasureTask& task,
                                     const std::vector<PrimFunc>& scheduled,
                                     const SlowCutoff& cutoff = {},
                                     const MeasureCallback& on_result = {});
  /// Measure in two steps: Build the functions once (a library candidate is not compiled), then
  /// MeasureBuilt them in the order `order` gives (indices into the batch; one result each, in
  /// that order; `on_result` is told the position in `order`), as often as needed.
  BuiltBatch Build(const MeasureTask& task, const std::vector<PrimFunc>& scheduled);
  std::vector<MeasureResult> MeasureBuilt(const BuiltBatch& batch, const std::vector<size_t>& order,
                                          const SlowCutoff& cutoff = {},
                                          const MeasureCallback& on_result = {});

  /// Time spent in the last Measure, Build or MeasureBuilt call, and in all of them.
  const MeasureTimes& last_times() const { return last_; }
  const MeasureTimes& total_times() const { return total_; }
  Runner& runner() { return *runner_; }
  const Builder& builder() const { return builder_; }

 private:
  Builder builder_;
  std::unique_ptr<RunnerPool> own_runner_;  // the local pool, unless a runner was given
  Runner* runner_;
  MeasureTimes last_;
  MeasureTimes total_;
};

}  // namespace tirtune
