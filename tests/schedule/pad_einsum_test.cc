// pad_einsum: a GEMM whose extents do not factor padded to multiples that do, checked against the
// interpreter before and after tiling; the trace round trip, check-only mode, and each
// precondition's error.
#include "gemm_text.h"
#include "schedule_check.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

// PadEinsum of block "B" of `text` by 4 fails with a PadEinsumError saying `message`.
void ExpectPaddingBRefused(const char* text, const std::string& message) {
  Schedule sch(ParseFunc(text));
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "PadEinsumError", message, [&] { sch.PadEinsum(b, {4}); });
}

TEST(PadEinsum, PadsTheGemmAndItsInputsAndCopiesTheOutputBack) {
  PrimFunc f = MakeWorkload("gemm:13,10,9").func;
  Schedule sch(f);
  sch.PadEinsum(sch.GetBlock("C"), {8, 8, 1});
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(*AsConstInt(sch.Get(loops[0])->extent), 16);
  EXPECT_EQ(*AsConstInt(sch.Get(loops[1])->extent), 16);
  EXPECT_EQ(*AsConstInt(sch.Get(loops[2])->extent), 9);  // factor 1: as it was
  // The padded inputs, the padded output and the copy back exist as blocks.
  sch.GetBlock("A_pad");
  sch.GetBlock("B_pad");
  sch.GetBlock("C_pad");
  ExpectSameNumbers(f, sch.func());
  ExpectTraceRoundTrip(sch, f);
  // The padded loops now tile by 8 without a guard, and the numbers stay.
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, int64_t{8}});
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, int64_t{8}});
  sch.Reorder({i[0], j[0], loops[2], i[1], j[1]});
  EXPECT_TRUE(IsConstInt(sch.Get(sch.GetBlock("C"))->predicate, 1));
  ExpectSameNumbers(f, sch.func());
}

TEST(PadEinsum, APaddedReductionAddsZeros) {
  PrimFunc f = MakeWorkload("gemm:5,6,7").func;
  Schedule sch(f);
  sch.PadEinsum(sch.GetBlock("C"), {4, 4, 4});
  EXPECT_EQ(*AsConstInt(sch.Get(sch.GetLoops(sch.GetBlock("C"))[2])->extent), 8);
  ExpectSameNumbers(f, sch.func());
}

TEST(PadEinsum, CheckOnlyChangesNothing) {
  PrimFunc f = MakeWorkload("gemm:13,10,9").func;
  Schedule sch(f);
  EXPECT_TRUE(sch.CanApply([](Schedule& s) { s.PadEinsum(s.GetBlock("C"), {4, 4, 4}); }));
  EXPECT_FALSE(sch.CanApply([](Schedule& s) { s.PadEinsum(s.GetBlock("C"), {4, 4}); }));
  EXPECT_TRUE(sch.func().same_as(f));
}

TEST(PadEinsum, EachPreconditionHasItsError) {
  {
    Schedule sch(MakeWorkload("gemm:13,10,9").func);
    BlockRV c = sch.GetBlock("C");
    ExpectScheduleError(sch, "PadEinsumError", "2 factors for 3 iterators", [&] {
      sch.PadEinsum(c, {4, 4});
    });
    ExpectScheduleError(sch, "PadEinsumError", "factor 0", [&] { sch.PadEinsum(c, {4, 0, 4}); });
    std::vector<LoopRV> loops = sch.GetLoops(c);
    sch.Split(loops[0], {std::monostate{}, int64_t{4}});
    ExpectScheduleError(sch, "PadEinsumError", "4 loops for 3 iterators", [&] {
      sch.PadEinsum(c, {4, 4, 4});
    });
  }
  // A shifted index is not an iterator alone.
  ExpectPaddingBRefused(R"(@prim_func
def f(A: Buffer((10,), float32), B: Buffer((9,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(9):
            with block("B"):
                vi = axis.spatial(9, i)
                reads(A[vi + 1])
                writes(B[vi])
                B[vi] = A[vi + 1] * 2.0
)",
                        "not by an iterator alone");
  // An update in place reads the output's values, which a padded copy would not have.
  ExpectPaddingBRefused(R"(@prim_func
def f(A: Buffer((9,), float32), B: Buffer((9,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(9):
            with block("B"):
                vi = axis.spatial(9, i)
                reads(A[vi], B[vi])
                writes(B[vi])
                B[vi] = B[vi] + A[vi]
)",
                        "without an init");
  // A max reduction: its padding would not be neutral.
  ExpectPaddingBRefused(R"(@prim_func
def f(A: Buffer((9,), float32), B: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        for k in range(9):
            with block("B"):
                vk = axis.reduce(9, k)
                reads(A[vk], B[0])
                writes(B[0])
                with init():
                    B[0] = -3.0e38
                B[0] = max(B[0], A[vk])
)",
                        "padding reduction iterator 'vk'");
}

}  // namespace
}  // namespace tirtune
