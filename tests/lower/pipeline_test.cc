// The whole recipe, differentially: for every workload at its small shape, unscheduled and under a
// handful of typical schedules, the lowered function (and the function after every step of
// LowerWithSteps) computes the same numbers as the block-form original, and the final function
// satisfies the lowered-form contract.
#include <fmt/format.h>

#include <functional>

#include "../common/workload_schedules.h"
#include "lower_check.h"
#include "tirtune/ir/functor.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

struct Case {
  std::string workload;
  size_t schedule;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.workload << " under " << Schedules()[c.schedule].name;
}

class LowerWorkload : public ::testing::TestWithParam<Case> {};

TEST_P(LowerWorkload, KeepsTheNumbersAfterEveryPass) {
  const WorkloadDef* def = FindWorkload(GetParam().workload);
  ASSERT_NE(def, nullptr);
  PrimFunc original = def->build(def->small_shape);
  const NamedSchedule& named = Schedules()[GetParam().schedule];
  Schedule sch(original);
  named.apply(sch);
  PrimFunc scheduled = sch.func();
  std::string context = fmt::format("workload {} schedule {}; trace:\n{}", def->name, named.name,
                                    sch.trace().ToText());

  std::vector<std::pair<std::string, PrimFunc>> steps;
  try {
    steps = LowerWithSteps(scheduled);
  } catch (const std::exception& e) {
    FAIL() << "lowering threw: " << e.what() << "\n" << context << "\n" << Print(scheduled);
  }
  PrimFunc before = scheduled;
  for (const auto& [pass, f] : steps) {
    std::string problem = CompareNumbers(original, f);
    ASSERT_EQ(problem, "") << "after " << pass << "\n"
                           << context << "\n--- before " << pass << "\n"
                           << Print(before) << "--- after\n"
                           << Print(f);
    before = f;
  }
  std::vector<std::string> problems = VerifyLoweredForm(steps.back().second);
  EXPECT_TRUE(problems.empty()) << problems[0] << "\n" << Print(steps.back().second);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const WorkloadDef& def : AllWorkloads()) {
    for (size_t s = 0; s < Schedules().size(); ++s) cases.push_back({def.name, s});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, LowerWorkload, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.workload + "_" + Schedules()[info.param.schedule].name;
                         });

}  // namespace
}  // namespace tirtune

namespace tirtune {
namespace {

bool Contains(const PrimFunc& f, NodeKind kind) {
  bool found = false;
  PreOrderVisit(f->body, [&](const Object* node) {
    found = found || node->kind() == kind;
    return !found;
  });
  return found;
}

bool HasLoopOfKind(const PrimFunc& f, ForKind kind) {
  bool found = false;
  PreOrderVisit(f->body, [&](const Object* node) {
    if (const auto* loop = node->as<ForNode>()) found = found || loop->for_kind == kind;
    return !found;
  });
  return found;
}

TEST(Lower, TiledGemmWithCacheWriteGetsATileAccumulatorAndVectorRows) {
  PrimFunc f = MakeWorkload("gemm:8,12,16").func;
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  BlockRV copy = sch.CacheWrite(c, 0, StorageScope::kLocal);
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, int64_t{4}});
  sch.Reorder({i[0], j[0], loops[2], i[1], j[1]});
  sch.ReverseComputeAt(copy, j[0]);
  sch.Vectorize(j[1]);
  sch.Unroll(i[1]);
  sch.Parallel(i[0]);
  std::vector<std::pair<std::string, PrimFunc>> steps = LowerWithSteps(sch.func());
  std::vector<std::string> names;
  for (const auto& step : steps) names.push_back(step.first);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "LowerInitBlocks", "ConvertBlocksToLoops", "SkipPaddingTaps",
                       "CompactBufferAllocations", "FlattenBuffers", "PlanStorageScopes",
                       "SimplifyStatements", "UnswitchTileGuards", "UnrollLoops",
                       "SimplifyStatements", "VectorizeLoops", "SerializeNestedParallel"}));
  ExpectFuncEqual(steps.back().second, R"(@prim_func
def gemm(A: Buffer((128,), float32), B: Buffer((192,), float32), C: Buffer((96,), float32)):
    for i_0 in parallel(2):
        for j_0 in range(3):
            with allocate(C_local, (16,), float32, scope="local"):
                for k in range(16):
                    if k == 0:
                        C_local[ramp(0, 1, 4)] = broadcast(0.0, 4)
                    C_local[ramp(0, 1, 4)] = C_local[ramp(0, 1, 4)] + broadcast(A[i_0 * 64 + k], 4) * B[ramp(j_0 * 4 + k * 12, 1, 4)]
                    if k == 0:
                        C_local[ramp(4, 1, 4)] = broadcast(0.0, 4)
                    C_local[ramp(4, 1, 4)] = C_local[ramp(4, 1, 4)] + broadcast(A[i_0 * 64 + k + 16], 4) * B[ramp(j_0 * 4 + k * 12, 1, 4)]
                    if k == 0:
                        C_local[ramp(8, 1, 4)] = broadcast(0.0, 4)
                    C_local[ramp(8, 1, 4)] = C_local[ramp(8, 1, 4)] + broadcast(A[i_0 * 64 + k + 32], 4) * B[ramp(j_0 * 4 + k * 12, 1, 4)]
                    if k == 0:
                        C_local[ramp(12, 1, 4)] = broadcast(0.0, 4)
                    C_local[ramp(12, 1, 4)] = C_local[ramp(12, 1, 4)] + broadcast(A[i_0 * 64 + k + 48], 4) * B[ramp(j_0 * 4 + k * 12, 1, 4)]
                for ax0_1 in range(4):
                    for ax1_1 in range(4):
                        C[ax0_1 * 12 + ax1_1 + i_0 * 48 + j_0 * 4] = C_local[ax0_1 * 4 + ax1_1]
)");
  ExpectSameNumbers(f, steps.back().second);
}

TEST(LowerSchedules, VectorizedLoopsBecomeVectorsInMostWorkloads) {
  int vectorized = 0, widened = 0;
  std::string fallbacks;
  for (const WorkloadDef& def : AllWorkloads()) {
    Schedule sch(def.build(def.small_shape));
    ScheduleNamed("vectorized_dividing_every_block").apply(sch);
    if (!HasLoopOfKind(sch.func(), ForKind::kVectorized)) continue;
    ++vectorized;
    PrimFunc lowered = Lower(sch.func());
    if (Contains(lowered, NodeKind::kRamp)) {
      ++widened;
    } else {
      fallbacks += def.name + "\n" + Print(lowered);
    }
  }
  EXPECT_GE(widened * 4, vectorized * 3) << fallbacks;
}

}  // namespace
}  // namespace tirtune
