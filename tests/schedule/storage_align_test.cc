// storage_align: the "buffer_dim_align" annotation, its updates, and the argument checks.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kTwoStages = R"(@prim_func
def two_stages(A: Buffer((16, 8), float32), C: Buffer((16, 8), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16, 8), float32, scope="shared")
        for i in range(16):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0
        for i in range(16):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(B[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + 1.0
)";

const char* kAligned = R"(@prim_func
def two_stages(A: Buffer((16, 8), float32), C: Buffer((16, 8), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16, 8), float32, scope="shared")
        for i in range(16):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    block_attr({"buffer_dim_align": "[[0,0,32,8]]"})
                    B[vi, vj] = A[vi, vj] * 2.0
        for i in range(16):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(B[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + 1.0
)";

TEST(StorageAlign, RecordsTheAlignmentOnTheWritingBlock) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  sch.StorageAlign(sch.GetBlock("B"), /*write_index=*/0, /*axis=*/0, /*factor=*/32,
                   /*offset=*/8);
  ExpectFuncEqual(sch.func(), kAligned);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(StorageAlign, NegativeAxisCountsFromTheEnd) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  sch.StorageAlign(sch.GetBlock("B"), /*write_index=*/0, /*axis=*/-2, /*factor=*/32,
                   /*offset=*/8);
  ExpectFuncEqual(sch.func(), kAligned);
  ExpectTraceRoundTrip(sch, f);
}

TEST(StorageAlign, SameAxisReplacesOtherAxisAppends) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  sch.StorageAlign(b, /*write_index=*/0, /*axis=*/0, /*factor=*/16, /*offset=*/1);
  sch.StorageAlign(b, /*write_index=*/0, /*axis=*/1, /*factor=*/4, /*offset=*/0);
  sch.StorageAlign(b, /*write_index=*/0, /*axis=*/0, /*factor=*/32, /*offset=*/8);
  const auto& annotations = sch.Get(b)->block->annotations;
  ASSERT_EQ(annotations.count("buffer_dim_align"), 1u);
  EXPECT_EQ(annotations.at("buffer_dim_align").as<StringImmNode>()->value,
            "[[0,0,32,8],[0,1,4,0]]");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(StorageAlign, RejectsAxisOutOfRange) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "StorageAlignAxisOutOfRangeError",
                      "axis 2 of buffer 'B', which has 2 dimension(s)",
                      [&] { sch.StorageAlign(b, 0, /*axis=*/2, 32, 8); });
  ExpectScheduleError(sch, "StorageAlignAxisOutOfRangeError", "axis -3",
                      [&] { sch.StorageAlign(b, 0, /*axis=*/-3, 32, 8); });
}

TEST(StorageAlign, RejectsNonPositiveFactor) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "StorageAlignInvalidFactorError", "factor 0 and offset 0",
                      [&] { sch.StorageAlign(b, 0, 0, /*factor=*/0, /*offset=*/0); });
}

TEST(StorageAlign, RejectsOffsetOutsideTheFactor) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "StorageAlignInvalidFactorError", "factor 8 and offset 8",
                      [&] { sch.StorageAlign(b, 0, 0, /*factor=*/8, /*offset=*/8); });
  ExpectScheduleError(sch, "StorageAlignInvalidFactorError", "offset -1",
                      [&] { sch.StorageAlign(b, 0, 0, /*factor=*/8, /*offset=*/-1); });
}

TEST(StorageAlign, RejectsAFunctionParameter) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "NonAllocatedBufferError", "function parameter",
                      [&] { sch.StorageAlign(c, 0, 0, 32, 8); });
}

TEST(StorageAlign, RejectsAWriteIndexOutOfRange) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "BufferIndexOutOfRangeError", "write buffer -1 of block 'B'",
                      [&] { sch.StorageAlign(b, /*write_index=*/-1, 0, 32, 8); });
}

}  // namespace
}  // namespace tirtune
