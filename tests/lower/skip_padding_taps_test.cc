// SkipPaddingTaps: the conjuncts of an inlined pad that outer loops decide become `if`s around
// loop bodies, so the taps on the padding are skipped; everything else is left as it was.
#include "lower_check.h"
#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(SkipPaddingTaps, RowConjunctsGuardTheReductionBodyWhereTheyAreDecided) {
  // The h loop holds the init too, so the row test goes around the rh body; the column test
  // depends on w, whose body holds no loop, so it stays in the select.
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((4, 4, 3), float32), W: Buffer((3, 3, 3), float32), B: Buffer((4, 4), float32)):
    for h in range(4):
        for w0 in range(4):
            B[h, w0] = 0.0
        for rh in range(3):
            for rc in range(3):
                for w in range(4):
                    B[h, w] = B[h, w] + select(1 <= h + rh and h + rh < 5 and 1 <= w + rc and w + rc < 5, A[min(max(h + rh - 1, 0), 3), min(max(w + rc - 1, 0), 3), rc], 0.0) * W[rh, rc, 0]
)");
  PrimFunc skipped = SkipPaddingTaps(f);
  ExpectFuncEqual(skipped, R"(@prim_func
def c(A: Buffer((4, 4, 3), float32), W: Buffer((3, 3, 3), float32), B: Buffer((4, 4), float32)):
    for h in range(4):
        for w0 in range(4):
            B[h, w0] = 0.0
        for rh in range(3):
            if 1 <= h + rh and h + rh < 5:
                for rc in range(3):
                    for w in range(4):
                        B[h, w] = B[h, w] + select(1 <= w + rc and w + rc < 5, A[min(max(h + rh - 1, 0), 3), min(max(w + rc - 1, 0), 3), rc], 0.0) * W[rh, rc, 0]
)");
  ExpectSameNumbers(f, skipped);
}

TEST(SkipPaddingTaps, CastSelectsAndUpdatesWrittenTheOtherWayRoundAreRecognized) {
  // The weight is on the left, the select is cast, and the accumulator is on the right.
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((6, 2), float16), W: Buffer((3, 2), float32), B: Buffer((6,), float32)):
    for rh in range(3):
        for h in range(6):
            for rc in range(2):
                B[h] = W[rh, rc] * cast(float32, select(1 <= h + rh and h + rh < 7, A[min(max(h + rh - 1, 0), 5), rc], float16(0.0))) + B[h]
)");
  PrimFunc skipped = SkipPaddingTaps(f);
  ExpectFuncEqual(skipped, R"(@prim_func
def c(A: Buffer((6, 2), float16), W: Buffer((3, 2), float32), B: Buffer((6,), float32)):
    for rh in range(3):
        for h in range(6):
            if 1 <= h + rh and h + rh < 7:
                for rc in range(2):
                    B[h] = W[rh, rc] * cast(float32, A[min(max(h + rh - 1, 0), 5), rc]) + B[h]
)");
  ExpectSameNumbers(f, skipped);
}

TEST(SkipPaddingTaps, LeavesBodiesWithOtherStoresBufferTestsAndVectorLoopsAlone) {
  // A store that is not an update (the pad is materialized), a mask read from a buffer, bodies
  // without a loop that stays a loop (innermost, or holding only an unrolled loop), and a
  // vectorized loop all keep their selects.
  std::string text = R"(@prim_func
def c(A: Buffer((8,), float32), M: Buffer((8,), int32), W: Buffer((3, 8), float32), P: Buffer((8,), float32), B: Buffer((8, 8), float32)):
    for h in range(8):
        for r in range(3):
            P[h] = select(1 <= h + r, A[max(h + r - 1, 0)], 0.0)
            for c0 in range(8):
                B[h, c0] = B[h, c0] + P[h] * W[r, c0]
    for h in range(8):
        for r in range(3):
            for c1 in range(8):
                B[h, c1] = B[h, c1] + select(M[h] > 0, A[h], 0.0) * W[r, c1]
    for r in range(3):
        for h in range(8):
            for c2 in vectorized(8):
                B[h, c2] = B[h, c2] + select(1 <= h + r, A[max(h + r - 1, 0)], 0.0) * W[r, c2]
    for h in range(8):
        for r in range(3):
            for k in unroll(2):
                B[h, k] = B[h, k] + select(1 <= h + r, A[max(h + r - 1, 0)], 0.0) * W[r, k]
    for h in range(8):
        for c3 in vectorized(8):
            for r in range(3):
                for k in range(2):
                    B[h, c3] = B[h, c3] + select(1 <= h + r, A[max(h + r - 1, 0)], 0.0) * W[r, c3]
)";
  PrimFunc f = ParseFunc(text);
  ExpectFuncEqual(SkipPaddingTaps(f), text);
}

TEST(SkipPaddingTaps, ASerialLoopBesideAnUnrolledOneStillHoldsTheGuard) {
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((8,), float32), W: Buffer((3, 4), float32), B: Buffer((8, 4), float32)):
    for h in range(8):
        for r in range(3):
            for c0 in range(4):
                B[h, c0] = B[h, c0] + select(1 <= h + r, A[min(max(h + r - 1, 0), 7)], 0.0) * W[r, c0]
            for k in unroll(2):
                B[h, k] = B[h, k] + select(1 <= h + r, A[min(max(h + r - 1, 0), 7)], 0.0) * W[r, k]
)");
  PrimFunc skipped = SkipPaddingTaps(f);
  ExpectFuncEqual(skipped, R"(@prim_func
def c(A: Buffer((8,), float32), W: Buffer((3, 4), float32), B: Buffer((8, 4), float32)):
    for h in range(8):
        for r in range(3):
            if 1 <= h + r:
                for c0 in range(4):
                    B[h, c0] = B[h, c0] + A[min(max(h + r - 1, 0), 7)] * W[r, c0]
                for k in unroll(2):
                    B[h, k] = B[h, k] + A[min(max(h + r - 1, 0), 7)] * W[r, k]
)");
  ExpectSameNumbers(f, skipped);
}

TEST(SkipPaddingTaps, LoweringSkipsTheTapsUnlessAskedNotTo) {
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((6,), float32), W: Buffer((3, 4), float32), B: Buffer((6, 4), float32)):
    for h in range(6):
        for co0 in range(4):
            B[h, co0] = 0.0
        for rh in range(3):
            for co in range(4):
                for rc in range(2):
                    B[h, co] = B[h, co] + select(1 <= h + rh and h + rh < 7, A[min(max(h + rh - 1, 0), 5)], 0.0) * W[rh, co]
)");
  auto has_if = [](const PrimFunc& g) {
    bool found = false;
    PreOrderVisit(g->body, [&](const Object* node) {
      found = found || node->kind() == NodeKind::kIfThenElse;
      return !found;
    });
    return found;
  };
  PrimFunc lowered = Lower(f);
  EXPECT_TRUE(has_if(lowered)) << Print(lowered);
  ExpectSameNumbers(f, lowered);
  LowerOptions keep;
  keep.skip_padding_taps = false;
  EXPECT_FALSE(has_if(Lower(f, keep)));
}

// A function of A [4, 1024] with `params` besides, whose root computes P, A with a zero row above
// and below (a pad kept as a buffer of its own), then runs `consumer`.
std::string WithMaterializedPad(const std::string& params, const std::string& consumer) {
  return R"(@prim_func
def c(A: Buffer((4, 1024), float32), )" +
         params + R"():
    with block("root"):
        reads()
        writes()
        P = alloc_buffer((6, 1024), float32)
        for i in range(6):
            for j in range(1024):
                with block("P"):
                    vi = axis.spatial(6, i)
                    vj = axis.spatial(1024, j)
                    reads(A[0:4, vj])
                    writes(P[vi, vj])
                    P[vi, vj] = select(1 <= vi and vi < 5, A[min(max(vi - 1, 0), 3), vj], 0.0)
)" + consumer;
}

// P is zero outside rows 1..4, so the row test decided by h and rh guards the rc loop (1,024
// updates: enough work to pay for the test), and the loads of P carry no select afterwards.
const std::string kMaterializedPad =
    WithMaterializedPad("W: Buffer((3, 1024), float32), B: Buffer((4,), float32)", R"(
        for h in range(4):
            for rh in range(3):
                for rc in range(1024):
                    with block("B"):
                        vh = axis.spatial(4, h)
                        vrh = axis.reduce(3, rh)
                        vrc = axis.reduce(1024, rc)
                        reads(B[vh], P[vh + vrh, vrc], W[vrh, vrc])
                        writes(B[vh])
                        B[vh] = B[vh] + P[vh + vrh, vrc] * W[vrh, vrc]
)");

TEST(SkipPaddingTaps, AMaterializedPadIsSkippedWhereOuterLoopsDecideIt) {
  PrimFunc f = ParseFunc(kMaterializedPad);
  ZeroPaddedBuffers padded = CollectZeroPadding(f);
  ASSERT_EQ(padded.size(), 1u);
  EXPECT_EQ(padded[0].buffer->name, "P");
  PrimFunc loops = ConvertBlocksToLoops(LowerInitBlocks(f));
  PrimFunc skipped = SkipPaddingTaps(loops, padded);
  ExpectFuncEqual(skipped, R"(@prim_func
def c(A: Buffer((4, 1024), float32), W: Buffer((3, 1024), float32), B: Buffer((4,), float32)):
    with allocate(P, (6, 1024), float32):
        for i in range(6):
            for j in range(1024):
                P[i, j] = select(1 <= i and i < 5, A[min(max(i - 1, 0), 3), j], 0.0)
        for h in range(4):
            for rh in range(3):
                if 1 <= h + rh and h + rh < 5:
                    for rc in range(1024):
                        B[h] = B[h] + P[h + rh, rc] * W[rh, rc]
)");
  ExpectSameNumbers(f, skipped);
  // Without knowing the pad, nothing changes.
  EXPECT_TRUE(SkipPaddingTaps(loops).same_as(loops));
  PrimFunc lowered = Lower(f);
  ExpectSameNumbers(f, lowered);
  LowerOptions keep;
  keep.skip_padding_taps = false;
  ExpectSameNumbers(f, Lower(f, keep));
}

TEST(SkipPaddingTaps, ATestOfAMaterializedPadStaysOutOfTheTileOfOutputs) {
  // The row test is decided outside the h loop, but every loop inside it walks outputs: a test
  // there would sit in the tile of accumulators, and skipping zeros does not pay for that.
  PrimFunc f =
      ParseFunc(WithMaterializedPad("W: Buffer((3,), float32), B: Buffer((4, 1024), float32)", R"(
        for rh in range(3):
            for h in range(4):
                for w in range(1024):
                    with block("B"):
                        vh = axis.spatial(4, h)
                        vw = axis.spatial(1024, w)
                        vrh = axis.reduce(3, rh)
                        reads(B[vh, vw], P[vh + vrh, vw], W[vrh])
                        writes(B[vh, vw])
                        B[vh, vw] = B[vh, vw] + P[vh + vrh, vw] * W[vrh]
)"));
  PrimFunc loops = ConvertBlocksToLoops(LowerInitBlocks(f));
  PrimFunc skipped = SkipPaddingTaps(loops, CollectZeroPadding(f));
  std::optional<std::string> diff = StructuralDiff(skipped, loops);
  EXPECT_FALSE(diff.has_value()) << *diff << "\n" << Print(skipped);
}

TEST(SkipPaddingTaps, OnlyABufferOneBlockWritesAsAPadAtItsOwnIteratorsIsAZeroPad) {
  auto collect = [](std::string text, const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return CollectZeroPadding(ParseFunc(text)).size();
  };
  EXPECT_EQ(collect(kMaterializedPad, "", ""), 1u);
  // Not zero on the padding.
  EXPECT_EQ(collect(kMaterializedPad, "vj], 0.0)", "vj], 1.0)"), 0u);
  // The condition reads something other than the indices.
  EXPECT_EQ(collect(kMaterializedPad, "vi < 5,", "vi < 5 and A[0, 0] < 1.0,"), 0u);
  // Written at other indices than the block's own iterators.
  EXPECT_EQ(collect(kMaterializedPad, "P[vi, vj] = select", "P[vi, 0] = select"), 0u);
  // Written again by a second store.
  EXPECT_EQ(collect(kMaterializedPad, "B[vh] = B[vh] + P",
                    "P[vh, vrc] = 0.0\n                        B[vh] = B[vh] + P"),
            0u);
}

TEST(SkipPaddingTaps, ALoopOfExtentOneHoldsNoTestBack) {
  // h1 runs once: the row test leaves the rc loop with h1 at its value, and the body holding
  // only the h1 loop is no runtime loop, so nothing goes around it.
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((6,), float32), W: Buffer((3, 2), float32), B: Buffer((6,), float32)):
    for h0 in range(6):
        for rh in range(3):
            for rc in range(2):
                for h1 in range(1):
                    B[h0 + h1] = B[h0 + h1] + select(1 <= h0 + h1 + rh and h0 + h1 + rh < 7, A[min(max(h0 + h1 + rh - 1, 0), 5)], 0.0) * W[rh, rc]
)");
  PrimFunc skipped = SkipPaddingTaps(f);
  ExpectFuncEqual(skipped, R"(@prim_func
def c(A: Buffer((6,), float32), W: Buffer((3, 2), float32), B: Buffer((6,), float32)):
    for h0 in range(6):
        for rh in range(3):
            if 1 <= h0 + 0 + rh and h0 + 0 + rh < 7:
                for rc in range(2):
                    for h1 in range(1):
                        B[h0 + h1] = B[h0 + h1] + A[min(max(h0 + h1 + rh - 1, 0), 5)] * W[rh, rc]
)");
  ExpectSameNumbers(f, skipped);
}

}  // namespace
}  // namespace tirtune
