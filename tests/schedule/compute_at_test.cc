// compute_at and reverse_compute_at: before/expected pairs, halo regions, domain guards, errors.
#include <fstream>

#include "schedule_check.h"
#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kTwoStage = R"(@prim_func
def two_stage(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] * 2.0
        for i0 in range(4):
            for i1 in range(4):
                with block("C"):
                    vi = axis.spatial(16, i0 * 4 + i1)
                    reads(B[vi])
                    writes(C[vi])
                    C[vi] = B[vi] + 1.0
)";

TEST(ComputeAt, ComputesTheTileTheConsumerNeeds) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.ComputeAt(sch.GetBlock("B"), loops[0]);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def two_stage(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i0 in range(4):
            for ax0 in range(4):
                with block("B"):
                    vi = axis.spatial(16, ax0 + i0 * 4)
                    reads(A[vi])
                    writes(B[vi])
                    B[vi] = A[vi] * 2.0
            for i1 in range(4):
                with block("C"):
                    vi = axis.spatial(16, i0 * 4 + i1)
                    reads(B[vi])
                    writes(C[vi])
                    C[vi] = B[vi] + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ComputeAt, InnermostLoopComputesOneElement) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.ComputeAt(sch.GetBlock("B"), loops[1]);
  auto b_loops = sch.GetLoops(sch.GetBlock("B"));
  EXPECT_EQ(b_loops.size(), 2u);  // i0, i1: the unit loop is not kept
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ComputeAt, PreserveUnitLoopsKeepsTheExtentOneLoop) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.ComputeAt(sch.GetBlock("B"), loops[1], /*preserve_unit_loops=*/true);
  EXPECT_EQ(sch.GetLoops(sch.GetBlock("B")).size(), 3u);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// C[i] = B[i] + B[i + 1]: each tile of C needs a tile of B plus one element of halo, and the
// last tile's halo would step outside B's domain.
const char* kStencil = R"(@prim_func
def stencil(A: Buffer((17,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((17,), float32)
        for i in range(17):
            with block("B"):
                vi = axis.spatial(17, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] * 2.0
        for i0 in range(4):
            for i1 in range(4):
                with block("C"):
                    vi = axis.spatial(16, i0 * 4 + i1)
                    reads(B[vi:vi + 2])
                    writes(C[vi])
                    C[vi] = B[vi] + B[vi + 1]
)";

TEST(ComputeAt, StencilComputesTheHalo) {
  PrimFunc f = ParseFunc(kStencil);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.ComputeAt(sch.GetBlock("B"), loops[0]);
  auto b_loops = sch.GetLoops(sch.GetBlock("B"));
  ASSERT_EQ(b_loops.size(), 2u);
  EXPECT_TRUE(IsConstInt(sch.Get(b_loops[1])->extent, 5));
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

const char* kGemmRelu = R"(@prim_func
def gemm_relu(A: Buffer((8, 8), float32), B: Buffer((8, 8), float32), D: Buffer((8, 8), float32)):
    with block("root"):
        reads()
        writes()
        C = alloc_buffer((8, 8), float32)
        for i0 in range(2):
            for j0 in range(2):
                for k in range(8):
                    for i1 in range(4):
                        for j1 in range(4):
                            with block("C"):
                                vi = axis.spatial(8, i0 * 4 + i1)
                                vj = axis.spatial(8, j0 * 4 + j1)
                                vk = axis.reduce(8, k)
                                reads(A[vi, vk], B[vk, vj])
                                writes(C[vi, vj])
                                with init():
                                    C[vi, vj] = 0.0
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        for i in range(8):
            for j in range(8):
                with block("D"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(8, j)
                    reads(C[vi, vj])
                    writes(D[vi, vj])
                    D[vi, vj] = max(C[vi, vj], 0.0)
)";

TEST(ReverseComputeAt, EpilogueFollowsEachOutputTile) {
  PrimFunc f = ParseFunc(kGemmRelu);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.ReverseComputeAt(sch.GetBlock("D"), loops[1]);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm_relu(A: Buffer((8, 8), float32), B: Buffer((8, 8), float32), D: Buffer((8, 8), float32)):
    with block("root"):
        reads()
        writes()
        C = alloc_buffer((8, 8), float32)
        for i0 in range(2):
            for j0 in range(2):
                for k in range(8):
                    for i1 in range(4):
                        for j1 in range(4):
                            with block("C"):
                                vi = axis.spatial(8, i0 * 4 + i1)
                                vj = axis.spatial(8, j0 * 4 + j1)
                                vk = axis.reduce(8, k)
                                reads(A[vi, vk], B[vk, vj])
                                writes(C[vi, vj])
                                with init():
                                    C[vi, vj] = 0.0
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
                for ax0 in range(4):
                    for ax1 in range(4):
                        with block("D"):
                            vi = axis.spatial(8, ax0 + i0 * 4)
                            vj = axis.spatial(8, ax1 + j0 * 4)
                            reads(C[vi, vj])
                            writes(D[vi, vj])
                            D[vi, vj] = max(C[vi, vj], 0.0)
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ReverseComputeAt, RejectsLoopInsideTheReduction) {
  // Under k the producer has not finished C: D would read partial sums. D's producer C is under
  // k, but D must not go there: the reduction loop k is not complete in one iteration. The
  // primitive's region logic alone would accept it, so the dependence check must catch it.
  PrimFunc f = ParseFunc(kGemmRelu);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "ReductionNotCompleteError", "reduction",
                      [&] { sch.ReverseComputeAt(d, loops[2]); });
}

// B over a 7 x 7 image, C its elementwise consumer.
const char* kImage = R"(@prim_func
def image(A: Buffer((7, 7), float32), C: Buffer((7, 7), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((7, 7), float32)
        for h in range(7):
            for w in range(7):
                with block("B"):
                    vh = axis.spatial(7, h)
                    vw = axis.spatial(7, w)
                    reads(A[vh, vw])
                    writes(B[vh, vw])
                    B[vh, vw] = A[vh, vw] * 2.0
        for h in range(7):
            for w in range(7):
                with block("C"):
                    vh = axis.spatial(7, h)
                    vw = axis.spatial(7, w)
                    reads(B[vh, vw])
                    writes(C[vh, vw])
                    C[vh, vw] = B[vh, vw] + 1.0
)";

TEST(ReverseComputeAt, RejectsAProducedRegionThatIsNoBox) {
  // B's 49 pixels fused and split by 6: one iteration of the outer loop writes pixels 6..11,
  // the end of row 0 and the start of row 1. Their hull is rows 0..1 x columns 0..6, half of it
  // not yet produced: C would read it (and parallel iterations would write it twice).
  PrimFunc f = ParseFunc(kImage);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  LoopRV pixels = sch.Fuse({loops[0], loops[1]});
  auto split = sch.Split(pixels, {std::monostate{}, 6});
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "NotExactRegionError", "cannot be shown to be a box",
                      [&] { sch.ReverseComputeAt(c, split[0]); });
  // The indices are named as such (DetectIterMap's word for them is "binding").
  ExpectScheduleError(sch, "NotExactRegionError", "write indices: index 0 (",
                      [&] { sch.ReverseComputeAt(c, split[0]); });
}

TEST(ReverseComputeAt, AcceptsAFusedLoopSplitIntoWholeRows) {
  // Split by 7, each iteration writes one whole row; by 14 (49 -> 56, guarded), two rows, the
  // last iteration one (rows (2a + f1 // 7), columns f1 % 7): boxes.
  for (int64_t rows : {1, 2}) {
    PrimFunc f = ParseFunc(kImage);
    Schedule sch(f);
    auto loops = sch.GetLoops(sch.GetBlock("B"));
    LoopRV pixels = sch.Fuse({loops[0], loops[1]});
    auto split = sch.Split(pixels, {std::monostate{}, 7 * rows});
    sch.ReverseComputeAt(sch.GetBlock("C"), split[0]);
    ExpectSameNumbers(f, sch.func());
  }
}

TEST(ReverseComputeAt, RejectsTwoProducersWritingDifferentElementsInOneIteration) {
  // Iteration i writes B[i] and B[i + 4]: each a box, their hull B[i..i+4] is not.
  PrimFunc f = ParseFunc(R"(@prim_func
def halves(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((8,), float32)
        for i in range(4):
            with block("B1"):
                vi = axis.spatial(4, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] * 2.0
            with block("B2"):
                vi = axis.spatial(4, i)
                reads(A[vi + 4])
                writes(B[vi + 4])
                B[vi + 4] = A[vi + 4] * 3.0
        for i in range(8):
            with block("C"):
                vi = axis.spatial(8, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] + 1.0
)");
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("B1"));
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "NotExactRegionError", "different regions",
                      [&] { sch.ReverseComputeAt(c, loops[0]); });
}

// A -> B -> C, with A computed at C's loop first: B must then go after A inside the loop.
const char* kChain = R"(@prim_func
def chain(X: Buffer((8,), float32), C: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        A = alloc_buffer((8,), float32)
        B = alloc_buffer((8,), float32)
        for i in range(8):
            with block("A"):
                vi = axis.spatial(8, i)
                reads(X[vi])
                writes(A[vi])
                A[vi] = X[vi] + 1.0
        for i in range(8):
            with block("B"):
                vi = axis.spatial(8, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] * 3.0
        for i0 in range(2):
            for i1 in range(4):
                with block("C"):
                    vi = axis.spatial(8, i0 * 4 + i1)
                    reads(B[vi])
                    writes(C[vi])
                    C[vi] = B[vi] - 2.0
)";

TEST(ComputeAt, SecondProducerGoesBeforeItsConsumerInTheLoop) {
  PrimFunc f = ParseFunc(kChain);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.ComputeAt(sch.GetBlock("B"), loops[0]);
  sch.ComputeAt(sch.GetBlock("A"), loops[0]);
  // The body of i0 is now [A's nest, B's nest, i1]: A feeds B, so it must come first.
  const auto* body = sch.Get(loops[0])->body.as<SeqStmtNode>();
  ASSERT_NE(body, nullptr);
  ASSERT_EQ(body->seq.size(), 3u);
  auto first_block = [](const Stmt& s) {
    std::string name;
    PreOrderVisit(s, [&](const Object* n) {
      if (const auto* b = n->as<BlockRealizeNode>(); b && name.empty()) name = b->block->name;
      return name.empty();
    });
    return name;
  };
  EXPECT_EQ(first_block(body->seq[0]), "A");
  EXPECT_EQ(first_block(body->seq[1]), "B");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ComputeAt, ProducerCannotGoUnderTheLoopBeforeItsConsumer) {
  PrimFunc f = ParseFunc(kChain);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  BlockRV a = sch.GetBlock("A");
  ExpectScheduleError(sch, "NotAllConsumersUnderLoopError", "block 'B'",
                      [&] { sch.ComputeAt(a, loops[0]); });
}

TEST(ComputeAt, ExplicitIndexMustRespectDependences) {
  PrimFunc f = ParseFunc(kChain);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  BlockRV b = sch.GetBlock("B");
  // The body of i0 is just the i1 loop, which holds the consumer: B must go at index 0.
  ExpectScheduleError(sch, "InsertionPointError", "index 1",
                      [&] { sch.ComputeAt(b, loops[0], false, /*index=*/1); });
  sch.ComputeAt(b, loops[0], false, /*index=*/0);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ComputeAt, TraceOfInstructionVersionOneStillLoads) {
  std::ifstream in(std::string(TIRTUNE_TEST_DATA_DIR) + "/traces/compute_at_v1.json");
  ASSERT_TRUE(in.good());
  nlohmann::json doc = nlohmann::json::parse(in);
  Trace trace = Trace::FromJson(doc);
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  trace.ApplyTo(sch);
  // Replayed as version 2 with automatic placement: the same result as today's ComputeAt.
  Schedule today(f);
  today.ComputeAt(today.GetBlock("B"), today.GetLoops(today.GetBlock("C"))[0]);
  EXPECT_TRUE(StructuralEqual(sch.func(), today.func()));
  EXPECT_EQ(sch.trace().ToJson()["insts"][3]["v"], 2);
  EXPECT_EQ(sch.trace().ToJson()["insts"][3]["attrs"]["index"], -1);
  ExpectSameNumbers(f, sch.func());
}

TEST(ComputeAt, RejectsConsumerOutsideTheLoop) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  auto b_loops = sch.GetLoops(b);
  // B's own loop does not contain C.
  ExpectScheduleError(sch, "LoopPositionError", "already under loop 'i'",
                      [&] { sch.ComputeAt(b, b_loops[0]); });
}

TEST(ComputeAt, RejectsBlockAfterTheLoop) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  auto b_loops = sch.GetLoops(sch.GetBlock("B"));
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "LoopPositionError", "must come before loop 'i'",
                      [&] { sch.ComputeAt(c, b_loops[0]); });
}

}  // namespace
}  // namespace tirtune
