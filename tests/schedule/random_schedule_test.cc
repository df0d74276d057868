// Property test: for every workload of the operator library, random sequences of schedule
// primitives with random arguments either raise a ScheduleError (leaving the schedule as it was)
// or give a function that computes the same numbers as the original under the interpreter, and
// whose trace replays to the same function. A failure prints the trace that reproduces it.
#include <fmt/format.h>

#include "random_step.h"
#include "schedule_check.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

constexpr int kSchedulesPerWorkload = 200;
constexpr int kMaxSteps = 8;

class RandomSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomSchedules, KeepTheNumbers) {
  const WorkloadDef* def = FindWorkload(GetParam());
  ASSERT_NE(def, nullptr);
  PrimFunc original = def->build(def->small_shape);
  std::vector<NDArray> want = InterpretWithRandomInputs(original, /*seed=*/17);
  int transformed = 0;
  for (int trial = 0; trial < kSchedulesPerWorkload; ++trial) {
    Schedule sch(original, /*seed=*/trial);
    RandomEngine rng(1000 + trial);
    int steps = static_cast<int>(rng.UniformInt(1, kMaxSteps + 1));
    for (int s = 0; s < steps; ++s) {
      PrimFunc before = sch.func();
      try {
        RandomStep(sch, rng);
      } catch (const ScheduleError& e) {
        ASSERT_TRUE(sch.func().same_as(before))
            << "a failed " << e.Kind() << " changed the function; trace:\n"
            << sch.trace().ToText();
      }
    }
    if (!sch.func().same_as(original)) ++transformed;
    std::string context = fmt::format("workload {} trial {}; trace:\n{}\nfunction:\n{}", GetParam(),
                                      trial, sch.trace().ToText(), Print(sch.func()));
    for (const std::string& problem : VerifyWellFormed(sch.func())) {
      ADD_FAILURE() << "not well formed: " << problem << "\n" << context;
    }
    std::vector<NDArray> got;
    try {
      got = InterpretWithRandomInputs(sch.func(), 17);
    } catch (const InterpError& e) {
      FAIL() << "interpreter: " << e.what() << "\n" << context;
    }
    for (size_t p = 0; p < want.size(); ++p) {
      for (int64_t i = 0; i < want[p].size(); ++i) {
        double a = want[p].GetDouble(i), b = got[p].GetDouble(i);
        if (std::isnan(a) && std::isnan(b)) continue;  // e.g. sqrt of a negative random variance
        ASSERT_LE(std::fabs(a - b), 1e-4 * (1 + std::fabs(a)))
            << original->params[p]->name << "[" << i << "]: " << a << " vs " << b << "\n"
            << context;
      }
    }
    Schedule replay(original, trial);
    Trace::FromJson(nlohmann::json::parse(sch.trace().ToJson().dump())).ApplyTo(replay);
    std::optional<std::string> diff = StructuralDiff(replay.func(), sch.func());
    ASSERT_FALSE(diff.has_value()) << "replay differs: " << *diff << "\nreplayed:\n"
                                   << Print(replay.func()) << context;
  }
  // The property is vacuous if nothing ever succeeds.
  EXPECT_GT(transformed, kSchedulesPerWorkload / 4) << GetParam();
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) names.push_back(def.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, RandomSchedules, ::testing::ValuesIn(WorkloadNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tirtune
