// Whether a kernel's time in a runner process depends on what that process measured just before
// it: the re-timing of close finalists (search/tune/retime_finalists.cc) measures a library's
// kernel and tuned ones in turns in new runner processes, and the library (oneDNN, on OpenMP's
// threads) and tuned kernels (on tirtune's thread pool) bring different threads to the cores.
// Each round starts new runner processes and measures one pair, with the tuner's timer
// (TuningTimerConfig), rotating through the pairs:
//   [T, T]  [L, T]  [T, L]  [L, L]
// and reports the median of each position: T after T against T after L shows what the library's
// threads cost a tuned kernel measured right after it (and likewise for L), T first against T
// second what a process's first measurement costs.
// Usage: bench_retime_mix WORKLOAD TRACE.json [rounds=8] [target]
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "tirtune/measure/builder.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/runner_pool.h"
#include "tirtune/model/model.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"
#include "traced_kernel.h"

namespace tirtune {
namespace {

int Main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: bench_retime_mix WORKLOAD TRACE.json [rounds] [target]\n");
    return 2;
  }
  Workload w = MakeWorkload(argv[1]);
  Schedule sch = ScheduledByTraceFile(w, argv[2]);
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 8;
  const Target target = Target::Parse(argc > 4 ? argv[4] : "llvm -num-cores=2");

  BuildResult built = Builder().BuildOne(sch.func(), target);
  if (!built.ok()) {
    fmt::print(stderr, "build failed: {}\n", built.message);
    return 1;
  }
  const MeasureCandidate tuned = CandidateOf(w, built, target);
  MeasureCandidate library = tuned;
  library.object.clear();
  library.func_name.clear();
  library.library = model::WorkloadLibrary(w.spec, model::Offload::kMeasured, target);
  if (library.library.empty()) {
    fmt::print(stderr, "{}: no library composite on {}\n", w.spec, target.str());
    return 1;
  }

  RunnerConfig config;
  config.timer = TuningTimerConfig();
  RunnerPool pool(config);
  // samples["L after T"]: the library's medians measured second, after the tuned kernel.
  std::map<std::string, std::vector<double>> samples;
  const std::vector<std::string> pairs = {"TT", "LT", "TL", "LL"};
  for (int r = 0; r < rounds * static_cast<int>(pairs.size()); ++r) {
    const std::string& pair = pairs[static_cast<size_t>(r) % pairs.size()];
    pool.StartAfresh();
    std::vector<MeasureCandidate> candidates;
    for (char c : pair) candidates.push_back(c == 'T' ? tuned : library);
    std::vector<MeasureResult> results = pool.Measure(candidates);
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].ok()) {
        fmt::print(stderr, "{}: {}\n", pair, results[i].message);
        return 1;
      }
      std::string key =
          i == 0 ? fmt::format("{} first", pair[0]) : fmt::format("{} after {}", pair[1], pair[0]);
      samples[key].push_back(results[i].median * 1e3);
    }
  }
  nlohmann::json out = {{"workload", w.spec}, {"rounds", rounds}};
  for (const auto& [key, ms] : samples) {
    fmt::print("{:>10}: median {:.4f} ms, min {:.4f}, max {:.4f} ({} processes)\n", key, Median(ms),
               *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
               ms.size());
    out[key] = Median(ms);
  }
  fmt::print("{}\n", out.dump());
  return 0;
}

}  // namespace
}  // namespace tirtune

int main(int argc, char** argv) { return tirtune::Main(argc, argv); }
