// The tuning loop (see tune.h): set up every task, train on what is stored, then batches (propose,
// measure, commit, learn) until the budget is spent, the spaces are exhausted or the caller asks
// to stop.
#include "tirtune/search/tune.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "retime_finalists.h"
#include "stored_records.h"
#include "tirtune/ir/flop_count.h"
#include "tirtune/offload/library.h"
#include "tirtune/schedule/json_text.h"
#include "tirtune/search/default_schedule.h"
#include "tirtune/search/task_scheduler.h"
#include "tirtune/support/error.h"
#include "tirtune/support/version.h"

namespace tirtune {
namespace {

using tune_detail::AddOtherWorkloads;
using tune_detail::ErrorText;
using tune_detail::OffloadAlgorithm;
using tune_detail::ReplayedRecords;
using tune_detail::RetimeFinalists;
using tune_detail::ToRecordStatus;
using tune_detail::TrainsTheModel;
using tune_detail::TransferredSchedules;
using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TuneProgress Progress(const TaskResult& task, std::optional<double> best, int done, int budget,
                      double elapsed) {
  TuneProgress p;
  p.task = task.name;
  p.trials_done = done;
  p.trials_total = budget;
  p.best_seconds = best;
  p.best_gflops = best ? task.flops / *best / 1e9 : 0;
  p.elapsed_seconds = elapsed;
  p.eta_seconds = done > 0 ? elapsed / done * (budget - done) : 0;
  return p;
}

bool Stopping(const TuneOptions& o) { return o.stop != nullptr && o.stop->load(); }

XGBoostConfig XGBoostWithStop(const TuneOptions& o) {
  XGBoostConfig c = o.xgboost;
  if (c.stop == nullptr) c.stop = o.stop;
  return c;
}

std::string BestText(const TuneProgress& p) {
  if (!p.best_seconds) return "none";
  return fmt::format("{:.4f} ms ({:.1f} GFLOP/s)", *p.best_seconds * 1e3, p.best_gflops);
}

struct TaskState {
  TaskResult result;
  PrimFunc func;
  MeasureTask measure;
  /// The composite a library can run in the function's place (TuneTask::library), and the
  /// algorithms whose library candidates are still to be measured ("" for the library's default,
  /// then LibraryAlgorithms').
  std::string library;
  std::string composite;
  std::vector<std::string> library_pending;
  /// Measured in the task's first batch before the strategy's candidates: what the function
  /// runs as untuned (BaselineSchedules) and the schedules transferred from other workloads
  /// (TuneOptions::transfer). Only for a task with no records of its own.
  std::vector<Schedule> first_batch;
  std::unique_ptr<SearchStrategy> strategy;
  std::string model_group;  // the cost model's task key: the workload's structural hash
  std::vector<Trace> design_spaces;
  /// The smallest median of the task's stored ok records timed as this run times: where the
  /// gradient scheduler starts it (no first-pass batch needed).
  std::optional<double> stored_best;
};

/// What every step of one tuning run shares.
struct TuneRun {
  const TuneOptions& options;
  Database& db;
  std::string target;  // canonical
  std::string host_device;
  SpaceGenerator space;
  std::unique_ptr<CostModel> model;
  FeatureFn features;
  Measurer measurer;
  Clock::time_point start = Clock::now();
  TuneResult out;
  /// Trials for this run (the budget less the stored ones when resuming) and measured so far.
  int budget = 0;
  int done = 0;

  TuneRun(const TuneOptions& o, Database& database, Runner& runner)
      : options(o),
        db(database),
        target(CanonicalTarget(o.target.str())),
        host_device(DeviceDescription(
            o.target, o.runner.cuda_devices.empty() ? 0 : o.runner.cuda_devices.front())),
        space(SpaceGenerator::For(o.target)),
        model(o.cost_model == "xgb" ? MakeXGBoostModel(XGBoostWithStop(o))
                                    : MakeRandomModel(o.seed)),
        features(LoweredFeatures(o.builder.num_jobs)),
        measurer(o.builder, runner) {}

  void Log(const std::string& line) const {
    if (options.log) options.log(line);
  }
};

/// One batch of one task: the candidates a strategy proposed and what measuring them said.
struct Batch {
  std::vector<Schedule> candidates;
  std::vector<MeasureResult> results;
};

// Step 1. Every task: its workload and what is already stored; then, unless a resumed run finds
// the budget spent, its warm start, reference and strategy (replaying the records and building
// the design spaces is most of a finished run's time). Returns the tasks' stored records that the
// cost model learns from.
ReplayedRecords SetUpTasks(TuneRun& run, const std::vector<TuneTask>& tasks,
                           std::vector<TaskState>& states, std::unordered_set<WorkloadId>& tuned) {
  const TuneOptions& options = run.options;
  std::vector<std::vector<TuningRecord>> stored(tasks.size());
  size_t stored_total = 0;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const TuneTask& task = tasks[t];
    TaskState s;
    s.func = task.func;
    s.result.name = task.name;
    if (!task.library.empty()) {
      s.library = task.library;
      s.composite = ParseJsonText(task.library, "a task's library composite")
                        .at("composite")
                        .get<std::string>();
      s.library_pending = {""};
      for (std::string& a : offload::LibraryAlgorithms(task.library)) {
        s.library_pending.push_back(std::move(a));
      }
    }
    s.result.flops = task.flops > 0 ? task.flops : EstimateFlops(task.func);
    WorkloadEntry entry = run.db.CommitWorkload(task.func);
    s.result.workload = entry.id;
    s.model_group = entry.shash;
    tuned.insert(entry.id);
    for (TuningRecord& r : run.db.RecordsOf(entry.id)) {
      if (r.target == run.target) stored[t].push_back(std::move(r));
    }
    s.result.trials_before = stored[t].size();
    stored_total += stored[t].size();
    states.push_back(std::move(s));
  }
  run.budget = options.max_trials;
  if (options.resume) run.budget -= static_cast<int>(std::min<size_t>(stored_total, run.budget));

  // Workloads whose best records a task without records of its own starts from.
  std::vector<WorkloadEntry> others;
  bool any_new = std::any_of(states.begin(), states.end(),
                             [](const TaskState& s) { return s.result.trials_before == 0; });
  if (options.transfer > 0 && run.budget > 0 && any_new) {
    for (WorkloadEntry& w : run.db.Workloads()) {
      if (!tuned.count(w.id)) others.push_back(std::move(w));
    }
  }

  ReplayedRecords own_stored;
  for (size_t t = 0; t < tasks.size(); ++t) {
    // Ctrl-C while tasks are prepared (a model's reference computations and design spaces can
    // take minutes): the rest are not prepared, and the batch loop, which checks the flag
    // first, never runs.
    if (Stopping(options)) {
      run.out.interrupted = true;
      break;
    }
    TaskState& s = states[t];
    size_t warm_k = static_cast<size_t>(options.evolutionary.population_size *
                                        options.evolutionary.init_measured_ratio);
    std::vector<std::pair<Schedule, double>> warm;
    for (const TuningRecord& r :
         run.db.TopK(s.result.workload, run.target, std::max<size_t>(warm_k, 1))) {
      if (!s.result.best_seconds || *r.median_secs < *s.result.best_seconds) {
        s.result.best_seconds = r.median_secs;
        s.result.best_trace = r.trace;
      }
      if (run.budget == 0 || Offloads(r)) continue;
      if (std::optional<Schedule> sch = ReplayRecord(s.func, r.trace)) {
        warm.emplace_back(std::move(*sch), *r.median_secs);
      }
    }
    std::string best = s.result.best_seconds
                           ? fmt::format("{:.4f} ms", *s.result.best_seconds * 1e3)
                           : std::string("none");
    if (run.budget == 0) {
      run.Log(fmt::format("task {} '{}': workload {}, {} record(s) stored, best {}; budget spent",
                          t, s.result.name, s.result.workload, s.result.trials_before, best));
      continue;
    }

    std::unordered_set<std::string> measured;
    for (const TuningRecord& r : stored[t]) {
      // A lost worker is not the candidate's fault: it may be proposed and measured again.
      if (r.status == RecordStatus::kRunnerLost) continue;
      std::optional<Schedule> sch = ReplayRecord(s.func, r.trace);
      if (!sch) continue;
      measured.insert(CandidateKey(*sch));
      // measured in an earlier run (one that failed is measured again: it may have been measured
      // before the composite stated its constants' values). One timed otherwise is not measured
      // again: a record is stored once per trace, so the new measurement would be dropped; it
      // keeps its timing (re-timing and the scheduler leave it out; tune_command warns).
      if (Offloads(r) && r.status == RecordStatus::kOk) {
        std::erase(s.library_pending, OffloadAlgorithm(r));
      }
      if (r.status == RecordStatus::kOk &&
          RecordTimingOf(r.device) == TimingOf(options.runner.timer) &&
          (!s.stored_best || *r.median_secs < *s.stored_best)) {
        s.stored_best = r.median_secs;
      }
      if (TrainsTheModel(r)) own_stored.Add(std::move(*sch), r, s.model_group);
    }
    stored[t].clear();

    ReferenceConfig reference;
    reference.stop = options.stop;
    try {
      s.measure = MakeMeasureTask(s.func, options.target, options.seed, reference, s.library);
    } catch (const Interrupted&) {
      run.out.interrupted = true;
      break;
    }
    std::vector<Schedule> spaces = run.space.GenerateDesignSpaces(s.func, options.seed + t);
    for (const Schedule& d : spaces) s.design_spaces.push_back(d.trace());
    if (options.strategy == "evolutionary") {
      s.strategy = MakeEvolutionarySearch(&run.space, run.model.get(), run.features,
                                          options.evolutionary, options.seed + 7919 * (t + 1));
    } else {
      s.strategy = MakeReplayTrace(&run.space, options.seed + 7919 * (t + 1));
    }
    if (s.result.trials_before == 0) {
      std::unordered_set<std::string> keys;
      for (Schedule& sch : BaselineSchedules(s.func, options.target)) {
        if (keys.insert(CandidateKey(sch)).second) s.first_batch.push_back(std::move(sch));
      }
      size_t sources = 0;
      std::vector<Schedule> transferred =
          others.empty() ? std::vector<Schedule>()
                         : TransferredSchedules(others, run.db, s.func, run.target, run.space,
                                                options.transfer, options.seed + t, &sources);
      if (!transferred.empty()) {
        run.Log(fmt::format("task {} '{}': {} schedule(s) transferred from {} other workload(s) "
                            "for its first batch",
                            t, s.result.name, transferred.size(), sources));
      }
      for (Schedule& sch : transferred) {
        if (keys.insert(CandidateKey(sch)).second) s.first_batch.push_back(std::move(sch));
      }
      measured.insert(keys.begin(), keys.end());  // the strategy never proposes them too
    }
    s.strategy->PreTuning(s.func, spaces, warm, measured);
    run.Log(fmt::format(
        "task {} '{}': workload {}, {} design space(s), {} record(s) stored, best {}", t,
        s.result.name, s.result.workload, spaces.size(), s.result.trials_before, best));
  }
  return own_stored;
}

// Step 2. The cost model learns from the stored records; not when there is nothing left to do,
// nor when nothing would use what it learns (a random model; random search without a model file
// to save). Other workloads' records make the prior; the tasks' own are the model's own samples.
void TrainOnStoredRecords(TuneRun& run, const std::unordered_set<WorkloadId>& tuned,
                          const ReplayedRecords& own_stored) {
  const TuneOptions& options = run.options;
  bool model_used = options.cost_model == "xgb" &&
                    (options.strategy == "evolutionary" || !options.model_path.empty());
  if (run.budget == 0 || !model_used || options.pretrain == "none" || Stopping(options)) return;
  auto learn = [&](const ReplayedRecords& set, bool prior) {
    auto start = Clock::now();
    std::vector<FeatureMatrix> f = run.features(set.schedules);
    std::vector<CostSample> samples;
    for (size_t i = 0; i < f.size(); ++i) {
      samples.push_back(CostSample{set.groups[i], std::move(f[i]), set.seconds[i]});
    }
    prior ? run.model->Pretrain(samples) : run.model->Update(samples);
    return SecondsSince(start);
  };
  if (options.pretrain == "all") {
    ReplayedRecords others;
    size_t workloads = AddOtherWorkloads(run.db, tuned, run.target, options, others);
    if (!others.schedules.empty()) {
      double seconds = learn(others, true);
      run.Log(
          fmt::format("cost model pre-trained on {} record(s) of {} other workload(s) ({:.1f} s)",
                      others.schedules.size(), workloads, seconds));
    }
  }
  if (!own_stored.schedules.empty()) {
    double seconds = learn(own_stored, false);
    run.Log(fmt::format("cost model trained on the tasks' {} stored record(s) ({:.1f} s)",
                        own_stored.schedules.size(), seconds));
  }
}

// Step 3. Up to `n` new candidates of task `t` from its strategy. Empty when the task stops (its
// space used up, no valid sample, or a failing search component), with `stopped` saying why.
std::vector<Schedule> Propose(TuneRun& run, TaskState& s, int n) {
  auto search_start = Clock::now();
  std::vector<Schedule> candidates;
  // The library's kernel (each of its algorithms) is measured once, in the task's first batch,
  // like any candidate.
  while (!s.library_pending.empty() && n > 0) {
    Schedule library(s.func);
    library.Offload(s.composite, s.library_pending.front());
    candidates.push_back(std::move(library));
    s.library_pending.erase(s.library_pending.begin());
    --n;
  }
  // So are the task's default schedule and the schedules transferred from other workloads.
  size_t take = std::min(static_cast<size_t>(std::max(n, 0)), s.first_batch.size());
  std::move(s.first_batch.begin(), s.first_batch.begin() + take, std::back_inserter(candidates));
  s.first_batch.erase(s.first_batch.begin(), s.first_batch.begin() + take);
  n -= static_cast<int>(take);
  try {
    std::vector<Schedule> searched = s.strategy->GenerateMeasureCandidates(n);
    candidates.insert(candidates.end(), std::make_move_iterator(searched.begin()),
                      std::make_move_iterator(searched.end()));
  } catch (const std::exception& e) {
    // A bug in a rule, postprocessor or mutator ends this task, not the run.
    s.result.stopped = std::string("error: ") + e.what();
    run.Log(fmt::format("task '{}': the search failed and the task stops: {}", s.result.name,
                        e.what()));
    return {};
  }
  run.out.search_seconds += SecondsSince(search_start);
  if (!candidates.empty()) return candidates;
  s.result.stopped = "exhausted";
  std::string why = s.result.trials + s.result.trials_before == 0
                        ? run.space.WhyNoSample(s.func, s.design_spaces, run.options.seed)
                        : std::string();
  if (why.empty()) {
    run.Log(fmt::format("task '{}': no new candidate; its space is exhausted", s.result.name));
  } else {
    s.result.stopped = "no valid candidate: " + why;
    run.Log(fmt::format("task '{}': no valid candidate, every sample is rejected; e.g. {}",
                        s.result.name, why));
  }
  return {};
}

// Step 4. Builds and measures the candidates, with progress while they are measured: a live
// display follows every candidate, the log hears of a long batch every 30 s.
std::vector<MeasureResult> MeasureCandidates(TuneRun& run, TaskState& s,
                                             const std::vector<Schedule>& candidates) {
  std::vector<PrimFunc> funcs;
  for (const Schedule& c : candidates) funcs.push_back(c.func());
  SlowCutoff cutoff;
  cutoff.factor = run.options.slow_cutoff_factor;
  cutoff.best_seconds = s.result.best_seconds.value_or(0);
  std::mutex progress_mutex;
  int batch_ok = 0, batch_failed = 0;
  std::optional<double> batch_best = s.result.best_seconds;
  auto last_log = Clock::now();
  auto on_result = [&](size_t, const MeasureResult& r) {
    std::lock_guard<std::mutex> lock(progress_mutex);
    (r.ok() ? batch_ok : batch_failed) += 1;
    if (r.ok() && (!batch_best || r.median < *batch_best)) batch_best = r.median;
    TuneProgress p = Progress(s.result, batch_best, run.done + batch_ok + batch_failed, run.budget,
                              SecondsSince(run.start));
    p.batch_ok = batch_ok;
    p.batch_failed = batch_failed;
    p.batch_size = static_cast<int>(funcs.size());
    if (SecondsSince(last_log) >= 30 && p.batch_ok + p.batch_failed < p.batch_size) {
      last_log = Clock::now();
      run.Log(fmt::format("task '{}': {} of {} candidate(s) of the batch measured; best {}",
                          s.result.name, p.batch_ok + p.batch_failed, p.batch_size, BestText(p)));
    }
    if (run.options.on_progress) run.options.on_progress(p);
  };
  std::vector<MeasureResult> results = run.measurer.Measure(s.measure, funcs, cutoff, on_result);
  bool all_lost = std::all_of(results.begin(), results.end(), [](const MeasureResult& r) {
    return r.status == MeasureStatus::kRunnerLost;
  });
  if (all_lost) {
    throw UserError(fmt::format("every candidate of the batch lost its runner, e.g.: {}",
                                results.front().message));
  }
  run.out.build_seconds += run.measurer.last_times().build;
  run.out.run_seconds += run.measurer.last_times().run;
  return results;
}

// Step 5. Every result is stored, failures included, in one transaction; the task's best follows.
// Returns how many were ok.
int CommitBatch(TuneRun& run, TaskState& s, const Batch& batch) {
  std::vector<TuningRecord> records;
  int ok = 0;
  for (size_t i = 0; i < batch.results.size(); ++i) {
    const MeasureResult& r = batch.results[i];
    TuningRecord rec;
    rec.workload = s.result.workload;
    rec.target = run.target;
    rec.trace = batch.candidates[i].trace().ToJson();
    rec.status = ToRecordStatus(r.status);
    if (r.ok()) rec.run_secs = r.seconds;
    if (!r.ok()) rec.error = ErrorText(r);
    rec.device = TimedDevice(r.device.empty() ? run.host_device : r.device,
                             TimingOf(run.options.runner.timer));
    rec.program_version = kProgramVersion;
    records.push_back(std::move(rec));
    ++s.result.status_counts[std::string(RecordStatusName(ToRecordStatus(r.status)))];
    if (r.ok()) {
      ++ok;
      if (!s.result.best_seconds || r.median < *s.result.best_seconds) {
        s.result.best_seconds = r.median;
        s.result.best_trace = records.back().trace;
      }
    }
  }
  run.db.CommitRecords(records);
  s.result.trials += static_cast<int>(batch.candidates.size());
  run.done += static_cast<int>(batch.candidates.size());
  return ok;
}

// Step 6. The cost model and the strategy learn from the batch: a build error or a lost
// worker or device says nothing about speed, so the model does not train on it.
void Learn(TuneRun& run, TaskState& s, const Batch& batch) {
  auto learn_start = Clock::now();
  std::vector<double> seconds;
  std::vector<Schedule> searched;  // the strategy's own candidates: not the library's
  std::vector<Schedule> learnable;
  std::vector<double> learnable_secs;
  for (size_t i = 0; i < batch.results.size(); ++i) {
    const MeasureResult& r = batch.results[i];
    if (!OffloadedComposite(batch.candidates[i].func()).empty()) continue;
    searched.push_back(batch.candidates[i]);
    seconds.push_back(r.ok() ? r.median : kInf);
    if (TrainsTheModel(ToRecordStatus(r.status))) {
      learnable.push_back(batch.candidates[i]);
      learnable_secs.push_back(seconds.back());
    }
  }
  std::vector<FeatureMatrix> f = run.features(learnable);
  std::vector<CostSample> samples;
  for (size_t i = 0; i < learnable.size(); ++i) {
    samples.push_back(CostSample{s.model_group, std::move(f[i]), learnable_secs[i]});
  }
  run.model->Update(samples);
  s.strategy->NotifyRunnerResults(searched, seconds);
  run.out.search_seconds += SecondsSince(learn_start);
}

}  // namespace

TuneResult Tune(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& options) {
  CheckTuneOptions(options);
  RunnerPool local(options.runner);
  return Tune(tasks, db, options, local);
}

TuneResult Tune(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& options,
                Runner& runner) {
  CheckTuneOptions(options);
  if (tasks.empty()) throw UserError("nothing to tune: no task given");
  TuneRun run(options, db, runner);
  if (!options.model_path.empty() && std::ifstream(options.model_path).good()) {
    run.model->Load(options.model_path);
    run.Log(fmt::format("loaded the cost model from {} ({} samples)", options.model_path,
                        run.model->num_samples()));
  }

  std::vector<TaskState> states;
  std::unordered_set<WorkloadId> tuned;
  ReplayedRecords own_stored = SetUpTasks(run, tasks, states, tuned);
  TrainOnStoredRecords(run, tuned, own_stored);

  // Batches until the budget is spent.
  std::vector<double> weights;
  for (const TuneTask& t : tasks) weights.push_back(t.weight);
  std::unique_ptr<TaskScheduler> scheduler = options.task_scheduler == "gradient"
                                                 ? MakeGradientBased(weights, 0.2, 3, options.seed)
                                                 : MakeRoundRobin(tasks.size());
  // A task with ok records timed as this run times starts from its stored best: the first pass
  // is for the others (a short top-up of a model would otherwise go to its first tasks only, 32
  // trials each). One with library candidates still to measure keeps its first-pass batch.
  size_t started = 0;
  for (size_t t = 0; t < states.size(); ++t) {
    if (!states[t].stored_best || !states[t].library_pending.empty()) continue;
    scheduler->Notify(static_cast<int>(t), *states[t].stored_best);
    ++started;
  }
  if (started > 0 && options.task_scheduler == "gradient" && run.budget > 0 && tasks.size() > 1) {
    run.Log(started == tasks.size()
                ? std::string("every task starts from its stored best: the scheduler gives the "
                              "trials by the gradient from the first batch")
                : fmt::format("{} of {} tasks start from their stored best; the scheduler's first "
                              "pass is for the other {}",
                              started, tasks.size(), tasks.size() - started));
  }
  const int per_round = options.trials_per_round > 0
                            ? options.trials_per_round
                            : DefaultTrialsPerRound(run.budget, tasks.size());
  if (options.trials_per_round == 0 && tasks.size() > 1 && run.budget > 0) {
    run.Log(fmt::format("batches of {} candidates ({} tasks share {} trials)", per_round,
                        tasks.size(), run.budget));
  }
  // What the cost model learned is kept even when the run ends with an error.
  struct SaveModelOnExit {
    const CostModel& model;
    const std::string& path;
    ~SaveModelOnExit() {
      if (path.empty() || std::uncaught_exceptions() == 0) return;
      try {
        model.Save(path);
      } catch (...) {
      }
    }
  } save_on_error{*run.model, options.model_path};
  while (run.done < run.budget) {
    if (Stopping(options)) {
      run.out.interrupted = true;
      break;
    }
    int t = scheduler->NextTask();
    if (t < 0) break;
    TaskState& s = states[t];
    Batch batch;
    batch.candidates = Propose(run, s, std::min(per_round, run.budget - run.done));
    if (batch.candidates.empty()) {
      scheduler->Terminate(t);
      continue;
    }
    batch.results = MeasureCandidates(run, s, batch.candidates);
    int ok = CommitBatch(run, s, batch);
    Learn(run, s, batch);
    scheduler->Notify(t, s.result.best_seconds.value_or(kInf));

    TuneProgress p =
        Progress(s.result, s.result.best_seconds, run.done, run.budget, SecondsSince(run.start));
    p.batch_ok = ok;
    p.batch_failed = static_cast<int>(batch.candidates.size()) - ok;
    p.batch_size = static_cast<int>(batch.candidates.size());
    run.Log(fmt::format(
        "task '{}': {} candidate(s), {} ok, {} failed; trials {}/{}; best {}; search {:.1f} s, "
        "build {:.1f} s, run {:.1f} s so far",
        s.result.name, batch.candidates.size(), ok, p.batch_failed, run.done, run.budget,
        BestText(p), run.out.search_seconds, run.out.build_seconds, run.out.run_seconds));
    if (options.on_progress) options.on_progress(p);
  }

  // Step 7 (retime_finalists.h): where a library's kernel and tuned ones came close. A task a
  // library can run then reports the record compile runs (KeptRecord), re-timed or not.
  for (TaskState& s : states) {
    if (s.library.empty()) continue;
    std::optional<TuningRecord> best;
    if (!run.out.interrupted && !Stopping(options) && s.result.trials > 0) {
      // Every build and measurement of the re-timing counts (one build a round, a measurement
      // a turn).
      const MeasureTimes before = run.measurer.total_times();
      best = RetimeFinalists({s.result.name, s.func, s.measure, s.result.workload, s.composite,
                              TimingOf(options.runner.timer), options.stop},
                             options.library_retimes, run.target, run.db, run.measurer,
                             run.options.log);
      run.out.build_seconds += run.measurer.total_times().build - before.build;
      run.out.run_seconds += run.measurer.total_times().run - before.run;
    }
    if (!best) best = KeptRecord(run.db, s.result.workload, run.target);
    if (!best) continue;
    s.result.best_seconds = best->median_secs;
    s.result.best_trace = best->trace;
  }

  // Wrap up.
  for (TaskState& s : states) {
    if (s.result.stopped.empty()) s.result.stopped = run.out.interrupted ? "interrupted" : "budget";
    run.out.tasks.push_back(std::move(s.result));
  }
  if (!options.model_path.empty()) run.model->Save(options.model_path);
  run.out.seconds = SecondsSince(run.start);
  return std::move(run.out);
}

}  // namespace tirtune
