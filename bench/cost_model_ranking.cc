// How well the XGBoost cost model ranks candidates of a task it never saw. Generates GEMM
// candidates of two tasks (tile sizes, loop orders, parallel / vectorized / unrolled loops and a
// local accumulator, all through schedule primitives), compiles, verifies and times each in this
// process, extracts their features, then trains on one task and reports the pairwise ranking
// accuracy on the other (both ways), next to the random model and an in-task split. Every
// candidate is timed twice: the faster of the two is its time, and how well the second timing
// ranks the first is the noise ceiling no model can beat. Also reports the feature extraction
// time per candidate and the training time for about 1000 samples.
//
//   bench_cost_model_ranking [candidates_per_task=150] [min_repeat_ms=5] [task_a] [task_b]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/printer.h"
#include "tirtune/lower/lower.h"
#include "tirtune/measure/timer.h"
#include "tirtune/measure/verify.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/search/cost_model.h"
#include "tirtune/search/feature.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One point of the GEMM schedule space the candidates come from.
struct GemmChoice {
  int64_t tile_i, tile_j;
  // Loop orders over (i0, j0, k, i1, j1), see ApplyChoice.
  int order;
  bool parallel, vectorize, unroll, cache_write;
};

// Schedules gemm block "C" as `c` says; steps that do not apply to the order are skipped.
PrimFunc ApplyChoice(const PrimFunc& func, const GemmChoice& c) {
  Schedule sch(func);
  BlockRV block = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(block);
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, c.tile_i});
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, c.tile_j});
  LoopRV k = loops[2];
  const std::vector<std::vector<LoopRV>> orders = {
      {i[0], j[0], k, i[1], j[1]}, {j[0], i[0], k, i[1], j[1]}, {i[0], j[0], i[1], k, j[1]},
      {i[0], j[0], i[1], j[1], k}, {i[0], k, j[0], i[1], j[1]}, {i[0], i[1], j[0], k, j[1]}};
  const std::vector<LoopRV>& order = orders[c.order];
  sch.Reorder(order);
  auto attempt = [&](auto&& step) {
    try {
      step();
    } catch (const ScheduleError&) {
    }
  };
  // A local accumulator written back after the reduction, when k is outside the tile.
  if (c.cache_write && (c.order == 0 || c.order == 1)) {
    attempt([&] {
      BlockRV write_back = sch.CacheWrite(block, 0, StorageScope::kLocal);
      sch.ReverseComputeAt(write_back, order[1]);
      sch.DecomposeReduction(block, k);
    });
  }
  if (c.parallel) attempt([&] { sch.Parallel(order[0]); });
  if (c.unroll) attempt([&] { sch.Unroll(i[1]); });
  if (c.vectorize) attempt([&] { sch.Vectorize(j[1]); });
  return sch.func();
}

struct MeasuredTask {
  std::vector<CostSample> samples;
  // Pairwise accuracy of the second timing as a ranking of the first.
  double timing_agreement = 0;
  double feature_ms_per_candidate = 0;
};

// Distinct candidates of one task, measured.
MeasuredTask MeasureTask(const std::string& spec, size_t count, double min_repeat_ms,
                         uint64_t seed) {
  Workload w = MakeWorkload(spec);
  Target target = Target::Host();
  std::mt19937_64 rng(seed);
  auto pick = [&](const std::vector<int64_t>& values) {
    return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
  };
  auto coin = [&] { return std::bernoulli_distribution(0.5)(rng); };

  // Step 1. Sample distinct lowered candidates.
  std::vector<PrimFunc> lowered;
  std::set<std::string> seen;
  for (size_t attempt = 0; lowered.size() < count && attempt < 50 * count; ++attempt) {
    GemmChoice c{pick({1, 2, 4, 8, 16}),
                 pick({1, 4, 8, 16, 32, 64}),
                 static_cast<int>(pick({0, 1, 2, 3, 4, 5})),
                 coin(),
                 coin(),
                 coin(),
                 coin()};
    PrimFunc f = Lower(ApplyChoice(w.func, c));
    if (seen.insert(Print(f)).second) lowered.push_back(f);
  }

  // Step 2. Features, timed serially per candidate.
  MeasuredTask out;
  auto start = std::chrono::steady_clock::now();
  std::vector<FeatureMatrix> features;
  for (const PrimFunc& f : lowered) features.push_back(ExtractFeatures(f));
  out.feature_ms_per_candidate = SecondsSince(start) * 1e3 / static_cast<double>(lowered.size());

  // Step 3. Compile, verify against the unscheduled function, time.
  std::unique_ptr<Kernel> reference = JitCompile(Lower(w.func), target);
  std::vector<NDArray> expected = MakeRandomArgs(w.func, 1);
  reference->Run(expected);
  std::vector<NDArray> args = MakeRandomArgs(w.func, 1);
  TimerConfig timer;
  timer.repeat = 3;
  timer.min_repeat_ms = min_repeat_ms;
  std::vector<std::unique_ptr<Kernel>> kernels;
  for (size_t i = 0; i < lowered.size(); ++i) {
    std::unique_ptr<Kernel> kernel = JitCompile(lowered[i], target);
    kernel->Run(args);
    VerifyResult v = CompareAll({"A", "B", "C"}, expected, args);
    if (!v.ok) {
      fmt::print(stderr, "{}: candidate {} is wrong ({}), skipped\n", spec, i, v.message);
      continue;
    }
    TimingResult t = TimeFunction([&] { kernel->Run(args); }, timer);
    out.samples.push_back({spec, std::move(features[i]), t.median});
    kernels.push_back(std::move(kernel));
  }

  // Step 4. A second timing of every candidate, after all the first ones.
  std::vector<double> second_scores;
  std::vector<double> second_seconds;
  for (const std::unique_ptr<Kernel>& kernel : kernels) {
    second_seconds.push_back(TimeFunction([&] { kernel->Run(args); }, timer).median);
    second_scores.push_back(-second_seconds.back());
  }
  out.timing_agreement = PairwiseRankingAccuracy(out.samples, second_scores);
  for (size_t i = 0; i < out.samples.size(); ++i) {
    out.samples[i].seconds = std::min(out.samples[i].seconds, second_seconds[i]);
  }
  return out;
}

std::vector<const FeatureMatrix*> Features(const std::vector<CostSample>& samples) {
  std::vector<const FeatureMatrix*> out;
  for (const CostSample& s : samples) out.push_back(&s.features);
  return out;
}

// Trains `model` on `train` and returns its accuracy on `test`.
double TrainAndRank(CostModel& model, const std::vector<CostSample>& train,
                    const std::vector<CostSample>& test) {
  model.Update(train);
  return PairwiseRankingAccuracy(test, model.Predict(Features(test)));
}

int Main(int argc, char** argv) {
  size_t count = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 150;
  double min_repeat_ms = argc > 2 ? std::atof(argv[2]) : 5;
  std::string task_a = argc > 3 ? argv[3] : "gemm:128,128,128";
  std::string task_b = argc > 4 ? argv[4] : "gemm:64,256,128";
  XGBoostConfig config;
  config.nthread = 1;
  XGBoostConfig no_gamma = config;
  no_gamma.gamma = 0;

  // Step 1. Measure both tasks.
  MeasuredTask a = MeasureTask(task_a, count, min_repeat_ms, 1);
  MeasuredTask b = MeasureTask(task_b, count, min_repeat_ms, 2);
  nlohmann::json report = {{"task_a", task_a}, {"task_b", task_b}};
  for (const MeasuredTask* t : {&a, &b}) {
    auto [fastest, slowest] = std::minmax_element(
        t->samples.begin(), t->samples.end(),
        [](const CostSample& x, const CostSample& y) { return x.seconds < y.seconds; });
    fmt::print(
        "{}: {} candidates, slowest/fastest {:.0f}x, timing agreement {:.3f}, features {:.3f} "
        "ms/candidate\n",
        t->samples.front().task, t->samples.size(), slowest->seconds / fastest->seconds,
        t->timing_agreement, t->feature_ms_per_candidate);
    report["candidates"].push_back(t->samples.size());
    report["timing_agreement"].push_back(t->timing_agreement);
    report["feature_ms_per_candidate"].push_back(t->feature_ms_per_candidate);
  }

  // Step 2. Held-out task, both ways, with MetaSchedule's parameters and with gamma 0; the random
  // model as the baseline; an in-task split (even candidates of both tasks -> odd ones).
  std::vector<CostSample> even, odd;
  for (const MeasuredTask* t : {&a, &b}) {
    for (size_t i = 0; i < t->samples.size(); ++i) {
      (i % 2 == 0 ? even : odd).push_back(t->samples[i]);
    }
  }
  for (const auto& [name, c] : {std::pair{"default", config}, std::pair{"gamma0", no_gamma}}) {
    double ab = TrainAndRank(*MakeXGBoostModel(c), a.samples, b.samples);
    double ba = TrainAndRank(*MakeXGBoostModel(c), b.samples, a.samples);
    double split = TrainAndRank(*MakeXGBoostModel(c), even, odd);
    fmt::print("xgboost ({}): {} -> {} {:.3f}, {} -> {} {:.3f}, in-task split {:.3f}\n", name,
               task_a, task_b, ab, task_b, task_a, ba, split);
    report[name] = {{"a_to_b", ab}, {"b_to_a", ba}, {"in_task_split", split}};
  }
  double random = TrainAndRank(*MakeRandomModel(), a.samples, b.samples);
  fmt::print("random model: {} -> {} {:.3f}\n", task_a, task_b, random);
  report["random_a_to_b"] = random;

  // Step 3. Training time for about 1000 samples: the measured ones repeated, each copy under a
  // task name of its own so it is normalized on its own.
  std::vector<CostSample> many;
  for (int copy = 0; many.size() < 1000; ++copy) {
    for (const MeasuredTask* t : {&a, &b}) {
      for (CostSample s : t->samples) {
        s.task += fmt::format("#{}", copy);
        many.push_back(std::move(s));
      }
    }
  }
  size_t rows = 0;
  for (const CostSample& s : many) rows += s.features.rows;
  for (int nthread : {1, 2}) {
    XGBoostConfig c = config;
    c.nthread = nthread;
    auto start = std::chrono::steady_clock::now();
    MakeXGBoostModel(c)->Update(many);
    double seconds = SecondsSince(start);
    fmt::print("training on {} samples ({} feature rows), nthread {}: {:.2f} s\n", many.size(),
               rows, nthread, seconds);
    report["train_seconds_" + std::to_string(many.size()) + "_nthread" + std::to_string(nthread)] =
        seconds;
  }
  fmt::print("{}\n", report.dump());
  return 0;
}

}  // namespace
}  // namespace tirtune

int main(int argc, char** argv) {
  try {
    return tirtune::Main(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
