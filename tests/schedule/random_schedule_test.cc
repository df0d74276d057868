// Property test: for every workload of the operator library, random sequences of schedule
// primitives with random arguments either raise a ScheduleError (leaving the schedule as it was)
// or give a function that computes the same numbers as the original under the interpreter, and
// whose trace replays to the same function. A failure prints the trace that reproduces it.
#include <fmt/format.h>

#include "schedule_check.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

constexpr int kSchedulesPerWorkload = 200;
constexpr int kMaxSteps = 8;

template <typename T>
const T& Pick(RandomEngine& rng, const std::vector<T>& v) {
  return v[rng.UniformInt(0, static_cast<int64_t>(v.size()))];
}

// One random primitive call on a random block/loop of the current function.
void RandomStep(Schedule& sch, RandomEngine& rng) {
  std::vector<const BlockRealizeNode*> all = sch.state().AllBlocks();
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : all) {
    if (b->block->name != "root") names.push_back(b->block->name);
  }
  if (names.empty()) return;
  BlockRV block = sch.GetBlock(Pick(rng, names));
  std::vector<LoopRV> loops = sch.GetLoops(block);
  auto any_loop = [&]() -> std::optional<LoopRV> {
    // A loop of any block, so that compute_at and friends also see invalid targets.
    BlockRV other = sch.GetBlock(Pick(rng, names));
    std::vector<LoopRV> l = sch.GetLoops(other);
    if (l.empty()) return std::nullopt;
    return Pick(rng, l);
  };
  StorageScope scopes[] = {StorageScope::kGlobal, StorageScope::kLocal, StorageScope::kShared};
  int op = static_cast<int>(rng.UniformInt(0, 19));
  switch (op) {
    case 0:
    case 1: {  // split, perfect or not
      if (loops.empty()) return;
      LoopRV loop = Pick(rng, loops);
      if (rng.UniformInt(0, 2) == 0) {
        auto tiles = sch.SamplePerfectTile(loop, static_cast<int>(rng.UniformInt(2, 4)), 16);
        std::vector<SplitFactor> f(tiles.begin(), tiles.end());
        sch.Split(loop, f);
      } else {
        sch.Split(loop, {std::monostate{}, rng.UniformInt(1, 6)});
      }
      return;
    }
    case 2: {  // fuse a run of consecutive loops
      if (loops.size() < 2) return;
      int64_t a = rng.UniformInt(0, static_cast<int64_t>(loops.size()) - 1);
      int64_t b = rng.UniformInt(a + 1, static_cast<int64_t>(loops.size()) + 1);
      sch.Fuse(std::vector<LoopRV>(loops.begin() + a, loops.begin() + b));
      return;
    }
    case 3: {  // reorder a random subset
      if (loops.size() < 2) return;
      std::vector<LoopRV> subset;
      for (LoopRV l : loops) {
        if (rng.UniformInt(0, 2)) subset.push_back(l);
      }
      for (size_t i = subset.size(); i > 1; --i) {
        std::swap(subset[i - 1], subset[rng.UniformInt(0, static_cast<int64_t>(i))]);
      }
      sch.Reorder(subset);
      return;
    }
    case 4:
      if (!loops.empty()) sch.Parallel(Pick(rng, loops));
      return;
    case 5:
      if (!loops.empty()) sch.Vectorize(Pick(rng, loops));
      return;
    case 6:
      if (!loops.empty()) sch.Unroll(Pick(rng, loops));
      return;
    case 7:
      if (auto l = any_loop()) sch.ComputeAt(block, *l, rng.UniformInt(0, 2) == 0);
      return;
    case 8:
      if (auto l = any_loop()) sch.ReverseComputeAt(block, *l, rng.UniformInt(0, 2) == 0);
      return;
    case 9: {
      LoopRV where = sch.SampleComputeLocation(block);
      sch.ComputeAt(block, where);
      return;
    }
    case 10:
      sch.ComputeInline(block);
      return;
    case 11:
      sch.ReverseComputeInline(block);
      return;
    case 12: {
      size_t n = sch.Get(block)->block->reads.size();
      if (n > 0) {
        sch.CacheRead(block, static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(n))),
                      scopes[rng.UniformInt(0, 3)]);
      }
      return;
    }
    case 13: {
      size_t n = sch.Get(block)->block->writes.size();
      if (n > 0) {
        sch.CacheWrite(block, static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(n))),
                       scopes[rng.UniformInt(0, 3)]);
      }
      return;
    }
    case 14:
      if (!loops.empty()) sch.DecomposeReduction(block, Pick(rng, loops));
      return;
    case 15:
      if (!loops.empty()) sch.RFactor(Pick(rng, loops), 0);
      return;
    case 16:
      sch.AddUnitLoop(block);
      return;
    case 17: {
      BlockRV other = sch.GetBlock(Pick(rng, names));
      sch.FuseReductionEpilogue(block, other);
      return;
    }
    case 18:
      if (!loops.empty()) sch.Annotate(Pick(rng, loops), "pragma_auto_unroll_max_step", 16);
      return;
  }
}

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
    std::string context = fmt::format("workload {} trial {}; trace:\n{}\nfunction:\n{}",
                                      GetParam(), trial, sch.trace().ToText(), Print(sch.func()));
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
