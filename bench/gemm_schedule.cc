// GEMM with a hand-written schedule: the ceiling the search should be able to reach. Builds
// gemm:M,N,K, schedules it (parallel column panels, an 8x32 register tile written back through a
// local cache, the reduction init hoisted out, rows unrolled and columns vectorized), compiles it
// for the target, verifies it against the unscheduled function compiled by the same backend, and
// prints one JSON line with the timing.
#include <fmt/core.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "common/gemm_tiling.h"
#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/lower/lower.h"
#include "tirtune/measure/timer.h"
#include "tirtune/measure/verify.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

int Main(int argc, char** argv) {
  if (argc < 4) {
    fmt::print(stderr, "usage: {} M N K [target] [min_repeat_ms]\n", argv[0]);
    return 2;
  }
  std::string spec = fmt::format("gemm:{},{},{}", argv[1], argv[2], argv[3]);
  Target target = argc > 4 ? Target::Parse(argv[4]) : Target::Host();
  TimerConfig config;
  config.repeat = 7;
  if (argc > 5) config.min_repeat_ms = std::atof(argv[5]);

  Workload w = MakeWorkload(spec);
  std::unique_ptr<Kernel> kernel = JitCompile(Lower(bench::ScheduleGemm(w.func, 8, 32)), target);
  std::unique_ptr<Kernel> reference = JitCompile(Lower(w.func), target);
  std::vector<NDArray> args = MakeRandomArgs(w.func, 1), expected = MakeRandomArgs(w.func, 1);
  kernel->Run(args);
  reference->Run(expected);
  VerifyResult v = CompareAll({"A", "B", "C"}, expected, args);
  if (!v.ok) {
    fmt::print(stderr, "{}: wrong result: {}\n", spec, v.message);
    return 1;
  }
  TimingResult t = TimeFunction([&] { kernel->Run(args); }, config);
  fmt::print("{}\n", nlohmann::json{{"impl", "tirtune_handwritten"},
                                    {"spec", spec},
                                    {"target", target.str()},
                                    {"median_seconds", t.median},
                                    {"cv", t.cv},
                                    {"gflops", w.flops / t.median / 1e9}}
                         .dump());
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
