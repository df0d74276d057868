// split: before/expected pairs, the inferred factor, the tail predicate, and its errors.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kElementwise = R"(@prim_func
def add_one(A: Buffer((10, 8), float32), B: Buffer((10, 8), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(10):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(10, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] + 1.0
)";

TEST(Split, DivisibleFactorsGiveANestWithoutPredicate) {
  PrimFunc f = ParseFunc(kElementwise);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  sch.Split(loops[1], {std::monostate{}, int64_t{4}});
  ExpectFuncEqual(sch.func(), R"(@prim_func
def add_one(A: Buffer((10, 8), float32), B: Buffer((10, 8), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(10):
            for j_0 in range(2):
                for j_1 in range(4):
                    with block("B"):
                        vi = axis.spatial(10, i)
                        vj = axis.spatial(8, j_0 * 4 + j_1)
                        reads(A[vi, vj])
                        writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(Split, NonDivisibleFactorAddsPredicate) {
  PrimFunc f = ParseFunc(kElementwise);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  auto parts = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  EXPECT_EQ(sch.Get(parts[0])->extent.as<IntImmNode>()->value, 3);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def add_one(A: Buffer((10, 8), float32), B: Buffer((10, 8), float32)):
    with block("root"):
        reads()
        writes()
        for i_0 in range(3):
            for i_1 in range(4):
                for j in range(8):
                    with block("B"):
                        vi = axis.spatial(10, i_0 * 4 + i_1)
                        vj = axis.spatial(8, j)
                        where(i_0 * 4 + i_1 < 10)
                        reads(A[vi, vj])
                        writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(Split, ThreeWaySplitWithSampledFactors) {
  PrimFunc f = ParseFunc(kElementwise);
  Schedule sch(f, /*seed=*/3);
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  auto factors = sch.SamplePerfectTile(loops[1], /*n=*/3, /*max_innermost_factor=*/4);
  std::vector<SplitFactor> split_factors;
  int64_t product = 1;
  for (ExprRV e : factors) {
    split_factors.emplace_back(e);
    product *= sch.Get(e);
  }
  EXPECT_EQ(product, 8);
  auto parts = sch.Split(loops[1], split_factors);
  ASSERT_EQ(parts.size(), 3u);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(Split, RejectsNonPositiveFactor) {
  Schedule sch(ParseFunc(kElementwise));
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  ExpectScheduleError(sch, "NonPositiveFactorError", "factor 0",
                      [&] { sch.Split(loops[0], {int64_t{0}, std::monostate{}}); });
}

TEST(Split, RejectsFactorsThatDoNotCoverTheExtent) {
  Schedule sch(ParseFunc(kElementwise));
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  ExpectScheduleError(sch, "FactorProductError", "product is 6",
                      [&] { sch.Split(loops[0], {int64_t{2}, int64_t{3}}); });
}

TEST(Split, RejectsTwoInferredFactors) {
  Schedule sch(ParseFunc(kElementwise));
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  ExpectScheduleError(sch, "FactorProductError", "more than one factor out", [&] {
    sch.Split(loops[0], {std::monostate{}, std::monostate{}, int64_t{2}});
  });
}

TEST(Split, RejectsParallelLoop) {
  Schedule sch(ParseFunc(kElementwise));
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  sch.Parallel(loops[0]);
  ExpectScheduleError(sch, "NotSerialLoopError", "is parallel",
                      [&] { sch.Split(loops[0], {std::monostate{}, int64_t{2}}); });
}

}  // namespace
}  // namespace tirtune
