// How well the XGBoost cost model ranks the candidates of a task it was not trained on, measured
// on real tuning records: every (workload, target) group of the given databases is a task; each
// task in turn is held back, the model trains on the records of all the others (never on those
// of the same workload, from any of the databases: a random-search database of a workload can be
// held out against a model trained on the other workloads' evolutionary records), and the
// pairwise ranking accuracy over the held-back task's records is reported
// (PairwiseRankingAccuracy: pairs with different times, a failure being the slowest). Also
// reported per task: the accuracy over the pairs whose times differ by more than 2%, 5% and 10%
// (closer pairs are within this machine's timing noise and have no true order), the random
// model's accuracy, and the time to replay and extract the features. With IN_TASK=1, each task
// is split 70/30 instead, and the report adds what the 10% and 5% best predicted of the test
// records would find (their fastest time over the fastest of all).
//
//   [RANK=0|1] [MAX_ROUNDS=N] [MAX_DEPTH=N] [PRIOR_MAX_DEPTH=N] [ETA=X] [SUBSAMPLE=X] [COLSAMPLE=X]
//   [MIN_CHILD_WEIGHT=X] [GAP_POWER=X] [PAIRS_PER_SAMPLE=N] [SEED=N]   (XGBoostConfig settings)
//   [SEEDS=N] [HELD_OUT=TEXT,...] [TRAIN_ONLY=TEXT,...] [TRAIN_PER_TASK=N] [NORMALIZE=0|1]
//   [RETIME=N [RETIME_TIMER=final]] [DUMP=PREFIX] [SWEEP="K=V K=V;K=V..."] [OWN=K,K...]
//   [IN_TASK=1|DIAGNOSE=1]
//   bench_cost_model_heldout DB...
//
// HELD_OUT and TRAIN_ONLY pick tasks by a text in their name ("#3 (", "(gemm)"); TRAIN_PER_TASK
// trains on N evenly spaced records of each task; SEEDS=N trains N models per held-out task, with
// the seeds SEED, SEED+1, ..., and reports each one's accuracy and that of their mean rank; SWEEP
// runs the held-out evaluation once per entry with its settings, on features loaded once. OWN=K,...
// adds, per held-out task, the view of a search of it: its first K records trained on alone and on
// top of the others' model (the prior of `tirtune tune --pretrain all`), each ranking the records
// after the largest K. The held-out model is such a prior: PRIOR_MAX_DEPTH sets its trees' depth,
// MAX_DEPTH that of the trees trained on own samples (OWN, IN_TASK).
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "size_shares.h"
#include "tirtune/codegen/target.h"
#include "tirtune/database/database.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/search/cost_model.h"
#include "tirtune/search/feature.h"
#include "tirtune/search/strategy.h"
#include "tirtune/search/tune.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Task {
  std::string name;
  // The workload, to tell the same workload in two databases (hash, then structure: names do not
  // count).
  std::string workload_hash;
  PrimFunc workload;
  std::string target;
  std::vector<CostSample> samples;
  // The trace of each sample, to measure it again (RETIME).
  std::vector<nlohmann::json> traces;
};

// The records of every (workload, target) of `path` that replay, as cost-model samples.
std::vector<Task> LoadTasks(const std::string& path, const FeatureFn& features) {
  OpenOptions open;
  open.create_if_missing = false;
  std::unique_ptr<Database> db = OpenDatabase(path, open);
  std::vector<Task> tasks;
  for (const WorkloadEntry& w : db->Workloads()) {
    std::map<std::string, std::vector<Schedule>> schedules;
    std::map<std::string, std::vector<double>> seconds;
    std::map<std::string, std::vector<nlohmann::json>> traces;
    for (const TuningRecord& r : db->RecordsOf(w.id)) {
      if (r.status == RecordStatus::kBuildError || r.status == RecordStatus::kRunnerLost) continue;
      std::optional<Schedule> sch = ReplayRecord(w.func, r.trace);
      if (!sch) continue;
      schedules[r.target].push_back(std::move(*sch));
      traces[r.target].push_back(r.trace);
      seconds[r.target].push_back(r.status == RecordStatus::kOk && r.median_secs
                                      ? *r.median_secs
                                      : std::numeric_limits<double>::infinity());
    }
    for (auto& [target, group] : schedules) {
      Task task;
      task.name = fmt::format("{}#{} ({})", path, w.id, w.name);
      task.workload_hash = w.shash;
      task.workload = w.func;
      task.target = target;
      task.traces = std::move(traces[target]);
      std::vector<FeatureMatrix> f = features(group);
      for (size_t i = 0; i < group.size(); ++i) {
        task.samples.push_back(CostSample{task.name, std::move(f[i]), seconds[target][i]});
      }
      tasks.push_back(std::move(task));
    }
  }
  return tasks;
}

// PairwiseRankingAccuracy restricted to the pairs whose times differ by more than `margin`.
double AccuracyBeyondNoise(const std::vector<CostSample>& samples,
                           const std::vector<double>& scores, double margin) {
  double right = 0;
  size_t pairs = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    for (size_t j = i + 1; j < samples.size(); ++j) {
      double a = samples[i].seconds, b = samples[j].seconds;
      if (std::max(a, b) <= std::min(a, b) * (1 + margin)) continue;
      ++pairs;
      bool i_faster = a < b;
      if (scores[i] == scores[j]) {
        right += 0.5;
      } else if ((scores[i] > scores[j]) == i_faster) {
        right += 1;
      }
    }
  }
  return pairs == 0 ? 0.5 : right / pairs;
}

// RETIME=N: how far the measured order itself can be trusted. N random records of the held-out
// task are measured twice more as tuning measures them (a fresh Measurer, the tuning timer, the
// current code); reported: how often the two new measurements order a pair alike (what a ranker
// scored against measured times can hope for), how often the first agrees with the stored time
// (also the drift since, and any change of the lowering since), and the model's accuracy on those
// records against the stored times, the second new times and the two new ones' geometric mean.
nlohmann::json Retime(const Task& task, const std::vector<double>& scores, int n) {
  std::mt19937_64 rng(11);
  std::vector<size_t> order(task.samples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<size_t> picked;
  std::vector<PrimFunc> funcs;
  for (size_t i : order) {
    if (funcs.size() >= static_cast<size_t>(n)) break;
    if (!std::isfinite(task.samples[i].seconds)) continue;
    std::optional<Schedule> sch = ReplayRecord(task.workload, task.traces[i]);
    if (!sch) continue;
    picked.push_back(i);
    funcs.push_back(sch->func());
  }
  Target target = Target::Parse(task.target);
  RunnerConfig runner;
  // RETIME_TIMER=final: the timer of final numbers (5 repeats of at least 50 ms) instead.
  const char* timer = std::getenv("RETIME_TIMER");
  runner.timer =
      timer != nullptr && std::string(timer) == "final" ? TimerConfig{} : TuningTimerConfig();
  Measurer measurer(BuilderConfig{}, runner);
  auto start = std::chrono::steady_clock::now();
  MeasureTask measure = MakeMeasureTask(task.workload, target);
  std::vector<MeasureResult> first = measurer.Measure(measure, funcs);
  std::vector<MeasureResult> second = measurer.Measure(measure, funcs);
  double seconds = SecondsSince(start);
  // The records measured fine both times, with their stored time, each new time and the
  // geometric mean of the two new ones.
  std::vector<CostSample> stored, again, again2, mean;
  std::vector<double> model, by_first, by_second;
  for (size_t k = 0; k < picked.size(); ++k) {
    if (!first[k].ok() || !second[k].ok()) continue;
    const CostSample& s = task.samples[picked[k]];
    auto with = [&](double secs) {
      CostSample c = s;
      c.seconds = secs;
      return c;
    };
    stored.push_back(s);
    again.push_back(with(first[k].median));
    again2.push_back(with(second[k].median));
    mean.push_back(with(std::sqrt(first[k].median * second[k].median)));
    model.push_back(scores[picked[k]]);
    by_first.push_back(-first[k].median);
    by_second.push_back(-second[k].median);
  }
  auto round3 = [](double x) { return std::round(x * 1000) / 1000; };
  return {
      {"records", stored.size()},
      {"seconds", std::round(seconds)},
      {"remeasured_vs_remeasured", round3(PairwiseRankingAccuracy(again, by_second))},
      {"remeasured_vs_remeasured_beyond_2pct", round3(AccuracyBeyondNoise(again, by_second, 0.02))},
      {"remeasured_vs_stored", round3(PairwiseRankingAccuracy(stored, by_first))},
      {"model_vs_stored", round3(PairwiseRankingAccuracy(stored, model))},
      {"model_vs_remeasured", round3(PairwiseRankingAccuracy(again2, model))},
      {"model_vs_remeasured_mean", round3(PairwiseRankingAccuracy(mean, model))},
      {"model_vs_remeasured_mean_beyond_2pct", round3(AccuracyBeyondNoise(mean, model, 0.02))}};
}

// The default XGBoostConfig; RANK=1 chooses the pairwise objective, RANK=0 the regression, and
// the other variables of the usage line override the setting they name.
XGBoostConfig ConfigFromEnv() {
  XGBoostConfig config;
  if (const char* rank = std::getenv("RANK"); rank != nullptr) {
    config.objective =
        rank[0] == '1' ? XGBoostObjective::kPairwiseRank : XGBoostObjective::kRegression;
  }
  if (const char* rounds = std::getenv("MAX_ROUNDS")) config.max_rounds = std::atoi(rounds);
  if (const char* depth = std::getenv("MAX_DEPTH")) config.max_depth = std::atoi(depth);
  if (const char* depth = std::getenv("PRIOR_MAX_DEPTH")) config.prior_max_depth = std::atoi(depth);
  if (const char* v = std::getenv("ETA")) config.eta = std::atof(v);
  if (const char* v = std::getenv("SUBSAMPLE")) config.subsample = std::atof(v);
  if (const char* v = std::getenv("COLSAMPLE")) config.colsample_bytree = std::atof(v);
  if (const char* v = std::getenv("MIN_CHILD_WEIGHT")) config.min_child_weight = std::atof(v);
  if (const char* v = std::getenv("GAP_POWER")) config.gap_weight_power = std::atof(v);
  if (const char* v = std::getenv("PAIRS_PER_SAMPLE")) config.rank_pairs_per_sample = std::atoi(v);
  if (const char* v = std::getenv("SEED")) config.seed = std::strtoull(v, nullptr, 10);
  return config;
}

// What a search that measures the `share` best-predicted samples would find: the fastest time
// among them over the fastest time of all (1 = it finds the best).
double TopRegret(const std::vector<CostSample>& samples, const std::vector<double>& scores,
                 double share) {
  std::vector<size_t> order(samples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  size_t k = std::max<size_t>(1, static_cast<size_t>(samples.size() * share));
  double best_all = std::numeric_limits<double>::infinity(), best_top = best_all;
  for (size_t i = 0; i < order.size(); ++i) {
    best_all = std::min(best_all, samples[order[i]].seconds);
    if (i < k) best_top = std::min(best_top, samples[order[i]].seconds);
  }
  return best_top / best_all;
}

// The parts of `list` between separators (one empty part for an empty list).
std::vector<std::string> Split(const std::string& list, char separator) {
  std::vector<std::string> parts;
  for (size_t pos = 0; pos <= list.size();) {
    size_t end = std::min(list.find(separator, pos), list.size());
    parts.push_back(list.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

// The comma-separated texts of environment variable `name` (none when unset).
std::vector<std::string> TextList(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::vector<std::string>{} : Split(value, ',');
}

// True when `texts` is empty or `name` contains one of them.
bool NameMatches(const std::string& name, const std::vector<std::string>& texts) {
  return texts.empty() || std::any_of(texts.begin(), texts.end(), [&](const std::string& text) {
           return name.find(text) != std::string::npos;
         });
}

void RunHeldOut(const std::vector<Task>& tasks);

int Main(int argc, char** argv) {
  if (argc < 2) throw UserError("usage: bench_cost_model_heldout DB [DB ...]");
  const std::string norm = std::getenv("NORMALIZE") != nullptr ? std::getenv("NORMALIZE") : "0";
  if (norm != "0" && norm != "1") {
    throw UserError(
        fmt::format("NORMALIZE={}: 0 or 1 (the size shares of NORMALIZE=2 are product "
                    "feature columns now)",
                    norm));
  }
  const bool normalize = norm == "1";
  FeatureFn features = LoweredFeatures();
  std::vector<Task> tasks;
  auto start = std::chrono::steady_clock::now();
  size_t total = 0;
  for (int i = 1; i < argc; ++i) {
    for (Task& t : LoadTasks(argv[i], features)) {
      total += t.samples.size();
      tasks.push_back(std::move(t));
    }
  }
  double load_seconds = SecondsSince(start);
  if (normalize) {
    for (Task& t : tasks) {
      for (CostSample& s : t.samples) NormalizeBySize(&s.features);
    }
  }

  if (tasks.size() < 2) throw UserError("need records of at least two tasks");
  fmt::print(stderr, "{} task(s), {} record(s); replay + features {:.1f} s ({:.2f} ms each)\n",
             tasks.size(), total, load_seconds, load_seconds / total * 1e3);

  // With DIAGNOSE=1: per task, how many records have features no other record has, and how
  // many feature columns vary at all.
  if (const char* diagnose = std::getenv("DIAGNOSE"); diagnose != nullptr && diagnose[0] == '1') {
    for (const Task& t : tasks) {
      std::map<std::vector<float>, int> distinct;
      std::vector<float> lo(FeatureMatrix::kNumFeatures, 1e30f),
          hi(FeatureMatrix::kNumFeatures, -1e30f);
      size_t rows = 0;
      for (const CostSample& s : t.samples) {
        distinct[s.features.data] += 1;
        rows += s.features.rows;
        for (size_t r = 0; r < s.features.rows; ++r) {
          for (size_t c = 0; c < FeatureMatrix::kNumFeatures; ++c) {
            lo[c] = std::min(lo[c], s.features.row(r)[c]);
            hi[c] = std::max(hi[c], s.features.row(r)[c]);
          }
        }
      }
      int varying = 0;
      std::string names;
      for (size_t c = 0; c < FeatureMatrix::kNumFeatures; ++c) {
        if (lo[c] != hi[c]) {
          ++varying;
          names += FeatureNames()[c] + " ";
        }
      }
      std::map<size_t, int> by_rows;
      for (const CostSample& s : t.samples) by_rows[s.features.rows] += 1;
      for (auto [r, n] : by_rows) fmt::print("  {} rows: {} records\n", r, n);
      fmt::print(
          "{}: {} records, {} distinct feature matrices, {:.1f} rows each, {} varying "
          "columns: {}\n",
          t.name, t.samples.size(), distinct.size(), double(rows) / t.samples.size(), varying,
          names);
    }
    return 0;
  }

  // With IN_TASK=1: the accuracy within each task, training on a random 70% of its records and
  // testing on the rest: what the features can tell apart at all.
  if (const char* in_task = std::getenv("IN_TASK"); in_task != nullptr && in_task[0] == '1') {
    std::mt19937_64 rng(5);
    for (Task& t : tasks) {
      std::vector<CostSample> shuffled = t.samples;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      size_t cut = shuffled.size() * 7 / 10;
      std::vector<CostSample> train(shuffled.begin(), shuffled.begin() + cut);
      std::vector<CostSample> test(shuffled.begin() + cut, shuffled.end());
      std::unique_ptr<CostModel> model = MakeXGBoostModel(ConfigFromEnv());
      model->Update(train);
      std::vector<const FeatureMatrix*> rows;
      for (const CostSample& s : test) rows.push_back(&s.features);
      std::vector<double> scores = model->Predict(rows);
      fmt::print("{}\n", nlohmann::json{{"task", t.name},
                                        {"in_task_accuracy", PairwiseRankingAccuracy(test, scores)},
                                        {"beyond_10pct", AccuracyBeyondNoise(test, scores, 0.1)},
                                        {"top_10pct_regret", TopRegret(test, scores, 0.1)},
                                        {"top_5pct_regret", TopRegret(test, scores, 0.05)}}
                             .dump());
    }
    return 0;
  }

  // SWEEP="K=V K=V;K=V;...": the held-out evaluation once per entry, with its settings in the
  // environment (the loaded features are shared).
  const char* sweep = std::getenv("SWEEP");
  for (const std::string& entry : Split(sweep != nullptr ? sweep : "", ';')) {
    // Each setting of the entry, with the value it replaces (restored afterwards).
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    for (const std::string& kv : Split(entry, ' ')) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      std::string key = kv.substr(0, eq);
      const char* before = std::getenv(key.c_str());
      saved.emplace_back(key,
                         before != nullptr ? std::optional<std::string>(before) : std::nullopt);
      setenv(key.c_str(), kv.substr(eq + 1).c_str(), 1);
    }
    if (!entry.empty()) fmt::print("== {}\n", entry);
    RunHeldOut(tasks);
    for (const auto& [key, before] : saved) {
      if (before) {
        setenv(key.c_str(), before->c_str(), 1);
      } else {
        unsetenv(key.c_str());
      }
    }
  }
  return 0;
}

// OWN=K,K,...: what a search of the held-out workload sees: its first K records (in commit order)
// are its own samples, trained on alone and on top of `prior`; each model, and the prior alone,
// ranks the records after the largest K.
nlohmann::json OwnSamples(const CostModel& prior, const std::vector<CostSample>& records,
                          const std::string& own) {
  std::vector<size_t> ks;
  for (const std::string& k : Split(own, ',')) ks.push_back(std::stoul(k));
  size_t max_k = *std::max_element(ks.begin(), ks.end());
  if (max_k + 2 > records.size()) return nullptr;
  std::vector<CostSample> later(records.begin() + static_cast<ptrdiff_t>(max_k), records.end());
  std::vector<const FeatureMatrix*> rows;
  for (const CostSample& s : later) rows.push_back(&s.features);
  std::string path = fmt::format("/tmp/bench_cost_model_prior_{}.model", getpid());
  prior.Save(path);
  std::unique_ptr<CostModel> prior_copy = MakeXGBoostModel(ConfigFromEnv());
  prior_copy->Load(path);
  auto accuracy = [&](CostModel& m) {
    return std::round(PairwiseRankingAccuracy(later, m.Predict(rows)) * 1000) / 1000;
  };
  nlohmann::json out = {{"test_records", later.size()}, {"prior_only", accuracy(*prior_copy)}};
  for (size_t k : ks) {
    std::vector<CostSample> first(records.begin(), records.begin() + static_cast<ptrdiff_t>(k));
    std::unique_ptr<CostModel> alone = MakeXGBoostModel(ConfigFromEnv());
    alone->Update(first);
    std::unique_ptr<CostModel> on_prior = MakeXGBoostModel(ConfigFromEnv());
    on_prior->Load(path);
    on_prior->Update(first);
    out[fmt::format("own_{}", k)] = {{"alone", accuracy(*alone)},
                                     {"on_prior", accuracy(*on_prior)}};
  }
  std::remove(path.c_str());
  return out;
}

// Each score's rank among `scores` (0 = lowest; ties share the mean of their ranks).
std::vector<double> Ranks(const std::vector<double>& scores) {
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  std::vector<double> ranks(scores.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    for (size_t k = i; k < j; ++k) ranks[order[k]] = (i + j - 1) / 2.0;
    i = j;
  }
  return ranks;
}

void RunHeldOut(const std::vector<Task>& tasks) {
  size_t train_per_task = std::getenv("TRAIN_PER_TASK") ? std::atoi(std::getenv("TRAIN_PER_TASK"))
                                                        : std::numeric_limits<size_t>::max();
  // Accuracy over all pairs, and over the pairs whose times differ by more than 2% (about this
  // machine's timing noise), 5% and 10%: records of a tuning run crowd near its best, so many
  // pairs are closer than the noise and have no true order.
  constexpr double kMargins[] = {0.02, 0.05, 0.10};
  double sum = 0, sum_beyond[3] = {0, 0, 0};
  // HELD_OUT=TEXT[,TEXT...]: only the tasks whose name contains one of the texts are held out
  // (all others still train).
  std::vector<std::string> only = TextList("HELD_OUT");
  // TRAIN_ONLY=TEXT[,TEXT...]: only the tasks whose name contains one of the texts train.
  std::vector<std::string> train_only = TextList("TRAIN_ONLY");
  const int seeds = std::getenv("SEEDS") ? std::max(1, std::atoi(std::getenv("SEEDS"))) : 1;
  std::vector<double> seed_sum(static_cast<size_t>(seeds), 0.0);
  double ensemble_sum = 0;
  size_t evaluated = 0;
  for (size_t held = 0; held < tasks.size(); ++held) {
    if (!NameMatches(tasks[held].name, only)) continue;
    ++evaluated;
    std::vector<CostSample> train;
    size_t same_workload = 0;
    for (size_t t = 0; t < tasks.size(); ++t) {
      // The held-out workload does not train, from whichever database.
      if (tasks[t].workload_hash == tasks[held].workload_hash &&
          StructuralEqual(tasks[t].workload, tasks[held].workload)) {
        same_workload += t == held ? 0 : 1;
        continue;
      }
      if (!NameMatches(tasks[t].name, train_only)) continue;
      const std::vector<CostSample>& all = tasks[t].samples;
      size_t n = std::min(train_per_task, all.size());
      for (size_t k = 0; k < n; ++k) train.push_back(all[k * all.size() / n]);
    }
    // Trained as the prior a tuning run makes of other workloads' records: its trees are
    // PRIOR_MAX_DEPTH deep (MAX_DEPTH is the depth of the trees on top of it, OWN=...).
    auto train_start = std::chrono::steady_clock::now();
    std::unique_ptr<CostModel> model = MakeXGBoostModel(ConfigFromEnv());
    model->Pretrain(train);
    double train_seconds = SecondsSince(train_start);
    const std::vector<CostSample>& test = tasks[held].samples;
    std::vector<const FeatureMatrix*> rows;
    for (const CostSample& s : test) rows.push_back(&s.features);
    std::vector<double> scores = model->Predict(rows);
    double accuracy = PairwiseRankingAccuracy(test, scores);
    sum += accuracy;
    seed_sum[0] += accuracy;
    // SEEDS=N: N-1 more models, trained with the seeds after SEED; each one's accuracy is
    // reported (the spread between training seeds) and so is the accuracy of their mean rank.
    nlohmann::json seed_accuracies = nlohmann::json::array();
    if (seeds > 1) {
      std::vector<double> rank_sum = Ranks(scores);
      seed_accuracies.push_back(std::round(accuracy * 1000) / 1000);
      for (int k = 1; k < seeds; ++k) {
        XGBoostConfig config = ConfigFromEnv();
        config.seed += static_cast<uint64_t>(k);
        std::unique_ptr<CostModel> other = MakeXGBoostModel(config);
        other->Pretrain(train);
        std::vector<double> other_scores = other->Predict(rows);
        double other_accuracy = PairwiseRankingAccuracy(test, other_scores);
        seed_sum[k] += other_accuracy;
        seed_accuracies.push_back(std::round(other_accuracy * 1000) / 1000);
        std::vector<double> ranks = Ranks(other_scores);
        for (size_t i = 0; i < ranks.size(); ++i) rank_sum[i] += ranks[i];
      }
      double ensemble = PairwiseRankingAccuracy(test, rank_sum);
      ensemble_sum += ensemble;
      seed_accuracies.push_back({{"mean_rank", std::round(ensemble * 1000) / 1000}});
    }
    std::vector<double> random = MakeRandomModel(held + 1)->Predict(rows);
    nlohmann::json line = {
        {"held_out", tasks[held].name},
        {"test_records", test.size()},
        {"train_records", train.size()},
        {"same_workload_tasks_left_out", same_workload},
        {"accuracy", std::round(accuracy * 1000) / 1000},
        {"random_model", std::round(PairwiseRankingAccuracy(test, random) * 1000) / 1000},
        {"train_seconds", std::round(train_seconds * 10) / 10}};
    if (seeds > 1) line["seeds"] = seed_accuracies;
    for (int m = 0; m < 3; ++m) {
      double beyond = AccuracyBeyondNoise(test, scores, kMargins[m]);
      sum_beyond[m] += beyond;
      line[fmt::format("accuracy_beyond_{}pct", std::lround(kMargins[m] * 100))] =
          std::round(beyond * 1000) / 1000;
    }
    // DUMP=PREFIX: the held-out records' times, scores and traces, one JSON line each, into
    // PREFIX<task index>.jsonl (for a look at what the model gets wrong).
    if (const char* dump = std::getenv("DUMP")) {
      std::ofstream out(fmt::format("{}{}.jsonl", dump, held));
      for (size_t i = 0; i < test.size(); ++i) {
        out << nlohmann::json{{"seconds", test[i].seconds},
                              {"score", scores[i]},
                              {"trace", tasks[held].traces[i]}}
                   .dump()
            << "\n";
      }
    }
    if (const char* retime = std::getenv("RETIME")) {
      line["retime"] = Retime(tasks[held], scores, std::atoi(retime));
    }
    if (const char* own = std::getenv("OWN")) line["own"] = OwnSamples(*model, test, own);
    fmt::print("{}\n", line.dump());
    std::fflush(stdout);  // one line per task as it finishes, also into a file
  }
  if (evaluated == 0) throw UserError("no task matches HELD_OUT");
  double n = static_cast<double>(evaluated);
  nlohmann::json mean = {{"mean_accuracy", std::round(sum / n * 1000) / 1000}};
  for (int m = 0; m < 3; ++m) {
    mean[fmt::format("mean_accuracy_beyond_{}pct", std::lround(kMargins[m] * 100))] =
        std::round(sum_beyond[m] / n * 1000) / 1000;
  }
  if (seeds > 1) {
    nlohmann::json per_seed = nlohmann::json::array();
    for (double s : seed_sum) per_seed.push_back(std::round(s / n * 1000) / 1000);
    mean["mean_accuracy_per_seed"] = per_seed;
    mean["mean_accuracy_mean_rank"] = std::round(ensemble_sum / n * 1000) / 1000;
  }
  fmt::print("{}\n", mean.dump());
  std::fflush(stdout);
}

}  // namespace
}  // namespace tirtune

int main(int argc, char** argv) {
  try {
    return tirtune::Main(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_cost_model_heldout: {}\n", e.what());
    return 1;
  }
}
