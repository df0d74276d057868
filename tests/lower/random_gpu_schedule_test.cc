// Property test: for every workload of the operator library, random GPU schedules (random
// inlining, splits, fusions, reorders, shared and local cache stages, then every nest bound to
// blocks and threads) are refused by a ScheduleError, by LowerGpu (a schedule a GPU cannot run)
// or by the executor (a race on shared memory), or give the interpreter's numbers when every
// block's threads run phase by phase. A wrong number, or an error the interpreter raises (an
// access out of bounds), fails with the trace.
#include <fmt/format.h>

#include "../common/gpu_schedules.h"
#include "gpu_check.h"
#include "lower_check.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;
using gpu_schedules::F;
using gpu_schedules::kInfer;

constexpr int kSchedulesPerWorkload = 50;

class RandomGpuSchedule : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomGpuSchedule, IsRefusedOrKeepsTheNumbers) {
  const WorkloadDef* def = FindWorkload(GetParam());
  ASSERT_NE(def, nullptr);
  PrimFunc original = def->build(def->small_shape);
  int accepted = 0, refused = 0, races = 0;
  for (int trial = 0; trial < kSchedulesPerWorkload; ++trial) {
    Schedule sch = gpu_schedules::RandomGpuSchedule(original, trial);
    std::string context = fmt::format("workload {} trial {}; trace:\n{}\nfunction:\n{}", GetParam(),
                                      trial, sch.trace().ToText(), Print(sch.func()));
    GpuModule module;
    try {
      module = LowerGpu(sch.func(), GpuLimits());
    } catch (const UserError&) {
      ++refused;
      continue;
    } catch (const std::exception& e) {
      FAIL() << "lowering threw: " << e.what() << "\n" << context;
    }
    std::string problem;
    try {
      std::vector<NDArray> want = InterpretWithRandomInputs(original, 7);
      std::vector<NDArray> got = ExecuteWithRandomInputs(module, 7);
      for (size_t p = 0; p < want.size() && problem.empty(); ++p) {
        for (int64_t i = 0; i < want[p].size(); ++i) {
          double a = want[p].GetDouble(i), b = got[p].GetDouble(i);
          if (std::isnan(a) && std::isnan(b)) continue;
          if (!(std::fabs(a - b) <= 1e-4 * (1 + std::fabs(a)))) {
            problem = fmt::format("parameter {} element {}: {} vs {}", original->params[p]->name, i,
                                  a, b);
            break;
          }
        }
      }
    } catch (const GpuRaceError&) {
      ++races;
      continue;
    } catch (const InterpError& e) {
      problem = std::string("executor: ") + e.what();
    }
    ASSERT_EQ(problem, "") << context << "\n" << PrintGpuModule(module);
    ++accepted;
  }
  RecordProperty("accepted", accepted);
  RecordProperty("refused", refused);
  RecordProperty("races", races);
  EXPECT_GT(accepted, 0) << "refused " << refused << ", races " << races;
}

// Cross-thread reductions: in every workload, each reduction block (in turn) gets its spatial
// loops fused onto blockIdx.x and its innermost reduction loop split into a threadIdx.x loop of
// a divisor of its extent up to 64 threads and a serial loop, in a random order, the other
// reduction loops serial outside; the other blocks are bound as in RandomGpuSchedule. Lowering
// refuses the schedule (UserError) or the executor gives the interpreter's numbers.
TEST_P(RandomGpuSchedule, CrossThreadReductionsKeepTheNumbers) {
  const WorkloadDef* def = FindWorkload(GetParam());
  ASSERT_NE(def, nullptr);
  PrimFunc original = def->build(def->small_shape);
  RandomEngine rng(1234);
  int lowered = 0;
  for (const std::string& name : gpu_schedules::BlockNames(Schedule(original))) {
    for (int trial = 0; trial < 6; ++trial) {
      Schedule sch(original);
      BlockRV block = sch.GetBlock(name);
      const BlockRealizeNode* realize = sch.Get(block);
      std::vector<LoopRV> loops = sch.GetLoops(block);
      // Loops feeding a reduction iterator.
      std::vector<bool> reduces(loops.size(), false);
      for (size_t l = 0; l < loops.size(); ++l) {
        const VarNode* v = sch.Get(loops[l])->loop_var.get();
        for (size_t i = 0; i < realize->iter_values.size(); ++i) {
          if (realize->block->iter_vars[i].kind == IterKind::kReduce &&
              UsesVar(realize->iter_values[i], [&](const VarNode* u) { return u == v; })) {
            reduces[l] = true;
          }
        }
      }
      if (loops.empty() || !reduces.back()) break;
      size_t spatial = 0;
      while (spatial < loops.size() && !reduces[spatial]) ++spatial;
      // A divisor of the innermost reduction loop's extent up to 64 (a power of two or not).
      std::vector<int64_t> divisors;
      const int64_t* extent = AsConstInt(sch.Get(loops.back())->extent);
      for (int64_t d = 1; extent != nullptr && d <= std::min<int64_t>(*extent, 64); ++d) {
        if (*extent % d == 0) divisors.push_back(d);
      }
      if (divisors.empty()) break;
      int64_t threads =
          divisors[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(divisors.size())))];
      std::string context;
      try {
        if (spatial > 0) {
          LoopRV outer = sch.Fuse(std::vector<LoopRV>(loops.begin(), loops.begin() + spatial));
          sch.Bind(outer, "blockIdx.x");
        }
        std::vector<LoopRV> k = sch.Split(loops.back(), {kInfer, F(threads)});
        if (rng.UniformInt(0, 2) == 0) sch.Reorder({k[1], k[0]});
        sch.Bind(k[1], "threadIdx.x");
      } catch (const ScheduleError&) {
        continue;
      }
      for (const std::string& other : gpu_schedules::BlockNames(sch)) {
        std::vector<LoopRV> ol = sch.GetLoops(sch.GetBlock(other));
        if (ol.empty() || sch.Get(ol[0])->for_kind == ForKind::kThreadBinding) continue;
        try {
          std::vector<LoopRV> parts = sch.Split(ol[0], {kInfer, F(threads)});
          sch.Bind(parts[0], "blockIdx.x");
          sch.Bind(parts[1], "threadIdx.x");
        } catch (const ScheduleError&) {
        }
      }
      context = fmt::format("workload {} block {} threads {}; trace:\n{}", GetParam(), name,
                            threads, sch.trace().ToText());
      GpuModule module;
      try {
        module = LowerGpu(sch.func(), GpuLimits());
      } catch (const UserError&) {
        continue;
      }
      ++lowered;
      // A race or a warp divergence is a failure here too: the lowering must never make one.
      ASSERT_EQ(CompareWithInterpreter(original, module), "")
          << context << "\n" << PrintGpuModule(module);
    }
  }
  RecordProperty("lowered", lowered);
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) names.push_back(def.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, RandomGpuSchedule, ::testing::ValuesIn(WorkloadNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tirtune
