// get_producers / get_consumers: same-scope blocks linked through buffers (read-after-write and
// write-after-write), in program order.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

// B and E read A; C reads B; D reads B and C; E is independent of B. A nested scope holds F,
// which reads C but is not a sibling of the root's children.
const char* kDiamond = R"(@prim_func
def diamond(A: Buffer((16,), float32), D: Buffer((16,), float32), E: Buffer((16,), float32), G: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        C = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] + 1.0
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] * 2.0
        for i in range(16):
            with block("E"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(E[vi])
                E[vi] = A[vi] - 1.0
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(B[vi], C[vi])
                writes(D[vi])
                D[vi] = B[vi] + C[vi]
        with block("outer"):
            reads(C[0:16])
            writes(G[0:16])
            for i in range(16):
                with block("F"):
                    vi = axis.spatial(16, i)
                    reads(C[vi])
                    writes(G[vi])
                    G[vi] = C[vi]
)";

std::vector<std::string> Names(const Schedule& sch, const std::vector<BlockRV>& blocks) {
  std::vector<std::string> names;
  for (BlockRV b : blocks) names.push_back(sch.BlockName(b));
  return names;
}

using Strings = std::vector<std::string>;

TEST(GetProducersConsumers, ProducersAreEarlierWritersOfWhatTheBlockReads) {
  Schedule sch(ParseFunc(kDiamond));
  EXPECT_EQ(Names(sch, sch.GetProducers(sch.GetBlock("D"))), (Strings{"B", "C"}));
  EXPECT_EQ(Names(sch, sch.GetProducers(sch.GetBlock("C"))), (Strings{"B"}));
  EXPECT_EQ(Names(sch, sch.GetProducers(sch.GetBlock("B"))), Strings{});
  EXPECT_EQ(Names(sch, sch.GetProducers(sch.GetBlock("E"))), Strings{});
}

TEST(GetProducersConsumers, ConsumersAreLaterReadersOfWhatTheBlockWrites) {
  Schedule sch(ParseFunc(kDiamond));
  EXPECT_EQ(Names(sch, sch.GetConsumers(sch.GetBlock("B"))), (Strings{"C", "D"}));
  // "outer" reads C through its region; F is in another scope.
  EXPECT_EQ(Names(sch, sch.GetConsumers(sch.GetBlock("C"))), (Strings{"D", "outer"}));
  EXPECT_EQ(Names(sch, sch.GetConsumers(sch.GetBlock("D"))), Strings{});
}

TEST(GetProducersConsumers, OnlySiblingsInTheSameScopeCount) {
  Schedule sch(ParseFunc(kDiamond));
  EXPECT_EQ(Names(sch, sch.GetProducers(sch.GetBlock("F"))), Strings{});
  EXPECT_EQ(Names(sch, sch.GetProducers(sch.GetBlock("root"))), Strings{});
}

TEST(GetProducersConsumers, AReductionIsNotItsOwnProducer) {
  Schedule sch(ParseFunc(R"(@prim_func
def row_sum(A: Buffer((16, 8), float32), B: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for k in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(B[vi], A[vi, vk])
                    writes(B[vi])
                    with init():
                        B[vi] = 0.0
                    B[vi] = B[vi] + A[vi, vk]
)"));
  EXPECT_EQ(Names(sch, sch.GetProducers(sch.GetBlock("B"))), Strings{});
  EXPECT_EQ(Names(sch, sch.GetConsumers(sch.GetBlock("B"))), Strings{});
}

// After decompose_reduction the update block depends on the init block only by writing the same
// buffer after it.
TEST(GetProducersConsumers, WriteAfterWriteCounts) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV c = sch.GetBlock("C");
  BlockRV init = sch.DecomposeReduction(c, sch.GetLoops(c)[0]);
  EXPECT_EQ(Names(sch, sch.GetConsumers(init)), (Strings{"C"}));
  EXPECT_EQ(Names(sch, sch.GetProducers(c)), (Strings{"C_init"}));
}

TEST(GetProducersConsumers, RecordedAsPureInstructionsThatReplay) {
  PrimFunc f = ParseFunc(kDiamond);
  Schedule sch(f);
  std::vector<BlockRV> consumers = sch.GetConsumers(sch.GetBlock("B"));
  sch.GetProducers(sch.GetBlock("D"));
  ASSERT_EQ(sch.trace().insts().size(), 4u);
  EXPECT_EQ(sch.trace().insts()[1].kind->name, "GetConsumers");
  EXPECT_TRUE(sch.trace().insts()[1].kind->is_pure);
  EXPECT_EQ(sch.trace().insts()[1].outputs.size(), 2u);
  ExpectTraceRoundTrip(sch, f);
  // The consumer handles are usable by later primitives.
  sch.Parallel(sch.GetLoops(consumers[0])[0]);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

}  // namespace
}  // namespace tirtune
