// `tirtune tune`: tunes workloads of the operator library or functions of .tir files into a
// database, with a live progress line (periodic log lines when stderr is not a terminal), a log
// file, and Ctrl-C that stops after the current batch, keeping everything committed.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "file_text.h"
#include "runner_options.h"
#include "stop_signals.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/database/database.h"
#include "tirtune/ir/parser.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/timer.h"
#include "tirtune/runtime/cuda_driver.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

#if TIRTUNE_WITH_MODELS
#include "tirtune/model/model.h"
#endif

namespace tirtune::cli {
namespace {

struct TuneCli {
  std::vector<std::string> workloads;
  std::vector<std::string> ir_files;
  std::string target;
  std::string db = "tirtune.db";
  std::string log_file;
  std::string cost_model_file;
  std::vector<std::string> onnx_models;
  std::string offload = "measured";
  bool resume = false;
  bool warm_weights = false;
  RunnerCli runner;
  TuneOptions options;
};

std::string Duration(double seconds) {
  int s = static_cast<int>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string Timestamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return buf;
}

// `model_weight_bytes` gets each model's constant bytes.
std::vector<TuneTask> LoadTasks(const TuneCli& opts, std::vector<int64_t>* model_weight_bytes) {
  std::vector<TuneTask> tasks;
  for (const std::string& spec : opts.workloads) {
    Workload w = MakeWorkload(spec);
    std::string library;
#if TIRTUNE_WITH_MODELS
    // A library's kernel for the operator, measured beside the tuned ones (not with always:
    // the library runs it, nothing is tuned).
    model::Offload offload = model::ParseOffload(opts.offload);
    library = model::WorkloadLibrary(
        w.spec, offload, opts.target.empty() ? Target::Host() : Target::Parse(opts.target));
    if (offload == model::Offload::kAlways && !library.empty()) continue;
#endif
    tasks.push_back(TuneTask{w.spec, w.func, 1, w.flops, library});
  }
  for (const std::string& file : opts.ir_files) {
    PrimFunc f = ParsePrimFunc(ReadTextFile(file), file);
    tasks.push_back(TuneTask{file, f, 1, 0});
  }
  for (const std::string& file : opts.onnx_models) {
    if (file.size() < 5 || file.substr(file.size() - 5) != ".onnx") {
      TT_USER_ERROR(
          "--model takes an ONNX model (FILE.onnx), not '{}'; the cost model file is "
          "--cost-model-file",
          file);
    }
#if TIRTUNE_WITH_MODELS
    // Partitioned as `compile --offload` will; with always, what a library runs is not tuned.
    model::Offload offload = model::ParseOffload(opts.offload);
    Target target = opts.target.empty() ? Target::Host() : Target::Parse(opts.target);
    model::ModelTasks model_tasks =
        model::LoadOnnxModel(file, model::OffloadPatterns(offload, target));
    int64_t weight_bytes = 0;
    for (const graph::Value& v : model_tasks.fused.values()) {
      if (v.kind == graph::ValueKind::kConstant) weight_bytes += v.data.nbytes();
    }
    model_weight_bytes->push_back(weight_bytes);
    for (size_t t = 0; t < model_tasks.tasks.size(); ++t) {
      std::string library = model::TaskLibrary(model_tasks, static_cast<int>(t));
      if (offload == model::Offload::kAlways && !library.empty()) continue;
      const graph::Task& task = model_tasks.tasks[t];
      tasks.push_back(
          TuneTask{task.name, task.func, static_cast<double>(task.weight), 0, library});
    }
#else
    TT_USER_ERROR("this tirtune was built without ONNX support (libonnx-dev): cannot read '{}'",
                  file);
#endif
  }
  if (tasks.empty()) {
    throw UserError(
        "nothing to tune: give --workload NAME:ARGS, --ir FILE.tir or --model FILE.onnx");
  }
  return tasks;
}

// How candidates are timed, in the words of the log and --json.
std::string TimingName(RecordTiming timing) {
  switch (timing) {
    case RecordTiming::kFlushedCaches:
      return "timed on flushed caches";
    case RecordTiming::kColdWeights:
      return "timed with cold weights";
    case RecordTiming::kWarm:
      break;
  }
  return "timed warm";
}
std::string TimingName(const TimerConfig& timer) { return TimingName(TimingOf(timer)); }

// How the measured records the tasks already have on `target` were timed: the timing most of
// those that say (RecordTimingOf) share; nullopt when none says or no timing has a majority.
std::optional<RecordTiming> StoredTiming(Database& db, const std::vector<TuneTask>& tasks,
                                         const std::string& target) {
  std::map<RecordTiming, int> votes;
  int said = 0;
  for (const TuneTask& task : tasks) {
    std::optional<WorkloadEntry> workload = db.FindWorkload(task.func);
    if (!workload) continue;
    for (const TuningRecord& r : db.RecordsOf(workload->id)) {
      if (r.target != target || r.status != RecordStatus::kOk) continue;
      if (std::optional<RecordTiming> t = RecordTimingOf(r.device)) {
        ++votes[*t];
        ++said;
      }
    }
  }
  for (const auto& [timing, count] : votes) {
    if (2 * count > said) return timing;
  }
  return std::nullopt;
}

// How candidates are timed unless a flag says (--warm-weights, --cold-weights, --flush-cache).
// A database that holds records of the tasks keeps the timing they were measured with, so that
// new records compare with them (compile picks the smallest median). Otherwise models whose
// weights exceed the last-level cache run every layer with its weights coming from memory (the
// other layers evicted them since its last call), so their candidates are timed that way where
// every task comes from such a model and is measured on this CPU. Returns the log line saying
// why, empty when the timing is the plain default.
std::string ChooseTiming(const TuneCli& opts, const std::vector<TuneTask>& tasks,
                         const std::vector<int64_t>& model_weight_bytes, Database& db,
                         TuneOptions* options) {
  TimerConfig& timer = options->runner.timer;
  if (options->target.is_cuda()) return "";
  if (opts.warm_weights || timer.cold_constants || timer.flush_cache) {
    // As asked; but a database whose records were timed otherwise is told.
    const std::optional<RecordTiming> stored =
        StoredTiming(db, tasks, CanonicalTarget(options->target.str()));
    if (!stored || *stored == TimingOf(timer)) return "";
    return fmt::format(
        "warning: the records these tasks have in {} were {}, this run's are {} as asked: their "
        "times do not compare, and compile takes the smallest of either (a stored trace keeps "
        "its first timing; a new database times them all alike)",
        db.Describe(), TimingName(*stored), TimingName(timer));
  }
  bool cold = false;
  std::string cold_line;
  if (!model_weight_bytes.empty() && opts.workloads.empty() && opts.ir_files.empty() &&
      !opts.runner.remote()) {
    const int64_t cache = LastLevelCacheBytes();
    const int64_t smallest =
        *std::min_element(model_weight_bytes.begin(), model_weight_bytes.end());
    cold = cache > 0 && smallest > cache;
    cold_line = fmt::format(
        "{} weights ({}{:.1f} MiB) exceed this CPU's last-level cache ({:.1f} MiB): every "
        "candidate is timed with its weights evicted before each call, as it runs in the model "
        "(--cold-weights; --warm-weights times them warm)",
        model_weight_bytes.size() == 1 ? "the model's" : "every model's",
        model_weight_bytes.size() == 1 ? "" : "the smallest ", smallest / 1048576.0,
        cache / 1048576.0);
  }
  const RecordTiming fallback = cold ? RecordTiming::kColdWeights : RecordTiming::kWarm;
  const std::optional<RecordTiming> stored =
      StoredTiming(db, tasks, CanonicalTarget(options->target.str()));
  const RecordTiming timing = stored.value_or(fallback);
  timer.cold_constants = timing == RecordTiming::kColdWeights;
  timer.flush_cache = timing == RecordTiming::kFlushedCaches;
  if (timing != fallback) {
    return fmt::format(
        "the records these tasks have in {} were {}: new candidates are timed the same, so that "
        "they compare ({} times them otherwise)",
        db.Describe(), TimingName(timer),
        fallback == RecordTiming::kColdWeights ? "--cold-weights" : "--warm-weights");
  }
  return cold ? cold_line : "";
}

void RunTune(TuneCli& opts, const GlobalOptions& global) {
  std::vector<int64_t> model_weight_bytes;
  std::vector<TuneTask> tasks = LoadTasks(opts, &model_weight_bytes);
  TuneOptions options = opts.options;
  options.target = opts.target.empty() ? Target::Host() : Target::Parse(opts.target);
  // A cuda target measures on this host's GPU or on a device pool's GPU agents; with neither,
  // refuse before any work rather than record every candidate as a failure.
  if (std::string why; options.target.is_cuda() && !opts.runner.remote() &&
                       !cuda::CudaDriverAvailable(&why)) {
    TT_USER_ERROR("tirtune tune --target cuda: {} (a device pool's GPU agents can measure: "
                  "--runner redis://...)",
                  why);
  }
  if (std::string why; options.target.is_cuda() && !CudaCompilerAvailable(&why)) {
    TT_USER_ERROR("tirtune tune --target cuda: cannot compile CUDA here: {}", why);
  }
  options.resume = opts.resume;
  options.model_path = opts.cost_model_file;
  CheckTuneOptions(options);
  std::unique_ptr<Database> db = OpenDatabase(opts.db);
  RequireIntact(*db, "tirtune tune");

  // Log lines go to the log file, and to stderr when there is no live progress line.
  std::string log_path = opts.log_file;
  if (log_path.empty() && opts.db != ":memory:") log_path = opts.db + ".log";
  std::ofstream log_stream;
  if (!log_path.empty()) {
    log_stream.open(log_path, std::ios::app);
    if (!log_stream) throw UserError(fmt::format("cannot write the log file '{}'", log_path));
  }
  const bool live = isatty(STDERR_FILENO) != 0 && !global.json;
  options.log = [&](const std::string& line) {
    if (log_stream) log_stream << Timestamp() << ' ' << line << std::endl;
    if (!live && !global.json) fmt::print(stderr, "{}\n", line);
  };
  if (live) {
    options.on_progress = [&](const TuneProgress& p) {
      std::string best = p.best_seconds ? fmt::format("{:.4f} ms, {:.1f} GFLOP/s",
                                                      *p.best_seconds * 1e3, p.best_gflops)
                                        : std::string("no valid kernel yet");
      int measured = p.batch_ok + p.batch_failed;
      std::string batch = measured < p.batch_size
                              ? fmt::format(" | batch {}/{}", measured, p.batch_size)
                              : std::string();
      fmt::print(stderr, "\r\033[K[{}/{}] {}: best {}{} | elapsed {}, ETA {}", p.trials_done,
                 p.trials_total, p.task, best, batch, Duration(p.elapsed_seconds),
                 Duration(p.eta_seconds));
    };
  }
  // (Said on stderr even under the live progress line, which starts later.)
  if (std::string why = ChooseTiming(opts, tasks, model_weight_bytes, *db, &options);
      !why.empty()) {
    options.log(why);
    if (live) fmt::print(stderr, "{}\n", why);
  }
  std::unique_ptr<Runner> runner =
      opts.runner.Make(CanonicalTarget(options.target.str()), options.runner, global);
  options.log(fmt::format("tirtune tune: {} task(s), {} trials, target '{}', database {}, {}, {}",
                          tasks.size(), options.max_trials, options.target.str(), db->Describe(),
                          runner->Describe(), TimingName(options.runner.timer)));

  TuneResult result;
  {
    StopOnSignals stop_on_signals("tirtune: stopping after the current batch (again to abort)\n");
    options.stop = stop_on_signals.flag();
    result = Tune(tasks, *db, options, *runner);
    options.stop = nullptr;
  }
  if (live) fmt::print(stderr, "\n");
  options.log(fmt::format("done in {:.1f} s (search {:.1f} s, build {:.1f} s, run {:.1f} s){}",
                          result.seconds, result.search_seconds, result.build_seconds,
                          result.run_seconds, result.interrupted ? ", interrupted" : ""));

  if (global.json) {
    nlohmann::json tasks_json = nlohmann::json::array();
    for (const TaskResult& t : result.tasks) {
      nlohmann::json j = {{"task", t.name},
                          {"workload_id", t.workload},
                          {"trials", t.trials},
                          {"trials_before", t.trials_before},
                          {"statuses", t.status_counts},
                          {"stopped", t.stopped},
                          {"flops", t.flops}};
      if (t.best_seconds) {
        j["best_seconds"] = *t.best_seconds;
        j["best_gflops"] = t.flops / *t.best_seconds / 1e9;
        j["best_trace"] = t.best_trace;
      }
      tasks_json.push_back(std::move(j));
    }
    fmt::print("{}\n", nlohmann::json{{"target", options.target.str()},
                                      {"database", opts.db},
                                      {"timing", TimingName(options.runner.timer)},
                                      {"seconds", result.seconds},
                                      {"search_seconds", result.search_seconds},
                                      {"build_seconds", result.build_seconds},
                                      {"run_seconds", result.run_seconds},
                                      {"interrupted", result.interrupted},
                                      {"tasks", tasks_json}}
                           .dump(2));
    return;
  }
  for (const TaskResult& t : result.tasks) {
    std::string statuses;
    for (const auto& [name, count] : t.status_counts) {
      statuses += fmt::format("{}{} {}", statuses.empty() ? "" : ", ", count, name);
    }
    if (t.best_seconds) {
      fmt::print("{}: best {:.4f} ms, {:.1f} GFLOP/s after {} trial(s) ({}); stopped: {}\n", t.name,
                 *t.best_seconds * 1e3, t.flops / *t.best_seconds / 1e9, t.trials,
                 statuses.empty() ? "none this run" : statuses, t.stopped);
    } else {
      fmt::print("{}: no valid kernel after {} trial(s) ({}); stopped: {}\n", t.name, t.trials,
                 statuses.empty() ? "none" : statuses, t.stopped);
    }
  }
  if (result.interrupted) {
    fmt::print("interrupted: every measured batch is in {}; continue with --resume\n", opts.db);
  }
}

}  // namespace

void AddTuneCommand(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<TuneCli>();
  CLI::App* cmd = app.add_subcommand("tune", "search for the fastest schedule of functions");
  cmd->add_option("--workload", opts->workloads, "NAME:ARGS of the operator library (repeatable)");
  cmd->add_option("--ir", opts->ir_files, "a .tir file holding one function (repeatable)");
  cmd->add_option("--target", opts->target, "e.g. \"llvm -num-cores=2\"; default: host");
  cmd->add_option("--trials", opts->options.max_trials, "trials in all, over all tasks")
      ->required();
  cmd->add_option("--db", opts->db, "the tuning database (.db, .sqlite, .jsonl)")
      ->capture_default_str();
  cmd->add_flag("--resume", opts->resume, "count the trials already stored against --trials");
  cmd->add_option("--seed", opts->options.seed, "random seed")->capture_default_str();
  cmd->add_option("--strategy", opts->options.strategy, "evolutionary or replay")
      ->capture_default_str();
  cmd->add_option("--cost-model", opts->options.cost_model, "xgb or random")->capture_default_str();
  cmd->add_option("--task-scheduler", opts->options.task_scheduler, "gradient or round-robin")
      ->capture_default_str();
  cmd->add_option("--pretrain", opts->options.pretrain,
                  "stored records the cost model learns from before the first batch: all (up to "
                  "300 of every other workload on the target too), tasks (the tasks' own) or none")
      ->capture_default_str();
  cmd->add_option("--transfer", opts->options.transfer,
                  "a task with no records of its own starts with up to N schedules of other "
                  "stored workloads of the same loop structure, tilings fitted (0: none)")
      ->capture_default_str();
  cmd->add_option("--trials-per-round", opts->options.trials_per_round,
                  "candidates per batch (default: 64 for one task; with several, about half "
                  "of each task's share of --trials, 8 to 64)");
  cmd->add_option("--population", opts->options.evolutionary.population_size,
                  "schedules per generation of the evolutionary search")
      ->capture_default_str();
  cmd->add_option("--jobs", opts->options.builder.num_jobs,
                  "parallel compilations (default: hardware threads)");
  cmd->add_option("--timeout", opts->options.runner.timeout_s, "seconds per candidate run")
      ->capture_default_str();
  CLI::Option* flush = cmd->add_flag(
      "--flush-cache", opts->options.runner.timer.flush_cache,
      "time every candidate on cold caches: one call after a cache flush per sample, as a kernel "
      "runs inside a model whose other layers evicted its data");
  CLI::Option* cold =
      cmd->add_flag("--cold-weights", opts->options.runner.timer.cold_constants,
                    "time every call of a candidate with the function's constant weights (a "
                    "model's, or a workload's layout-free parameters) evicted from the caches and "
                    "its other data warm, as a layer runs inside a model (records of one database "
                    "should all be timed one way); the default for --model when the model's "
                    "weights exceed this CPU's last-level cache")
          ->excludes(flush);
  cmd->add_flag("--warm-weights", opts->warm_weights,
                "time a model's candidates warm even when its weights exceed the last-level cache")
      ->excludes(flush)
      ->excludes(cold);
  opts->runner.AddOptions(cmd);
  cmd->add_option("--log", opts->log_file, "log file (default: DB.log)");
  cmd->add_option("--model", opts->onnx_models,
                  "an ONNX model: tune every fused function of it (repeatable)");
  cmd->add_option("--offload", opts->offload,
                  "measured (a library's kernel is measured beside the tuned ones for every "
                  "function or --workload it can run), never, or always (the functions a library "
                  "runs, as compile --offload always will, are not tuned)")
      ->capture_default_str();
  cmd->add_option(
         "--library-retimes", opts->options.library_retimes,
         "where a library's kernel and the best tuned ones are within 25%, measure "
         "each again N times (3N under 0.5 ms), in turns, before the one that runs is "
         "kept: the library's unless the best tuned one is more than 3% faster at both the "
         "median and the lower quartile of their samples, or 10% at the median (0: not)")
      ->capture_default_str();
  cmd->add_option("--cost-model-file", opts->cost_model_file,
                  "load the cost model from, and save it to, FILE");
  cmd->callback([opts, &global] { RunTune(*opts, global); });
}

}  // namespace tirtune::cli
