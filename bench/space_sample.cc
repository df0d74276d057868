// The CPU design space, measured: (1) the time of one ReplayAndPostprocess — the search's hot
// path — for GEMM 512³ and a ResNet conv2d, with and without the lowering check of VerifyLowers;
// (2) the best of N random samples of the GEMM 256³ space, each compiled in-process, verified
// against the unscheduled function and timed, next to the hand-written schedule of
// bench/common/gemm_tiling.h. Prints one JSON line per result.
//
// usage: bench_space_sample [samples=200] [target] [min_repeat_ms=5]
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "common/gemm_tiling.h"
#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/lower/lower.h"
#include "tirtune/measure/timer.h"
#include "tirtune/measure/verify.h"
#include "tirtune/search/space.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Mean milliseconds of one ReplayAndPostprocess of a fresh sample of `spec`'s spaces.
void TimeReplay(const std::string& spec, const CpuSpaceConfig& config) {
  Workload w = MakeWorkload(spec);
  std::vector<std::shared_ptr<Postproc>> without_verify = DefaultCpuPostprocs();
  without_verify.pop_back();  // VerifyLowers
  const SpaceGenerator full = SpaceGenerator::DefaultCpu(config);
  const SpaceGenerator cheap(DefaultCpuRules(config), without_verify, DefaultCpuMutators(config));
  std::vector<Trace> traces;
  for (const Schedule& space : full.GenerateDesignSpaces(w.func, 1)) {
    traces.push_back(WithoutDecisions(space.trace()));
  }
  const int kReplays = 60;
  for (const auto& [name, gen] :
       {std::pair{"all_postprocs", &full}, std::pair{"without_verify_lowers", &cheap}}) {
    int valid = 0;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kReplays; ++i) {
      valid += gen->ReplayAndPostprocess(w.func, traces[i % traces.size()], i).has_value();
    }
    fmt::print("{}\n", nlohmann::json{{"measure", "replay_and_postprocess"},
                                      {"spec", spec},
                                      {"postprocs", name},
                                      {"design_spaces", traces.size()},
                                      {"valid", valid},
                                      {"replays", kReplays},
                                      {"ms_per_replay", MillisecondsSince(start) / kReplays}}
                           .dump());
  }
}

// Seconds per call of `func` compiled for `target`, after checking it against `expected`.
std::optional<double> CompileVerifyTime(const PrimFunc& func, const Target& target,
                                        const std::vector<NDArray>& expected,
                                        const TimerConfig& timer) {
  std::unique_ptr<Kernel> kernel = JitCompile(Lower(func), target);
  std::vector<NDArray> args = MakeRandomArgs(func, 1);
  kernel->Run(args);
  if (!CompareAll({"A", "B", "C"}, expected, args).ok) return std::nullopt;
  return TimeFunction([&] { kernel->Run(args); }, timer).median;
}

int Main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 200;
  const Target target = argc > 2 ? Target::Parse(argv[2]) : Target::Host();
  TimerConfig timer;
  timer.repeat = 3;
  timer.min_repeat_ms = argc > 3 ? std::atof(argv[3]) : 5;
  const CpuSpaceConfig config = CpuSpaceConfig::For(target);

  // Step 1. The hot path.
  TimeReplay("gemm:512,512,512", config);
  TimeReplay("conv2d:1,14,14,256,256,3,1,1", config);

  // Step 2. Random samples of the GEMM space against the hand-written schedule.
  Workload w = MakeWorkload("gemm:256,256,256");
  std::vector<NDArray> expected = MakeRandomArgs(w.func, 1);
  JitCompile(Lower(w.func), target)->Run(expected);
  const SpaceGenerator gen = SpaceGenerator::DefaultCpu(config);
  std::vector<Trace> traces;
  for (const Schedule& space : gen.GenerateDesignSpaces(w.func, 1)) {
    traces.push_back(WithoutDecisions(space.trace()));
  }
  int valid = 0;
  int wrong = 0;
  double best = 0;
  std::vector<double> space_best(traces.size(), 0);
  std::string best_trace;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < samples; ++i) {
    const size_t space = i % traces.size();
    std::optional<Schedule> sch = gen.ReplayAndPostprocess(w.func, traces[space], 1000 + i);
    if (!sch) continue;
    std::optional<double> seconds = CompileVerifyTime(sch->func(), target, expected, timer);
    if (!seconds) {
      ++wrong;
      continue;
    }
    ++valid;
    double gflops = w.flops / *seconds / 1e9;
    space_best[space] = std::max(space_best[space], gflops);
    if (gflops > best) {
      best = gflops;
      best_trace = sch->trace().ToText();
    }
  }
  double sampling_s = MillisecondsSince(start) / 1e3;
  std::optional<double> hand =
      CompileVerifyTime(bench::ScheduleGemm(w.func, 8, 32), target, expected, timer);
  double hand_gflops = hand ? w.flops / *hand / 1e9 : 0;
  fmt::print("{}\n", nlohmann::json{{"measure", "gemm_space_samples"},
                                    {"spec", w.spec},
                                    {"target", target.str()},
                                    {"samples", samples},
                                    {"valid", valid},
                                    {"wrong_results", wrong},
                                    {"seconds", sampling_s},
                                    {"best_gflops", best},
                                    {"best_gflops_per_space", space_best},
                                    {"handwritten_gflops", hand_gflops},
                                    {"best_over_handwritten", best / hand_gflops}}
                         .dump());
  fmt::print(stderr, "best sample:\n{}", best_trace);
  return wrong == 0 ? 0 : 1;
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
