// set_scope: every reference switches to the re-scoped buffer; parameters are refused.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kTwoStages = R"(@prim_func
def two_stages(A: Buffer((16, 8), float32), C: Buffer((16, 8), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16, 8), float32)
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

TEST(SetScope, RescopesTheAllocationAndEveryUse) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  sch.SetScope(sch.GetBlock("B"), /*write_index=*/0, StorageScope::kShared);
  ExpectFuncEqual(sch.func(), R"(@prim_func
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
)");
  // One buffer object serves the allocation and every use.
  const BlockNode* root = sch.Get(sch.GetBlock("root"))->block.get();
  const Buffer& scoped = root->alloc_buffers[0];
  EXPECT_EQ(scoped->scope, StorageScope::kShared);
  EXPECT_TRUE(sch.Get(sch.GetBlock("B"))->block->writes[0].buffer.same_as(scoped));
  EXPECT_TRUE(sch.Get(sch.GetBlock("C"))->block->reads[0].buffer.same_as(scoped));
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(SetScope, ToLocalThenBackToGlobal) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  sch.SetScope(b, /*write_index=*/0, StorageScope::kLocal);
  EXPECT_EQ(sch.Get(b)->block->writes[0].buffer->scope, StorageScope::kLocal);
  sch.SetScope(b, /*write_index=*/0, StorageScope::kGlobal);
  ExpectFuncEqual(sch.func(), kTwoStages);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(SetScope, SameScopeChangesNothingButIsRecorded) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  sch.SetScope(sch.GetBlock("B"), /*write_index=*/0, StorageScope::kGlobal);
  EXPECT_TRUE(sch.func().same_as(f));
  EXPECT_EQ(sch.trace().insts().back().kind->name, "SetScope");
  ExpectTraceRoundTrip(sch, f);
}

TEST(SetScope, RejectsAFunctionParameter) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "NonAllocatedBufferError", "buffer 'C' written by block 'C'",
                      [&] { sch.SetScope(c, /*write_index=*/0, StorageScope::kShared); });
}

TEST(SetScope, RejectsAWriteIndexOutOfRange) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "BufferIndexOutOfRangeError", "write buffer 1 of block 'B'",
                      [&] { sch.SetScope(b, /*write_index=*/1, StorageScope::kShared); });
}

}  // namespace
}  // namespace tirtune
