// fuse: before/expected pairs and errors.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(Fuse, FusesTwoSpatialLoops) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  LoopRV fused = sch.Fuse({loops[0], loops[1]});
  EXPECT_TRUE(IsConstInt(sch.Get(fused)->extent, 192));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i_j_fused in range(192):
            for k in range(8):
                with block("C"):
                    vi = axis.spatial(16, i_j_fused // 12)
                    vj = axis.spatial(12, i_j_fused % 12)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk], B[vk, vj])
                    writes(C[vi, vj])
                    with init():
                        C[vi, vj] = 0.0
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(Fuse, SplitThenFuseRestoresTheRange) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto parts = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  LoopRV fused = sch.Fuse(parts);
  EXPECT_TRUE(IsConstInt(sch.Get(fused)->extent, 16));
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(Fuse, RejectsLoopsThatAreNotDirectlyNested) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "NotOnlyChildError", "not the only statement",
                      [&] { sch.Fuse({loops[0], loops[2]}); });
}

TEST(Fuse, RejectsVectorizedLoop) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Vectorize(loops[1]);
  ExpectScheduleError(sch, "NotSerialLoopError", "vectorized",
                      [&] { sch.Fuse({loops[0], loops[1]}); });
}

}  // namespace
}  // namespace tirtune
