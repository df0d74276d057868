// The tuning loop: for each task, design spaces and a search strategy; then, batch after batch,
// the task scheduler picks a task, its strategy proposes candidates, the Measurer builds, verifies
// and times them, every result (failures included) is committed to the database in one
// transaction, and the cost model learns from it. Interrupting loses nothing committed; a resumed
// run counts the records already stored and warm-starts from the best of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/database/database.h"
#include "tirtune/ir/function.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/search/cost_model.h"
#include "tirtune/search/strategy.h"

namespace tirtune {

struct TuneTask {
  /// How the task is shown, e.g. "gemm:512,512,512".
  std::string name;
  PrimFunc func;
  /// How many times the function is used (weights the task scheduler). Default 1.
  double weight = 1;
  /// FLOPs of one run, for GFLOP/s; 0: EstimateFlops(func).
  double flops = 0;
  /// The composite a library can run in the function's place (offload/library.h
  /// CompositeToJson), or empty: its kernel is measured once, in the task's first batch, and
  /// stored as a library record (a trace of one Offload) that competes with the tuned ones.
  std::string library = "";
};

/// The state after a batch, or after each candidate while a batch is measured, for progress
/// displays.
struct TuneProgress {
  std::string task;
  /// Trials measured in this run, over all tasks (the current batch's measured ones included),
  /// and the run's budget.
  int trials_done = 0;
  int trials_total = 0;
  /// The task's best median so far (this run or the database), if any.
  std::optional<double> best_seconds;
  double best_gflops = 0;
  /// Ok and failed candidates in the current batch so far, and its size; batch_ok + batch_failed
  /// == batch_size once the batch is done.
  int batch_ok = 0;
  int batch_failed = 0;
  int batch_size = 0;
  double elapsed_seconds = 0;
  /// Estimated seconds to the end of the budget.
  double eta_seconds = 0;
};

struct TuneOptions {
  Target target = Target::Host();
  /// Trials in this run, over all tasks; with `resume`, the records already stored for the tasks
  /// (on this target) count against it.
  int max_trials = 1000;
  /// Candidates per batch; 0 (the default): DefaultTrialsPerRound of the budget and the tasks.
  int trials_per_round = 0;
  /// "evolutionary" (default) or "replay".
  std::string strategy = "evolutionary";
  /// "xgb" (default) or "random".
  std::string cost_model = "xgb";
  /// "gradient" (default) or "round-robin".
  std::string task_scheduler = "gradient";
  /// Count the records already stored for each task against its share of the budget.
  bool resume = false;
  uint64_t seed = 1;
  /// A candidate whose verification run is this many times slower than the task's best so far is
  /// not timed further (its one run is its sample), and one still running at twice that is
  /// stopped as a timeout: it is far from competing (SlowCutoff; a run over 1 s is also its own
  /// only sample). 0 disables both. Default 20.
  double slow_cutoff_factor = 20;
  /// Which records already in the database (on this target) the cost model learns from before
  /// the first batch: "all" (the default): the tasks' own, and up to `pretrain_per_workload`
  /// records of every other workload (evenly spaced over its records) as the model's prior
  /// (CostModel::Pretrain), so that what was measured on other workloads ranks a new one's first
  /// candidates; "tasks": the tasks' own only; "none".
  std::string pretrain = "all";
  /// With "all": at most this many records of each other workload, and of all of them together
  /// `pretrain_max_others` (the per-workload share shrinks to fit). Features and training cost
  /// about 8 ms per record on 2 cores, once per run.
  size_t pretrain_per_workload = 300;
  size_t pretrain_max_others = 12000;
  /// A task with no records of its own on the target starts its first batch with up to this
  /// many schedules transferred from the best records of other workloads of the same loop
  /// structure (TransferRecord), e.g. GEMM 4096^3 from GEMM 1024^3. 0: none. Default 8.
  size_t transfer = 8;
  /// A task a library can run (TuneTask::library), once its share of the budget is spent: the
  /// library's record and the best tuned ones faster than it or within 25% above it (up to two,
  /// six for a kernel under 0.5 ms; six more a round while one measured once leads,
  /// RetimeFinalists) are measured again this many
  /// times each (three times as many for a kernel under 0.5 ms), in turns, each turn in new runner
  /// processes (Runner::StartAfresh), and the samples join their records (Database::AddRunSecs),
  /// so that the choice between library and loops rests on several measurements, not on one lucky
  /// run. 0: not. Default 3.
  int library_retimes = 3;
  /// Path of a cost model to load first (and save at the end); empty for none.
  std::string model_path;
  BuilderConfig builder;
  /// The local runner pool when Tune is not given a Runner. Default: one worker with
  /// TuningTimerConfig().
  RunnerConfig runner = [] {
    RunnerConfig r;
    r.timer = TuningTimerConfig();
    return r;
  }();
  EvolutionaryConfig evolutionary;
  XGBoostConfig xgboost;
  /// Called after every measured candidate and after every batch (calls never overlap).
  std::function<void(const TuneProgress&)> on_progress;
  /// Receives log lines (one per event, no newline).
  std::function<void(const std::string&)> log;
  /// When set to true (e.g. by a signal handler) the run stops after the current batch.
  const std::atomic<bool>* stop = nullptr;
};

/// Throws UserError naming the first option out of range (trials, batch size, population,
/// probabilities, timeout, cutoff, strategy, cost model, pre-training, task scheduler). Tune
/// checks too; a command calls it before it opens or creates anything.
void CheckTuneOptions(const TuneOptions& options);

/// The batch size when none is given: 64 (MetaSchedule's) for one task. Several tasks share the
/// budget, and 64 each would spend most of it on first batches (29 ResNet-50 tasks: 1,856 of
/// 2,000 trials) before the task scheduler can favour any; so about half a task's even share,
/// a multiple of 8 from 8 to 64 (ResNet-50 with 2,000 trials: 32).
int DefaultTrialsPerRound(int budget, size_t num_tasks);

struct TaskResult {
  std::string name;
  WorkloadId workload = -1;
  double flops = 0;
  /// Trials measured in this run.
  int trials = 0;
  /// Records already stored when the run started.
  size_t trials_before = 0;
  /// Counts by RecordStatusName over this run's trials.
  std::map<std::string, int> status_counts;
  /// The best median over this run and the database, and its record's trace; for a task a library
  /// can run, the record compile runs (KeptRecord: the library's where the best tuned one is not
  /// 3% faster at both median and lower quartile).
  std::optional<double> best_seconds;
  nlohmann::json best_trace;
  /// Why the task stopped: "budget", "exhausted", "interrupted", "no valid candidate: WHY" (every
  /// sample of its space is rejected; WHY names the first rejection), "error: ...".
  std::string stopped;
};

struct TuneResult {
  std::vector<TaskResult> tasks;
  double seconds = 0;
  /// Where the time went: generating candidates (search), compiling, running.
  double search_seconds = 0;
  double build_seconds = 0;
  double run_seconds = 0;
  bool interrupted = false;
};

/// Tunes `tasks` into `db`, measuring on a local RunnerPool made from `options.runner`. UserError
/// for bad options or a task that cannot be tuned at all (non-constant shapes, a function the
/// reference cannot run); a candidate's failure is a record.
TuneResult Tune(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& options);
/// The same, measuring on `runner` (a local pool or a device pool); `options.runner` is unused
/// but for its timeout check.
TuneResult Tune(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& options,
                Runner& runner);

/// The schedule of `func` recorded by `trace_json` (postprocessing included), or nullopt when the
/// trace no longer replays.
std::optional<Schedule> ReplayRecord(const PrimFunc& func, const nlohmann::json& trace_json);

/// A library record (its trace offloads, Schedule::Offload): its time is the library's, not the
/// loops'.
bool Offloads(const TuningRecord& r);

/// How much faster than a library's record a tuned one must measure to run in its place: 3%,
/// at both the median and the lower quartile of their samples (LibraryKept). For every library,
/// oneDNN's and the GPU's alike.
/// Within that the two are the same speed as measured (medians move by more between runner
/// processes, and a tuned record's first samples are the luckiest of a search), and the library's
/// kernel is the steadier one (GEMM 128x3072x768 on a Zen 4 host: oneDNN 3.13-3.45 ms over five
/// processes, the tuned kernel 3.40-5.05).
inline constexpr double kLibraryMargin = 0.03;
/// How far ahead at the median a tuned record may be and still leave the library's running where
/// their lower quartiles are within kLibraryMargin: 10%, about the spread of a median over nine
/// runner processes on a noisy host (LibraryKept). A lead beyond it is the kernel's: a library
/// slow in most processes (a ResNet-50 convolution's oneDNN record: median 1.33 ms, lower
/// quartile 1.06, against a tuned 1.06 and 1.05) is slow where the model runs too.
inline constexpr double kLibraryQuartileReach = 0.10;
/// The lower quartile of `samples` (linear between the two nearest ranks); nullopt when empty,
/// NaN when one is NaN.
std::optional<double> LowerQuartileOf(std::vector<double> samples);
/// Whether `library`, a library record, is kept over `tuned`: unless the tuned record is more
/// than kLibraryMargin faster at its median and at its lower quartile, or more than
/// kLibraryQuartileReach faster at its median. A runner process that runs slow puts all its
/// samples of a kernel high (oneDNN's 0.23 ms convolution measured 0.34 ms in one process of
/// nine, 0.43 in another), so a median over a few processes says which side those processes fell
/// on; the lower quartile, over the processes that ran well, does not. On a noisy
/// Zen 4 host the medians of nine processes put a tuned convolution 4.9% ahead of oneDNN's
/// (0.2305 vs 0.2419 ms) and a tuned softmax 4.9% ahead (0.0258 vs 0.0271) where measured quietly
/// oneDNN's was as fast or faster; their lower quartiles were 1.3% behind and 0.8% ahead.
bool LibraryKept(const TuningRecord& library, const TuningRecord& tuned);
/// Why `library` is kept over `tuned` (LibraryKept), for a report: "the best tuned kernel is not
/// 3% faster at both median and lower quartile (tuned vs library: median 0.02584 vs 0.0271 ms,
/// lower quartile 0.02516 vs 0.02537 ms)".
std::string LibraryKeptWhy(const TuningRecord& library, const TuningRecord& tuned);
/// The record of `workload` on `target` that runs: the best (Database::TopK), or the best library
/// record where LibraryKept over it; nullopt with none. `timed_alike`, when given, admits only the
/// records it accepts (RetimeFinalists: those timed as its run times; compile takes every record,
/// and `tirtune tune` warns when stored records were timed otherwise).
std::optional<TuningRecord> KeptRecord(
    Database& db, WorkloadId workload, const std::string& target,
    const std::function<bool(const TuningRecord&)>& timed_alike = nullptr);

/// A perfect tiling recorded for another extent, fitted to `extent`: from the innermost part
/// out, each part keeps its largest divisor that divides what is left of the extent; the
/// outermost takes the rest. [16, 1, 4, 8, 2] fits 4096 as [64, 1, 4, 8, 2], 1000 as
/// [125, 1, 1, 4, 2].
std::vector<int64_t> FitPerfectTile(std::vector<int64_t> parts, int64_t extent);

/// The schedule of `func` made by a record of another workload: `trace_json` replayed up to its
/// postprocessing with every perfect tiling fitted to func's loop (FitPerfectTile), then
/// postprocessed by `space` (which checks it against func's shapes and the target's limits);
/// nullopt when it does not replay, is rejected, or is empty (an unscheduled function's record). Never trusted: it is measured and verified
/// like any candidate.
std::optional<Schedule> TransferRecord(const SpaceGenerator& space, const PrimFunc& func,
                                       const nlohmann::json& trace_json, uint64_t seed);

}  // namespace tirtune
