// Storage alignment: the "buffer_dim_align" requests of blocks pad the strides of the compacted
// buffer they name.
#include "lower_check.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kStaged = R"(@prim_func
def staged(A: Buffer((16, 16), float32), C: Buffer((16, 16), float32)):
    with block("root"):
        reads()
        writes()
        S = alloc_buffer((16, 16), float32, scope="shared")
        for i0 in range(4):
            for ax0 in range(4):
                for ax1 in range(16):
                    with block("S"):
                        v0 = axis.spatial(16, i0 * 4 + ax0)
                        v1 = axis.spatial(16, ax1)
                        reads(A[v0, v1])
                        writes(S[v0, v1])
                        block_attr({"buffer_dim_align": "[[0, 0, 8, 2]]"})
                        S[v0, v1] = A[v0, v1]
            for i1 in range(4):
                for j in range(16):
                    with block("C"):
                        vi = axis.spatial(16, i0 * 4 + i1)
                        vj = axis.spatial(16, j)
                        reads(S[vi, vj])
                        writes(C[vi, vj])
                        C[vi, vj] = S[vi, vj] * 2.0
)";

TEST(StorageAlign, RowStrideOfTheCompactedTileIsPaddedToTheRequestedRemainder) {
  PrimFunc f = ParseFunc(kStaged);
  PrimFunc lowered = Lower(f);
  // The 4 x 16 tile gets row stride 18 (18 % 8 == 2): 3 * 18 + 16 = 70 elements.
  ExpectFuncEqual(lowered, R"(@prim_func
def staged(A: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i0 in range(4):
        with allocate(S, (70,), float32):
            for ax0 in range(4):
                for ax1 in range(16):
                    S[ax0 * 18 + ax1] = A[ax0 * 16 + ax1 + i0 * 64]
            for i1 in range(4):
                for j in range(16):
                    C[i0 * 64 + i1 * 16 + j] = S[i1 * 18 + j] * 2.0
)");
  ExpectSameNumbers(f, lowered);
}

TEST(StorageAlign, CollectsWhatTheSchedulePrimitiveRecorded) {
  PrimFunc f = ParseFunc(kStaged);
  Schedule sch(f);
  sch.Unannotate(sch.GetBlock("S"), "buffer_dim_align");
  sch.StorageAlign(sch.GetBlock("S"), /*write_index=*/0, /*axis=*/-1, /*factor=*/4,
                   /*offset=*/1);
  StorageAlignRequests requests = CollectStorageAlign(sch.func());
  ASSERT_EQ(requests.size(), 1u);
  const std::vector<StorageAlignRequest>& r = requests.begin()->second;
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].axis, 1);
  EXPECT_EQ(r[0].factor, 4);
  EXPECT_EQ(r[0].offset, 1);
  ExpectSameNumbers(f, Lower(sch.func()));
}

TEST(StorageAlign, MalformedAnnotationIsAUserError) {
  std::string text = kStaged;
  size_t at = text.find("[[0, 0, 8, 2]]");
  text.replace(at, 14, "[[0, 0, 8]]");
  EXPECT_THROW(CollectStorageAlign(ParseFunc(text)), UserError);
}

}  // namespace
}  // namespace tirtune
