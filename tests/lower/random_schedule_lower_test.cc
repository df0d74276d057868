// Property test: for every workload, random sequences of schedule primitives (those that apply)
// give functions whose lowered form satisfies the contract and computes the same numbers as the
// original. A failure names the first pass after which the numbers differ and prints the trace.
#include <fmt/format.h>

#include "lower_check.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

constexpr int kSchedulesPerWorkload = 60;
constexpr int kMaxSteps = 8;

template <typename T>
const T& Pick(RandomEngine& rng, const std::vector<T>& v) {
  return v[rng.UniformInt(0, static_cast<int64_t>(v.size()))];
}

// One random primitive call on a random block or loop of the current function.
void RandomStep(Schedule& sch, RandomEngine& rng) {
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) {
    if (b->block->name != "root") names.push_back(b->block->name);
  }
  if (names.empty()) return;
  BlockRV block = sch.GetBlock(Pick(rng, names));
  std::vector<LoopRV> loops = sch.GetLoops(block);
  auto any_loop = [&]() -> std::optional<LoopRV> {
    std::vector<LoopRV> l = sch.GetLoops(sch.GetBlock(Pick(rng, names)));
    if (l.empty()) return std::nullopt;
    return Pick(rng, l);
  };
  StorageScope scopes[] = {StorageScope::kGlobal, StorageScope::kLocal, StorageScope::kShared};
  switch (rng.UniformInt(0, 17)) {
    case 0:
    case 1:
      if (!loops.empty()) sch.Split(Pick(rng, loops), {std::monostate{}, rng.UniformInt(1, 6)});
      return;
    case 2:
      if (loops.size() >= 2) {
        int64_t a = rng.UniformInt(0, static_cast<int64_t>(loops.size()) - 1);
        sch.Fuse({loops[a], loops[a + 1]});
      }
      return;
    case 3:
      if (loops.size() >= 2) sch.Reorder({loops.back(), loops[loops.size() - 2]});
      return;
    case 4:
      if (!loops.empty()) sch.Parallel(Pick(rng, loops));
      return;
    case 5:
    case 6:
      if (!loops.empty()) sch.Vectorize(Pick(rng, loops));
      return;
    case 7:
      if (!loops.empty()) sch.Unroll(Pick(rng, loops));
      return;
    case 8:
      if (auto l = any_loop()) sch.ComputeAt(block, *l, rng.UniformInt(0, 2) == 0);
      return;
    case 9:
      if (auto l = any_loop()) sch.ReverseComputeAt(block, *l, rng.UniformInt(0, 2) == 0);
      return;
    case 10:
      sch.ComputeInline(block);
      return;
    case 11: {
      size_t n = sch.Get(block)->block->reads.size();
      if (n > 0) {
        sch.CacheRead(block, static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(n))),
                      scopes[rng.UniformInt(0, 3)]);
      }
      return;
    }
    case 12:
      if (!sch.Get(block)->block->writes.empty()) {
        sch.CacheWrite(block, 0, scopes[rng.UniformInt(0, 3)]);
      }
      return;
    case 13:
      if (!loops.empty()) sch.DecomposeReduction(block, Pick(rng, loops));
      return;
    case 14:
      if (!loops.empty()) sch.RFactor(Pick(rng, loops), 0);
      return;
    case 15:
      if (!loops.empty()) {
        sch.Annotate(Pick(rng, loops), "pragma_auto_unroll_max_step",
                     Pick(rng, std::vector<int>{4, 16, 64}));
      }
      return;
    case 16:
      if (!sch.Get(block)->block->writes.empty()) {
        sch.StorageAlign(block, 0, /*axis=*/0, /*factor=*/4, /*offset=*/1);
      }
      return;
  }
}

class RandomScheduleLowering : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomScheduleLowering, KeepsTheNumbers) {
  const WorkloadDef* def = FindWorkload(GetParam());
  ASSERT_NE(def, nullptr);
  PrimFunc original = def->build(def->small_shape);
  for (int trial = 0; trial < kSchedulesPerWorkload; ++trial) {
    Schedule sch(original, /*seed=*/trial);
    RandomEngine rng(5000 + trial);
    int steps = static_cast<int>(rng.UniformInt(1, kMaxSteps + 1));
    for (int s = 0; s < steps; ++s) {
      try {
        RandomStep(sch, rng);
      } catch (const ScheduleError&) {
      }
    }
    std::string context = fmt::format("workload {} trial {}; trace:\n{}\nfunction:\n{}", GetParam(),
                                      trial, sch.trace().ToText(), Print(sch.func()));
    PrimFunc lowered;
    try {
      lowered = Lower(sch.func());
    } catch (const std::exception& e) {
      FAIL() << "lowering threw: " << e.what() << "\n" << context;
    }
    if (CompareNumbers(original, lowered).empty()) continue;
    // Name the first pass that changed the numbers.
    for (const auto& [pass, f] : LowerWithSteps(sch.func())) {
      std::string problem = CompareNumbers(original, f);
      ASSERT_EQ(problem, "") << "after " << pass << "\n" << context << "\n" << Print(f);
    }
  }
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) names.push_back(def.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, RandomScheduleLowering, ::testing::ValuesIn(WorkloadNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tirtune
