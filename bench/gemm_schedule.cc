// GEMM with a hand-written schedule: the ceiling the search should be able to reach. Builds
// gemm:M,N,K, schedules it (parallel column panels, an 8x32 register tile written back through a
// local cache, the reduction init hoisted out, rows unrolled and columns vectorized), compiles it
// for the target, verifies it against the unscheduled function compiled by the same backend, and
// prints one JSON line with the timing.
#include <fmt/core.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/lower/lower.h"
#include "tirtune/measure/timer.h"
#include "tirtune/measure/verify.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

// The schedule of bench/README: j0 (parallel) / i0 / k / i1 (unrolled 8) / j1 (vectorized 32).
PrimFunc ScheduleGemm(const PrimFunc& func, int64_t tile_i, int64_t tile_j) {
  Schedule sch(func);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, tile_i});
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, tile_j});
  sch.Reorder({j[0], i[0], loops[2], i[1], j[1]});
  BlockRV write_back = sch.CacheWrite(c, 0, StorageScope::kLocal);
  sch.ReverseComputeAt(write_back, i[0]);
  sch.DecomposeReduction(c, loops[2]);
  sch.Parallel(j[0]);
  sch.Unroll(i[1]);
  sch.Vectorize(j[1]);
  return sch.func();
}

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
  std::unique_ptr<Kernel> kernel = JitCompile(Lower(ScheduleGemm(w.func, 8, 32)), target);
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
