// reorder: before/expected pairs and errors.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(Reorder, MovesTheReductionLoopOutward) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Reorder({loops[2], loops[0]});
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for k in range(8):
            for j in range(12):
                for i in range(16):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
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

TEST(Reorder, TilesLikeMultiLevelTiling) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto i = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  auto j = sch.Split(loops[1], {std::monostate{}, int64_t{3}});
  auto k = sch.Split(loops[2], {std::monostate{}, int64_t{2}});
  sch.Reorder({i[0], j[0], k[0], i[1], k[1], j[1]});
  auto after = sch.GetLoops(sch.GetBlock("C"));
  ASSERT_EQ(after.size(), 6u);
  EXPECT_EQ(sch.Get(after[2])->loop_var->name, "k_0");
  EXPECT_EQ(sch.Get(after[5])->loop_var->name, "j_1");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// B[i] = sum_k A[i, k] with i and k fused: the fused loop drives a spatial and a reduction
// iterator. Splitting it unevenly and swapping the parts would visit (i=1, k=2) before
// (i=1, k=0), where B[1] is initialized.
TEST(Reorder, RejectsMovingALoopOfMixedIterTypes) {
  PrimFunc f = ParseFunc(R"(@prim_func
def row_sum(A: Buffer((3, 6), float32), B: Buffer((3,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(3):
            for k in range(6):
                with block("B"):
                    vi = axis.spatial(3, i)
                    vk = axis.reduce(6, k)
                    reads(A[vi, vk])
                    writes(B[vi])
                    with init():
                        B[vi] = 0.0
                    B[vi] = B[vi] + A[vi, vk]
)");
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  LoopRV fused = sch.Fuse({loops[0], loops[1]});
  auto parts = sch.Split(fused, {std::monostate{}, int64_t{4}});
  ExpectScheduleError(sch, "MixedIterTypeLoopError", "both spatial and reduction",
                      [&] { sch.Reorder({parts[1], parts[0]}); });
  ExpectSameNumbers(f, sch.func());
}

TEST(Reorder, RejectsDuplicateLoop) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "DuplicateLoopError", "twice",
                      [&] { sch.Reorder({loops[0], loops[0]}); });
}

}  // namespace
}  // namespace tirtune
