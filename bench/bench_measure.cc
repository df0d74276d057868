// Measurement benchmarks (docs/BENCHMARKS.md, "Measurement"):
//   throughput: GEMM 256³ candidates (the hand-written schedule with varied register tiles)
//     built on the TBB arena and verified and timed in a tirtune-runner worker, as the tuner does,
//     in batches; prints measured candidates per second and where the time went.
//   stability: one ~1 ms kernel (GEMM 512³, the same schedule) measured again and again through
//     the runner, with the tuning timer and with the default (final-number) timer; prints the
//     coefficient of variation of its medians.
// Usage: bench_measure [candidates=128] [repeats=20] [target]
#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/gemm_tiling.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

double MeanOf(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double CvOf(const std::vector<double>& v) {
  double mean = MeanOf(v), sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size())) / mean;
}

RunnerConfig TuningRunner() {
  RunnerConfig config;
  config.num_workers = 1;
  config.timer = TuningTimerConfig();
  return config;
}

nlohmann::json Throughput(int count, const Target& target) {
  Workload w = MakeWorkload("gemm:256,256,256");
  const int64_t tiles_i[] = {1, 2, 4, 8, 16};
  const int64_t tiles_j[] = {8, 16, 32, 64};
  std::vector<PrimFunc> candidates;
  for (int n = 0; n < count; ++n) {
    candidates.push_back(bench::ScheduleGemm(w.func, tiles_i[n % 5], tiles_j[(n / 5) % 4]));
  }
  auto start = std::chrono::steady_clock::now();
  MeasureTask task = MakeMeasureTask(w.func, target);
  double reference_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BuilderConfig builder;
  builder.num_jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Measurer measurer(builder, TuningRunner());
  int ok = 0;
  double best = 1e30;
  start = std::chrono::steady_clock::now();
  constexpr size_t kBatch = 32;  // what the evolutionary search hands over per round
  for (size_t begin = 0; begin < candidates.size(); begin += kBatch) {
    std::vector<PrimFunc> batch(candidates.begin() + begin,
                                candidates.begin() + std::min(candidates.size(), begin + kBatch));
    for (const MeasureResult& r : measurer.Measure(task, batch)) {
      if (!r.ok()) {
        fmt::print(stderr, "candidate failed: {}: {}\n", MeasureStatusName(r.status), r.message);
        continue;
      }
      ++ok;
      best = std::min(best, r.median);
    }
  }
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"bench", "measure_throughput"},
          {"workload", w.spec},
          {"target", target.str()},
          {"candidates", count},
          {"ok", ok},
          {"seconds", total},
          {"candidates_per_second", count / total},
          {"build_seconds", measurer.total_times().build},
          {"run_seconds", measurer.total_times().run},
          {"reference_seconds", reference_s},
          {"builder_jobs", builder.num_jobs},
          {"best_gflops", w.flops / best / 1e9}};
}

nlohmann::json Stability(int repeats, const Target& target, const char* timer_name,
                         const TimerConfig& timer) {
  Workload w = MakeWorkload("gemm:512,512,512");
  MeasureTask task = MakeMeasureTask(w.func, target);
  RunnerConfig runner;
  runner.timer = timer;
  Measurer measurer(BuilderConfig{}, runner);
  PrimFunc kernel = bench::ScheduleGemm(w.func, 8, 32);
  std::vector<double> medians, inner_cvs;
  for (int r = 0; r < repeats; ++r) {
    MeasureResult m = measurer.Measure(task, {kernel}).front();
    if (!m.ok()) throw UserError(std::string("the kernel failed: ") + m.message);
    medians.push_back(m.median);
    inner_cvs.push_back(CvOf(m.seconds));
  }
  return {{"bench", "measure_stability"},
          {"workload", w.spec},
          {"target", target.str()},
          {"timer", timer_name},
          {"timer_repeat", timer.repeat},
          {"timer_min_repeat_ms", timer.min_repeat_ms},
          {"measurements", repeats},
          {"mean_ms", MeanOf(medians) * 1e3},
          {"cv_of_medians", CvOf(medians)},
          {"mean_cv_within_measurement", MeanOf(inner_cvs)},
          {"min_ms", *std::min_element(medians.begin(), medians.end()) * 1e3},
          {"max_ms", *std::max_element(medians.begin(), medians.end()) * 1e3},
          {"medians_ms", [&] {
             std::vector<double> ms;
             for (double m : medians) ms.push_back(m * 1e3);
             return ms;
           }()}};
}

int Main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 128;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  Target target = argc > 3 ? Target::Parse(argv[3]) : Target::Host();
  if (count < 1 || repeats < 2) {
    fmt::print(stderr, "usage: {} [candidates>=1] [repeats>=2] [target]\n", argv[0]);
    return 2;
  }
  fmt::print("{}\n", Throughput(count, target).dump());
  fmt::print("{}\n", Stability(repeats, target, "tuning", TuningTimerConfig()).dump());
  fmt::print("{}\n", Stability(repeats, target, "default", TimerConfig{}).dump());
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
