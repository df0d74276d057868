// Every workload of the operator library, under each of the typical schedules of
// tests/common/workload_schedules.h and under random schedules, lowered and compiled for the
// host, computes what the interpreter computes on the unscheduled block-form function.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../common/workload_schedules.h"
#include "../schedule/random_step.h"
#include "differential.h"
#include "tirtune/lower/lower.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::test_codegen {
namespace {

// Compiles `scheduled` and compares its outputs with the interpreter on `original`.
void ExpectCompiledMatches(const PrimFunc& original, const PrimFunc& scheduled,
                           const std::string& context) {
  PrimFunc lowered = Lower(scheduled);
  std::unique_ptr<Kernel> kernel;
  try {
    kernel = JitCompile(lowered, Target::Host());
  } catch (const std::exception& e) {
    FAIL() << "compile failed: " << e.what() << "\n" << context << "\nlowered:\n" << Print(lowered);
  }
  std::vector<NDArray> expected = RandomArgs(original, 11);
  std::vector<NDArray> actual = CopyAll(expected);
  Interpret(original, expected);
  ASSERT_EQ(kernel->Run(actual), 0) << context;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(AllClose(expected[i], actual[i], /*rtol=*/1e-4, /*atol=*/1e-4))
        << "parameter " << original->params[i]->name << "\n"
        << context << "\nlowered:\n"
        << Print(lowered);
  }
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) names.push_back(def.name);
  return names;
}

std::string NameOf(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

class ScheduledWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(ScheduledWorkload, EveryTypicalScheduleCompilesAndMatches) {
  const WorkloadDef* def = FindWorkload(GetParam());
  PrimFunc original = def->build(def->small_shape);
  for (const tirtune::testing::NamedSchedule& s : tirtune::testing::Schedules()) {
    Schedule sch(original);
    s.apply(sch);
    ExpectCompiledMatches(original, sch.func(),
                          fmt::format("{} with schedule '{}'; trace:\n{}", GetParam(), s.name,
                                      sch.trace().ToText()));
  }
}

TEST_P(ScheduledWorkload, RandomSchedulesCompileAndMatch) {
  const WorkloadDef* def = FindWorkload(GetParam());
  PrimFunc original = def->build(def->small_shape);
  constexpr int kSchedules = 12;
  for (int trial = 0; trial < kSchedules; ++trial) {
    Schedule sch(original, /*seed=*/trial);
    RandomEngine rng(5000 + trial);
    int steps = static_cast<int>(rng.UniformInt(1, 9));
    for (int s = 0; s < steps; ++s) {
      try {
        tirtune::testing::RandomStep(sch, rng);
      } catch (const ScheduleError&) {
      }
    }
    ExpectCompiledMatches(original, sch.func(),
                          fmt::format("{} random trial {}; trace:\n{}", GetParam(), trial,
                                      sch.trace().ToText()));
  }
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, ScheduledWorkload, ::testing::ValuesIn(WorkloadNames()),
                         NameOf);

}  // namespace
}  // namespace tirtune::test_codegen
