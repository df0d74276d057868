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
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

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
