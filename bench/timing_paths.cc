// Times one compiled kernel along the paths tirtune times kernels, alternating, to show whether
// a kernel's time depends on the path rather than on its code:
//   runner:  the object in a `tirtune-runner` worker (how tuning measures candidates);
//   loaded:  the same object bytes linked into this process with LoadObject;
//   jit:     the scheduled function compiled again in this process with JitCompile (how
//            `tirtune time` measures it).
// All three use the same timer settings (the default TimerConfig unless TUNING=1).
// Usage: bench_timing_paths WORKLOAD TRACE.json [rounds=5] [target]
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/lower/lower.h"
#include "tirtune/measure/builder.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/runner_pool.h"
#include "tirtune/measure/timer.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"
#include "traced_kernel.h"

namespace tirtune {
namespace {

int Main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: bench_timing_paths WORKLOAD TRACE.json [rounds] [target]\n");
    return 2;
  }
  Workload w = MakeWorkload(argv[1]);
  Schedule sch = ScheduledByTraceFile(w, argv[2]);
  int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  Target target = Target::Parse(argc > 4 ? argv[4] : "llvm -num-cores=2");
  TimerConfig timer = std::getenv("TUNING") ? TuningTimerConfig() : TimerConfig{};

  BuildResult built = Builder().BuildOne(sch.func(), target);
  if (!built.ok()) {
    fmt::print(stderr, "build failed: {}\n", built.message);
    return 1;
  }
  const MeasureCandidate cand = CandidateOf(w, built, target);

  RunnerConfig runner_config;
  runner_config.timer = timer;
  RunnerPool pool(runner_config);
  std::unique_ptr<Kernel> loaded = LoadObject(built.object, built.func_name, target);
  std::unique_ptr<Kernel> jit = JitCompile(Lower(sch.func()), target);
  std::vector<NDArray> args;
  for (size_t i = 0; i < cand.args.size(); ++i) {
    NDArray a = NDArray::Empty(cand.args[i].shape, cand.args[i].dtype);
    RandomRange range = RandomRangeFor(cand.args[i].dtype);
    a.FillRandom(cand.seed + i, range.lo, range.hi);
    args.push_back(std::move(a));
  }
  std::vector<void*> raw;
  for (NDArray& a : args) raw.push_back(a.raw());

  std::vector<double> runner_ms, loaded_ms, jit_ms;
  for (int r = 0; r < rounds; ++r) {
    MeasureResult m = pool.MeasureOne(cand);
    if (!m.ok()) {
      fmt::print(stderr, "runner: {}\n", m.message);
      return 1;
    }
    runner_ms.push_back(m.median * 1e3);
    loaded_ms.push_back(TimeFunction([&] { loaded->RunRaw(raw.data()); }, timer).median * 1e3);
    jit_ms.push_back(TimeFunction([&] { jit->RunRaw(raw.data()); }, timer).median * 1e3);
    fmt::print("round {}: runner {:.4f} ms, loaded {:.4f} ms, jit {:.4f} ms\n", r, runner_ms.back(),
               loaded_ms.back(), jit_ms.back());
  }
  fmt::print("{}\n", nlohmann::json{{"workload", w.spec},
                                    {"runner_ms", Median(runner_ms)},
                                    {"loaded_ms", Median(loaded_ms)},
                                    {"jit_ms", Median(jit_ms)}}
                         .dump());
  return 0;
}

}  // namespace
}  // namespace tirtune

int main(int argc, char** argv) { return tirtune::Main(argc, argv); }
