// The tuning loop (see tune.h): set up every task, then batches until the budget is spent, the
// spaces are exhausted or the caller asks to stop.
#include "tirtune/search/tune.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "tirtune/ir/flop_count.h"
#include "tirtune/search/task_scheduler.h"
#include "tirtune/support/error.h"
#include "tirtune/support/version.h"

namespace tirtune {
namespace {

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

std::string BestText(const TuneProgress& p) {
  if (!p.best_seconds) return "none";
  return fmt::format("{:.4f} ms ({:.1f} GFLOP/s)", *p.best_seconds * 1e3, p.best_gflops);
}

RecordStatus ToRecordStatus(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk:
      return RecordStatus::kOk;
    case MeasureStatus::kBuildError:
      return RecordStatus::kBuildError;
    case MeasureStatus::kRuntimeError:
      return RecordStatus::kRuntimeError;
    case MeasureStatus::kTimeout:
      return RecordStatus::kTimeout;
    case MeasureStatus::kWrongResult:
      return RecordStatus::kWrongResult;
    case MeasureStatus::kRunnerLost:
      return RecordStatus::kRunnerLost;
  }
  return RecordStatus::kRunnerLost;
}

// What went wrong, as stored with a failed record.
std::string ErrorText(const MeasureResult& r) {
  std::string text = r.message;
  if (r.status == MeasureStatus::kWrongResult) {
    text += fmt::format(" (max abs error {:.3g}, max rel error {:.3g})", r.max_abs_error,
                        r.max_rel_error);
  }
  return text;
}

struct TaskState {
  TaskResult result;
  PrimFunc func;
  MeasureTask measure;
  std::unique_ptr<SearchStrategy> strategy;
  std::string model_group;  // the cost model's task key: the workload's structural hash
  std::vector<Trace> design_spaces;
};

// Why a task's design spaces yield no valid sample: the first rejection among a few samples of
// each space (the strategies only see that nothing came back); empty when one of them is valid,
// i.e. the space is merely used up.
std::string WhyNoSample(const SpaceGenerator& space, const TaskState& s, uint64_t seed) {
  if (s.design_spaces.empty()) return "the schedule rules made no design space";
  std::string first;
  for (uint64_t k = 0; k < 4; ++k) {
    for (size_t i = 0; i < s.design_spaces.size(); ++i) {
      std::string why = space.WhyRejected(s.func, s.design_spaces[i], seed + k);
      if (why.empty()) return "";
      if (first.empty()) {
        first = fmt::format("design space {} of {}: {}", i + 1, s.design_spaces.size(), why);
      }
    }
  }
  return first;
}

void CheckOptions(const TuneOptions& o) {
  if (o.max_trials < 1)
    throw UserError(fmt::format("--trials must be positive, got {}", o.max_trials));
  if (o.trials_per_round < 0) {
    throw UserError(fmt::format("trials per round must be positive (or 0 for the default), got {}",
                                o.trials_per_round));
  }
  const EvolutionaryConfig& e = o.evolutionary;
  if (e.population_size < 1) {
    throw UserError(fmt::format("the population must be positive, got {}", e.population_size));
  }
  if (!(e.init_measured_ratio >= 0 && e.init_measured_ratio <= 1) ||
      !(e.eps_greedy >= 0 && e.eps_greedy <= 1) ||
      !(e.genetic_mutate_prob >= 0 && e.genetic_mutate_prob <= 1)) {
    throw UserError("init_measured_ratio, eps_greedy and genetic_mutate_prob must be in [0, 1]");
  }
  if (!std::isfinite(o.runner.timeout_s) || o.runner.timeout_s <= 0) {
    throw UserError(
        fmt::format("--timeout must be a positive number of seconds, got {}", o.runner.timeout_s));
  }
  if (!(o.slow_cutoff_factor == 0 || o.slow_cutoff_factor > 1)) {
    throw UserError(
        fmt::format("the slow-candidate cutoff factor must be 0 (off) or above 1, got {}",
                    o.slow_cutoff_factor));
  }
  if (o.strategy != "evolutionary" && o.strategy != "replay") {
    throw UserError(fmt::format("unknown strategy '{}' (evolutionary or replay)", o.strategy));
  }
  if (o.cost_model != "xgb" && o.cost_model != "random") {
    throw UserError(fmt::format("unknown cost model '{}' (xgb or random)", o.cost_model));
  }
  if (o.pretrain != "all" && o.pretrain != "tasks" && o.pretrain != "none") {
    throw UserError(fmt::format("unknown pre-training '{}' (all, tasks or none)", o.pretrain));
  }
  if (o.task_scheduler != "gradient" && o.task_scheduler != "round-robin") {
    throw UserError(
        fmt::format("unknown task scheduler '{}' (gradient or round-robin)", o.task_scheduler));
  }
}

/// Stored records replayed for the cost model to learn from before the first batch, features
/// still to compute.
struct ReplayedRecords {
  std::vector<Schedule> schedules;
  std::vector<double> seconds;  // the median, or infinity for a failure
  std::vector<std::string> groups;

  void Add(Schedule sch, const TuningRecord& r, const std::string& group) {
    schedules.push_back(std::move(sch));
    seconds.push_back(r.status == RecordStatus::kOk && r.median_secs ? *r.median_secs : kInf);
    groups.push_back(group);
  }
};

/// Whether a stored record says something about speed: a build error or a lost worker does not.
bool TrainsTheModel(const TuningRecord& r) {
  return r.status != RecordStatus::kBuildError && r.status != RecordStatus::kRunnerLost;
}

/// Adds to `set` records of the workloads of `db` not being tuned (`tuned`), on `target`: at most
/// options.pretrain_per_workload of each (fewer when options.pretrain_max_others would be passed),
/// evenly spaced over its records so that a long search's early and late candidates both count.
/// Returns how many workloads contributed.
size_t AddOtherWorkloads(Database& db, const std::unordered_set<WorkloadId>& tuned,
                         const std::string& target, const TuneOptions& options,
                         ReplayedRecords& set) {
  std::vector<WorkloadEntry> others;
  for (WorkloadEntry& w : db.Workloads()) {
    if (!tuned.count(w.id)) others.push_back(std::move(w));
  }
  if (others.empty()) return 0;
  size_t per = std::min(options.pretrain_per_workload, options.pretrain_max_others / others.size());
  size_t contributed = 0;
  for (const WorkloadEntry& w : others) {
    std::vector<TuningRecord> usable;
    for (TuningRecord& r : db.RecordsOf(w.id)) {
      if (r.target == target && TrainsTheModel(r)) usable.push_back(std::move(r));
    }
    size_t n = std::min(per, usable.size()), before = set.schedules.size();
    for (size_t i = 0; i < n; ++i) {
      const TuningRecord& r = usable[i * usable.size() / n];
      if (std::optional<Schedule> sch = ReplayRecord(w.func, r.trace)) {
        set.Add(std::move(*sch), r, w.shash);
      }
    }
    if (set.schedules.size() > before) ++contributed;
  }
  return contributed;
}

}  // namespace

int DefaultTrialsPerRound(int budget, size_t num_tasks) {
  constexpr int kMax = 64, kMin = 8;
  if (num_tasks <= 1) return kMax;
  int half_share = static_cast<int>(budget / (2 * static_cast<int64_t>(num_tasks)));
  return std::clamp(half_share / kMin * kMin, kMin, kMax);
}

std::optional<Schedule> ReplayRecord(const PrimFunc& func, const nlohmann::json& trace_json) {
  try {
    Schedule sch(func);
    Trace::FromJson(trace_json).ApplyTo(sch);
    return sch;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

TuneResult Tune(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& options) {
  CheckOptions(options);
  if (tasks.empty()) throw UserError("nothing to tune: no task given");
  auto start = Clock::now();
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  const std::string target = CanonicalTarget(options.target.str());
  const std::string device = HostDeviceDescription();

  // Step 1. The space, the cost model, the measurer.
  CpuSpaceConfig space_config = CpuSpaceConfig::For(options.target);
  SpaceGenerator space = SpaceGenerator::DefaultCpu(space_config);
  std::unique_ptr<CostModel> model = options.cost_model == "xgb" ? MakeXGBoostModel(options.xgboost)
                                                                 : MakeRandomModel(options.seed);
  if (!options.model_path.empty() && std::ifstream(options.model_path).good()) {
    model->Load(options.model_path);
    log(fmt::format("loaded the cost model from {} ({} samples)", options.model_path,
                    model->num_samples()));
  }
  FeatureFn features = LoweredFeatures(options.builder.num_jobs);
  Measurer measurer(options.builder, options.runner);
  TuneResult out;

  // Step 2. Every task: its workload and what is already stored; then, unless a resumed run finds
  // the budget spent, its warm start, reference and strategy (replaying the records and building
  // the design spaces is most of a finished run's time).
  std::vector<TaskState> states;
  std::vector<std::vector<TuningRecord>> stored(tasks.size());
  std::unordered_set<WorkloadId> tuned;
  size_t stored_total = 0;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const TuneTask& task = tasks[t];
    TaskState s;
    s.func = task.func;
    s.result.name = task.name;
    s.result.flops = task.flops > 0 ? task.flops : EstimateFlops(task.func);
    WorkloadEntry entry = db.CommitWorkload(task.func);
    s.result.workload = entry.id;
    s.model_group = entry.shash;
    tuned.insert(entry.id);
    for (TuningRecord& r : db.RecordsOf(entry.id)) {
      if (r.target == target) stored[t].push_back(std::move(r));
    }
    s.result.trials_before = stored[t].size();
    stored_total += stored[t].size();
    states.push_back(std::move(s));
  }
  int budget = options.max_trials;
  if (options.resume) budget -= static_cast<int>(std::min<size_t>(stored_total, budget));

  ReplayedRecords own_stored;  // the tasks' records the cost model learns from
  for (size_t t = 0; t < tasks.size(); ++t) {
    TaskState& s = states[t];
    size_t warm_k = static_cast<size_t>(options.evolutionary.population_size *
                                        options.evolutionary.init_measured_ratio);
    std::vector<std::pair<Schedule, double>> warm;
    for (const TuningRecord& r : db.TopK(s.result.workload, target, std::max<size_t>(warm_k, 1))) {
      if (!s.result.best_seconds || *r.median_secs < *s.result.best_seconds) {
        s.result.best_seconds = r.median_secs;
        s.result.best_trace = r.trace;
      }
      if (budget == 0) continue;
      if (std::optional<Schedule> sch = ReplayRecord(s.func, r.trace)) {
        warm.emplace_back(std::move(*sch), *r.median_secs);
      }
    }
    std::string best = s.result.best_seconds
                           ? fmt::format("{:.4f} ms", *s.result.best_seconds * 1e3)
                           : std::string("none");
    if (budget == 0) {
      log(fmt::format("task {} '{}': workload {}, {} record(s) stored, best {}; budget spent", t,
                      s.result.name, s.result.workload, s.result.trials_before, best));
      continue;
    }

    std::unordered_set<std::string> measured;
    for (const TuningRecord& r : stored[t]) {
      // A lost worker is not the candidate's fault: it may be proposed and measured again.
      if (r.status == RecordStatus::kRunnerLost) continue;
      std::optional<Schedule> sch = ReplayRecord(s.func, r.trace);
      if (!sch) continue;
      measured.insert(CandidateKey(*sch));
      if (TrainsTheModel(r)) own_stored.Add(std::move(*sch), r, s.model_group);
    }
    stored[t].clear();

    s.measure = MakeMeasureTask(s.func, options.target, options.seed);
    std::vector<Schedule> spaces = space.GenerateDesignSpaces(s.func, options.seed + t);
    for (const Schedule& d : spaces) s.design_spaces.push_back(d.trace());
    if (options.strategy == "evolutionary") {
      s.strategy = MakeEvolutionarySearch(&space, model.get(), features, options.evolutionary,
                                          options.seed + 7919 * (t + 1));
    } else {
      s.strategy = MakeReplayTrace(&space, options.seed + 7919 * (t + 1));
    }
    s.strategy->PreTuning(s.func, spaces, warm, measured);
    log(fmt::format("task {} '{}': workload {}, {} design space(s), {} record(s) stored, best {}",
                    t, s.result.name, s.result.workload, spaces.size(), s.result.trials_before,
                    best));
  }

  // Step 3. The cost model learns from the stored records; not when there is nothing left to do,
  // nor when nothing would use what it learns (a random model; random search without a model file
  // to save).
  bool model_used = options.cost_model == "xgb" &&
                    (options.strategy == "evolutionary" || !options.model_path.empty());
  if (budget > 0 && model_used && options.pretrain != "none") {
    // Other workloads' records make the prior; the tasks' own are the model's own samples.
    auto learn = [&](const ReplayedRecords& set, bool prior) {
      auto start = Clock::now();
      std::vector<FeatureMatrix> f = features(set.schedules);
      std::vector<CostSample> samples;
      for (size_t i = 0; i < f.size(); ++i) {
        samples.push_back(CostSample{set.groups[i], std::move(f[i]), set.seconds[i]});
      }
      prior ? model->Pretrain(samples) : model->Update(samples);
      return SecondsSince(start);
    };
    if (options.pretrain == "all") {
      ReplayedRecords others;
      size_t workloads = AddOtherWorkloads(db, tuned, target, options, others);
      if (!others.schedules.empty()) {
        double seconds = learn(others, true);
        log(fmt::format("cost model pre-trained on {} record(s) of {} other workload(s) ({:.1f} s)",
                        others.schedules.size(), workloads, seconds));
      }
    }
    if (!own_stored.schedules.empty()) {
      double seconds = learn(own_stored, false);
      log(fmt::format("cost model trained on the tasks' {} stored record(s) ({:.1f} s)",
                      own_stored.schedules.size(), seconds));
    }
  }

  // Step 4. Batches until the budget is spent.
  std::vector<double> weights;
  for (const TuneTask& t : tasks) weights.push_back(t.weight);
  std::unique_ptr<TaskScheduler> scheduler = options.task_scheduler == "gradient"
                                                 ? MakeGradientBased(weights, 0.2, 3, options.seed)
                                                 : MakeRoundRobin(tasks.size());
  const int per_round = options.trials_per_round > 0 ? options.trials_per_round
                                                     : DefaultTrialsPerRound(budget, tasks.size());
  if (options.trials_per_round == 0 && tasks.size() > 1 && budget > 0) {
    log(fmt::format("batches of {} candidates ({} tasks share {} trials)", per_round, tasks.size(),
                    budget));
  }
  int done = 0;
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
  } save_on_error{*model, options.model_path};
  while (done < budget) {
    if (options.stop != nullptr && options.stop->load()) {
      out.interrupted = true;
      break;
    }
    int t = scheduler->NextTask();
    if (t < 0) break;
    TaskState& s = states[t];
    int n = std::min(per_round, budget - done);

    auto search_start = Clock::now();
    std::vector<Schedule> candidates;
    try {
      candidates = s.strategy->GenerateMeasureCandidates(n);
    } catch (const std::exception& e) {
      // A bug in a rule, postprocessor or mutator ends this task, not the run.
      s.result.stopped = std::string("error: ") + e.what();
      scheduler->Terminate(t);
      log(fmt::format("task '{}': the search failed and the task stops: {}", s.result.name,
                      e.what()));
      continue;
    }
    out.search_seconds += SecondsSince(search_start);
    TT_ICHECK(static_cast<int>(candidates.size()) <= n, "asked for {} candidates, got {}", n,
              candidates.size());
    if (candidates.empty()) {
      s.result.stopped = "exhausted";
      scheduler->Terminate(t);
      std::string why = s.result.trials + s.result.trials_before == 0
                            ? WhyNoSample(space, s, options.seed)
                            : std::string();
      if (why.empty()) {
        log(fmt::format("task '{}': no new candidate; its space is exhausted", s.result.name));
      } else {
        s.result.stopped = "no valid candidate: " + why;
        log(fmt::format("task '{}': no valid candidate, every sample is rejected; e.g. {}",
                        s.result.name, why));
      }
      continue;
    }

    std::vector<PrimFunc> funcs;
    for (const Schedule& c : candidates) funcs.push_back(c.func());
    SlowCutoff cutoff;
    cutoff.factor = options.slow_cutoff_factor;
    cutoff.best_seconds = s.result.best_seconds.value_or(0);
    // Progress while the batch is measured: a live display follows every candidate, the log
    // hears of a long batch every 30 s.
    std::mutex progress_mutex;
    int batch_ok = 0, batch_failed = 0;
    std::optional<double> batch_best = s.result.best_seconds;
    auto last_log = Clock::now();
    auto on_result = [&](size_t, const MeasureResult& r) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      (r.ok() ? batch_ok : batch_failed) += 1;
      if (r.ok() && (!batch_best || r.median < *batch_best)) batch_best = r.median;
      TuneProgress p = Progress(s.result, batch_best, done + batch_ok + batch_failed, budget,
                                SecondsSince(start));
      p.batch_ok = batch_ok;
      p.batch_failed = batch_failed;
      p.batch_size = static_cast<int>(funcs.size());
      if (SecondsSince(last_log) >= 30 && p.batch_ok + p.batch_failed < p.batch_size) {
        last_log = Clock::now();
        log(fmt::format("task '{}': {} of {} candidate(s) of the batch measured; best {}",
                        s.result.name, p.batch_ok + p.batch_failed, p.batch_size, BestText(p)));
      }
      if (options.on_progress) options.on_progress(p);
    };
    std::vector<MeasureResult> results = measurer.Measure(s.measure, funcs, cutoff, on_result);
    bool all_lost = std::all_of(results.begin(), results.end(), [](const MeasureResult& r) {
      return r.status == MeasureStatus::kRunnerLost;
    });
    if (all_lost) {
      throw UserError(fmt::format("every candidate of the batch lost its runner, e.g.: {}",
                                  results.front().message));
    }
    out.build_seconds += measurer.last_times().build;
    out.run_seconds += measurer.last_times().run;

    // Every result is stored, failures included, in one transaction.
    std::vector<TuningRecord> records;
    std::vector<double> seconds;
    std::vector<Schedule> learnable;
    std::vector<double> learnable_secs;
    int ok = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      const MeasureResult& r = results[i];
      TuningRecord rec;
      rec.workload = s.result.workload;
      rec.target = target;
      rec.trace = candidates[i].trace().ToJson();
      rec.status = ToRecordStatus(r.status);
      if (r.ok()) rec.run_secs = r.seconds;
      if (!r.ok()) rec.error = ErrorText(r);
      rec.device = device;
      rec.program_version = kProgramVersion;
      records.push_back(std::move(rec));
      ++s.result.status_counts[std::string(RecordStatusName(ToRecordStatus(r.status)))];
      seconds.push_back(r.ok() ? r.median : kInf);
      if (r.ok()) {
        ++ok;
        if (!s.result.best_seconds || r.median < *s.result.best_seconds) {
          s.result.best_seconds = r.median;
          s.result.best_trace = records.back().trace;
        }
      }
      if (r.status != MeasureStatus::kBuildError && r.status != MeasureStatus::kRunnerLost) {
        learnable.push_back(candidates[i]);
        learnable_secs.push_back(seconds.back());
      }
    }
    db.CommitRecords(records);
    s.result.trials += static_cast<int>(candidates.size());
    done += static_cast<int>(candidates.size());

    auto learn_start = Clock::now();
    std::vector<FeatureMatrix> f = features(learnable);
    std::vector<CostSample> samples;
    for (size_t i = 0; i < learnable.size(); ++i) {
      samples.push_back(CostSample{s.model_group, std::move(f[i]), learnable_secs[i]});
    }
    model->Update(samples);
    s.strategy->NotifyRunnerResults(candidates, seconds);
    out.search_seconds += SecondsSince(learn_start);
    scheduler->Notify(t, s.result.best_seconds.value_or(kInf));

    TuneProgress p = Progress(s.result, s.result.best_seconds, done, budget, SecondsSince(start));
    p.batch_ok = ok;
    p.batch_failed = static_cast<int>(candidates.size()) - ok;
    p.batch_size = static_cast<int>(candidates.size());
    log(fmt::format(
        "task '{}': {} candidate(s), {} ok, {} failed; trials {}/{}; best {}; search {:.1f} s, "
        "build {:.1f} s, run {:.1f} s so far",
        s.result.name, candidates.size(), ok, p.batch_failed, done, budget, BestText(p),
        out.search_seconds, out.build_seconds, out.run_seconds));
    if (options.on_progress) options.on_progress(p);
  }

  // Step 5. Wrap up.
  for (TaskState& s : states) {
    if (s.result.stopped.empty()) s.result.stopped = out.interrupted ? "interrupted" : "budget";
    out.tasks.push_back(std::move(s.result));
  }
  if (!options.model_path.empty()) model->Save(options.model_path);
  out.seconds = SecondsSince(start);
  return out;
}

}  // namespace tirtune
