// GPU lowering and the GPU-semantics executor: hand-written GPU schedules (bind, split, shared
// and local caches) of an elementwise operator, a reduction and GEMM lower to kernels that give
// the interpreter's numbers when every thread runs phase by phase; each GPU pass on its own; the
// schedules a GPU cannot run are refused with a message that says why; and planted mistakes (a
// missing barrier, a barrier only some threads reach) are caught by the executor.
#include <gtest/gtest.h>

#include "../common/gpu_schedules.h"
#include "gpu_check.h"
#include "lower_check.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::testing {
namespace {

using gpu_schedules::Elementwise;
using gpu_schedules::F;
using gpu_schedules::kInfer;
using gpu_schedules::RowSum;
using gpu_schedules::ScheduledGemm;
using gpu_schedules::Shape;

const GpuLimits kSm90 = GpuLimits();

int CountBarriers(const Stmt& s) {
  int n = 0;
  PreOrderVisit(s, [&](const Object* node) {
    n += node->kind() == NodeKind::kBarrier;
    return true;
  });
  return n;
}

// Removes every barrier: the planted mistake the executor must catch.
class BarrierRemover : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const BarrierNode* /*op*/) override { return MakeEvaluate(Bool(true)); }
};

TEST(LowerGpu, ElementwiseSplitAcrossBlocksAndThreadsGivesTheInterpretersNumbers) {
  PrimFunc f = Elementwise();
  Schedule sch(f);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B"));
  LoopRV fused = sch.Fuse(loops);
  std::vector<LoopRV> parts = sch.Split(fused, {kInfer, F(128)});
  sch.Bind(parts[0], "blockIdx.x");
  sch.Bind(parts[1], "threadIdx.x");
  GpuModule module = LowerGpu(sch.func(), kSm90);
  ASSERT_EQ(module.kernels.size(), 1u);
  const GpuKernel& k = module.kernels[0];
  EXPECT_EQ(k.name, "scale_kernel0");
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{16, 1, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(k.params.size(), 2u);
  EXPECT_TRUE(k.shared.empty());
  EXPECT_EQ(CountBarriers(k.body), 0);
  EXPECT_EQ(CompareWithInterpreter(f, module), "");
}

TEST(LowerGpu, TwoDimensionalLaunchWithVthreadsGivesTheInterpretersNumbers) {
  PrimFunc f = Elementwise();
  Schedule sch(f);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B"));
  std::vector<LoopRV> is = sch.Split(loops[0], {F(4), F(2), F(8)});
  std::vector<LoopRV> js = sch.Split(loops[1], {F(2), F(16)});
  sch.Reorder({is[0], js[0], is[1], is[2], js[1]});
  sch.Bind(is[0], "blockIdx.y");
  sch.Bind(js[0], "blockIdx.x");
  sch.Bind(is[1], "vthread.x");
  sch.Bind(is[2], "threadIdx.y");
  sch.Bind(js[1], "threadIdx.x");
  GpuModule module = LowerGpu(sch.func(), kSm90);
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].grid, (std::array<int64_t, 3>{2, 4, 1}));
  EXPECT_EQ(module.kernels[0].block, (std::array<int64_t, 3>{16, 8, 1}));
  EXPECT_EQ(CompareWithInterpreter(f, module), "");
}

TEST(LowerGpu, ReductionPerThreadGivesTheInterpretersNumbers) {
  PrimFunc f = RowSum();
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  BlockRV write_back = sch.CacheWrite(b, /*write_index=*/0, StorageScope::kLocal);
  std::vector<LoopRV> loops = sch.GetLoops(b);
  std::vector<LoopRV> is = sch.Split(loops[0], {kInfer, F(32)});
  sch.Bind(is[0], "blockIdx.x");
  sch.Bind(is[1], "threadIdx.x");
  sch.ReverseComputeAt(write_back, is[1]);
  GpuModule module = LowerGpu(sch.func(), kSm90);
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].block[0], 32);
  EXPECT_EQ(CompareWithInterpreter(f, module), "");
}

TEST(LowerGpu, GemmWithSharedTilesAndALocalAccumulatorGivesTheInterpretersNumbers) {
  PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  GpuModule module = LowerGpu(ScheduledGemm(), kSm90);
  ASSERT_EQ(module.kernels.size(), 1u);
  const GpuKernel& k = module.kernels[0];
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{16, 1, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{16, 1, 1}));
  ASSERT_EQ(k.shared.size(), 2u) << PrintGpuModule(module);
  EXPECT_EQ(k.SharedBytes(), 2 * 16 * 8 * 4);
  // One barrier between the fetch and the multiply, one before the next slice's fetch.
  EXPECT_EQ(CountBarriers(k.body), 2) << PrintGpuModule(module);
  EXPECT_EQ(CompareWithInterpreter(f, module), "") << PrintGpuModule(module);
}

TEST(LowerGpu, GemmWithoutSharedMemoryNeedsNoBarrier) {
  PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  GpuModule module = LowerGpu(ScheduledGemm(/*with_shared=*/false), kSm90);
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(CountBarriers(module.kernels[0].body), 0);
  EXPECT_EQ(CompareWithInterpreter(f, module), "");
}

TEST(LowerGpu, StagesBoundApartBecomeKernelsWithAGlobalIntermediate) {
  te::Tensor a = te::Placeholder(Shape({256}), DataType::Float(32), "A");
  te::Tensor t = te::Compute(
      Shape({256}), {"i"},
      [&](const std::vector<Var>& v) { return a(v[0]) + FloatImm(DataType::Float(32), 1.0); }, "T");
  te::Tensor b = te::Compute(
      Shape({256}), {"i"},
      [&](const std::vector<Var>& v) { return t(IntImm(DataType::Index(), 255) - v[0]) * t(v[0]); },
      "B");
  PrimFunc f = te::CreatePrimFunc({a, b}, "two_stages");
  Schedule sch(f);
  for (const char* name : {"T", "B"}) {
    std::vector<LoopRV> parts = sch.Split(sch.GetLoops(sch.GetBlock(name))[0], {kInfer, F(64)});
    sch.Bind(parts[0], "blockIdx.x");
    sch.Bind(parts[1], "threadIdx.x");
  }
  GpuModule module = LowerGpu(sch.func(), kSm90);
  ASSERT_EQ(module.kernels.size(), 2u);
  ASSERT_EQ(module.global_allocs.size(), 1u);
  EXPECT_EQ(module.global_allocs[0]->name, "T");
  EXPECT_EQ(module.kernels[1].name, "two_stages_kernel1");
  EXPECT_EQ(CompareWithInterpreter(f, module), "");
}

// MetaSchedule's CUDA tiling puts the shared caches under the thread loops (at the outer k loop
// inside threadIdx): compute_at covers what every thread of the GPU block reads, and the copy
// bound to the same threads fetches it together.
TEST(LowerGpu, ASharedCacheComputedUnderTheThreadLoopsHoldsTheBlocksTile) {
  PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> is = sch.Split(loops[0], {kInfer, F(4), F(4)});
  std::vector<LoopRV> js = sch.Split(loops[1], {kInfer, F(4), F(4)});
  std::vector<LoopRV> ks = sch.Split(loops[2], {kInfer, F(8)});
  sch.Reorder({is[0], js[0], is[1], js[1], ks[0], ks[1], is[2], js[2]});
  sch.Bind(is[0], "blockIdx.y");
  sch.Bind(js[0], "blockIdx.x");
  sch.Bind(is[1], "threadIdx.y");
  sch.Bind(js[1], "threadIdx.x");
  for (const char* input : {"A", "B"}) {
    BlockRV cache = sch.CacheRead(c, gpu_schedules::ReadIndex(sch, c, input),
                                  StorageScope::kShared);
    sch.ComputeAt(cache, ks[0]);
    std::vector<LoopRV> cl = sch.GetLoops(cache);  // by, bx, ty, tx, k0, ax0, ax1
    ASSERT_EQ(cl.size(), 7u);
    // The block's 16 x 8 tile of A (8 x 16 of B), not one thread's 4 x 8.
    EXPECT_EQ(*AsConstInt(sch.Get(cl[5])->extent) * *AsConstInt(sch.Get(cl[6])->extent), 128);
    std::vector<LoopRV> parts = sch.Split(sch.Fuse({cl[5], cl[6]}), {kInfer, F(4), F(4)});
    sch.Bind(parts[1], "threadIdx.y");
    sch.Bind(parts[2], "threadIdx.x");
  }
  GpuModule module = LowerGpu(sch.func(), kSm90);
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].SharedBytes(), 2 * 128 * 4) << PrintGpuModule(module);
  EXPECT_EQ(CompareWithInterpreter(f, module), "");
}

// ---- Cross-thread reductions (LowerCrossThreadReduction). ----

// RowSum (64 x 48) with each row's k split into `outer` x threads, the thread loop bound to
// threadIdx.x; the serial part inside each thread (`serial_inside`) or around the threads.
Schedule CrossThreadRowSum(int64_t threads, bool serial_inside) {
  Schedule sch(RowSum());
  BlockRV b = sch.GetBlock("B");
  std::vector<LoopRV> loops = sch.GetLoops(b);
  sch.Bind(loops[0], "blockIdx.x");
  std::vector<LoopRV> k = sch.Split(loops[1], {kInfer, F(threads)});
  if (serial_inside) sch.Reorder({k[1], k[0]});
  sch.Bind(k[1], "threadIdx.x");
  return sch;
}

TEST(LowerCrossThreadReduction, WarpShufflesGiveTheInterpretersNumbers) {
  for (bool inside : {true, false}) {
    SCOPED_TRACE(inside);
    GpuModule module = LowerGpu(CrossThreadRowSum(16, inside).func(), kSm90);
    std::string text = PrintGpuModule(module);
    EXPECT_NE(text.find("warp_shuffle_xor"), std::string::npos) << text;
    EXPECT_EQ(text.find("shared"), std::string::npos) << text;  // 16 lanes: one warp
    EXPECT_EQ(CountBarriers(module.kernels[0].body), 0) << text;
    EXPECT_EQ(CompareWithInterpreter(RowSum(), module), "");
  }
}

TEST(LowerCrossThreadReduction, SharedMemoryWhenTheThreadsAreNoPowerOfTwo) {
  for (bool inside : {true, false}) {
    SCOPED_TRACE(inside);
    GpuModule module = LowerGpu(CrossThreadRowSum(24, inside).func(), kSm90);
    std::string text = PrintGpuModule(module);
    EXPECT_EQ(text.find("warp_shuffle_xor"), std::string::npos) << text;
    EXPECT_EQ(module.kernels[0].shared.size(), 1u) << text;
    EXPECT_GE(CountBarriers(module.kernels[0].body), 1) << text;
    EXPECT_EQ(CompareWithInterpreter(RowSum(), module), "");
  }
}

TEST(LowerCrossThreadReduction, ThreadLoopsNotAroundTheBlockAreRefused) {
  // A stage between the thread loop and the block: the threads would each add into B.
  Schedule sch(RowSum());
  BlockRV b = sch.GetBlock("B");
  std::vector<LoopRV> loops = sch.GetLoops(b);
  sch.Bind(loops[0], "blockIdx.x");
  std::vector<LoopRV> k = sch.Split(loops[1], {kInfer, F(16)});
  sch.Bind(k[0], "threadIdx.x");  // the outer part on threads, a serial loop between
  BlockRV cache = sch.CacheRead(b, 0, StorageScope::kLocal);
  sch.ComputeAt(cache, k[1]);
  try {
    LowerGpu(sch.func(), kSm90);
    FAIL() << "lowered";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("block 'B' reduces across GPU threads"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuExecutor, AWarpShuffleOnlySomeLanesReachIsDivergence) {
  GpuModule module = LowerGpu(CrossThreadRowSum(16, true).func(), kSm90);
  GpuKernel& k = module.kernels[0];
  // Lanes 8..15 skip the whole kernel, so lanes 0..7 wait at the first shuffle alone.
  Expr half = MakeBinary(NodeKind::kLT, k.thread_idx[0], IntImm(DataType::Index(), 8));
  k.body = MakeIfThenElse(half, k.body);
  try {
    ExecuteWithRandomInputs(module, 7);
    FAIL() << "no divergence reported";
  } catch (const GpuRaceError& e) {
    EXPECT_NE(std::string(e.what()).find("warp divergence in block (0, 0, 0)"), std::string::npos)
        << e.what();
  }
}

TEST(GpuExecutor, AMissingBarrierIsARaceOnSharedMemory) {
  GpuModule module = LowerGpu(ScheduledGemm(), kSm90);
  module.kernels[0].body = BarrierRemover().VisitStmt(module.kernels[0].body);
  try {
    ExecuteWithRandomInputs(module, 7);
    FAIL() << "no race reported";
  } catch (const GpuRaceError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("race on shared buffer"), std::string::npos) << what;
    EXPECT_NE(what.find("block (0, 0, 0) of kernel gemm_kernel0"), std::string::npos) << what;
    EXPECT_NE(what.find("since the last sync_threads()"), std::string::npos) << what;
  }
}

TEST(GpuExecutor, OnlyTheBackEdgeBarrierMissingIsARaceToo) {
  GpuModule module = LowerGpu(ScheduledGemm(), kSm90);
  // Keep the first barrier of the k-loop, drop the one at its end.
  class DropLastBarrier : public StmtMutator {
   public:
    using StmtMutator::VisitStmt_;
    Stmt VisitStmt_(const SeqStmtNode* op) override {
      Stmt visited = StmtMutator::VisitStmt_(op);
      const auto* seq = visited.as<SeqStmtNode>();
      if (seq == nullptr || seq->seq.back()->kind() != NodeKind::kBarrier) return visited;
      std::vector<Stmt> kept(seq->seq.begin(), seq->seq.end() - 1);
      return MakeSeq(kept);
    }
  };
  module.kernels[0].body = DropLastBarrier().VisitStmt(module.kernels[0].body);
  ASSERT_EQ(CountBarriers(module.kernels[0].body), 1);
  EXPECT_THROW(ExecuteWithRandomInputs(module, 7), GpuRaceError);
}

TEST(GpuExecutor, ABarrierOnlySomeThreadsReachIsDivergence) {
  GpuModule module = LowerGpu(ScheduledGemm(), kSm90);
  GpuKernel& k = module.kernels[0];
  Expr half = MakeBinary(NodeKind::kLT, k.thread_idx[0], IntImm(DataType::Index(), 8));
  k.body = MakeSeq({MakeIfThenElse(half, MakeBarrier()), k.body});
  try {
    ExecuteWithRandomInputs(module, 7);
    FAIL() << "no divergence reported";
  } catch (const GpuRaceError& e) {
    EXPECT_NE(std::string(e.what()).find("barrier divergence in block (0, 0, 0)"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuExecutor, ABarrierOutsideTheExecutorIsAnInterpError) {
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((4,), float32)):
    A[0] = 1.0
    sync_threads()
)");
  EXPECT_EQ(Print(ParseFunc(Print(f))), Print(f));
  EXPECT_THROW(InterpretWithRandomInputs(f, 1), InterpError);
}

// ---- The passes one at a time, on loop-form IR. ----

std::string Problems(const std::string& text, const GpuLimits& limits = kSm90) {
  std::vector<std::string> problems = VerifyThreadBinding(ParseFunc(text), limits);
  std::string out;
  for (const std::string& p : problems) out += p + "\n";
  return out;
}

TEST(VerifyThreadBinding, AStoreOnTheHostAsksWhetherYouForgotToBind) {
  std::string p = Problems(R"(@prim_func
def f(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(64):
        B[i] = A[i]
)");
  EXPECT_NE(p.find("loop 'i' runs on the host"), std::string::npos) << p;
  p = Problems(R"(@prim_func
def f(A: Buffer((1,), float32)):
    A[0] = 1.0
)");
  EXPECT_NE(p.find("the store to 'A' runs on the host"), std::string::npos) << p;
  EXPECT_NE(p.find("did you forget to bind?"), std::string::npos) << p;
}

TEST(VerifyThreadBinding, LimitsOfTheTargetAreChecked) {
  const std::string text = R"(@prim_func
def f(A: Buffer((4096,), float32)):
    for bx in thread_binding(4, thread="blockIdx.x"):
        for tx in thread_binding(1024, thread="threadIdx.x"):
            A[bx * 1024 + tx] = 0.0
)";
  EXPECT_EQ(Problems(text), "");
  GpuLimits small;
  small.max_threads_per_block = 512;
  EXPECT_NE(Problems(text, small).find("1024 threads per block; the target allows 512"),
            std::string::npos);
  std::string p = Problems(R"(@prim_func
def f(A: Buffer((4096,), float32)):
    for tz in thread_binding(128, thread="threadIdx.z"):
        for tx in thread_binding(32, thread="threadIdx.x"):
            A[tz * 32 + tx] = 0.0
)");
  EXPECT_NE(p.find("threadIdx.z has extent 128 (loop 'tz'); CUDA allows at most 64"),
            std::string::npos)
      << p;
}

TEST(VerifyThreadBinding, OneExtentPerAxisInAKernel) {
  std::string p = Problems(R"(@prim_func
def f(A: Buffer((64,), float32)):
    for bx in thread_binding(1, thread="blockIdx.x"):
        for tx in thread_binding(32, thread="threadIdx.x"):
            A[tx] = 0.0
        for tx2 in thread_binding(64, thread="threadIdx.x"):
            A[tx2] = 1.0
)");
  EXPECT_NE(p.find("threadIdx.x has extent 32 (loop 'tx') and 64 (loop 'tx2') in one kernel"),
            std::string::npos)
      << p;
}

TEST(VerifyThreadBinding, ParallelLoopsVthreadsAndMisplacedBuffersAreRefused) {
  std::string p = Problems(R"(@prim_func
def f(A: Buffer((64,), float32)):
    for bx in thread_binding(2, thread="blockIdx.x"):
        for v in thread_binding(16, thread="vthread.x"):
            for i in parallel(2):
                A[bx * 32 + v * 2 + i] = 0.0
)");
  EXPECT_NE(p.find("loop 'i' is parallel inside a kernel"), std::string::npos) << p;
  EXPECT_NE(p.find("16 virtual threads; the target allows 8"), std::string::npos) << p;
  p = Problems(R"(@prim_func
def f(A: Buffer((64,), float32)):
    for tx in thread_binding(64, thread="threadIdx.x"):
        with allocate(S, (64,), float32, scope="shared"):
            S[tx] = 1.0
            A[tx] = S[tx]
)");
  EXPECT_NE(p.find("shared buffer 'S' is allocated inside a threadIdx loop"), std::string::npos)
      << p;
  p = Problems(R"(@prim_func
def f(A: Buffer((64,), float32)):
    for tx in thread_binding(64, thread="threadIdx.x"):
        with allocate(T, (64,), float32):
            T[tx] = 1.0
            A[tx] = T[tx]
)");
  EXPECT_NE(p.find("global buffer 'T' is allocated inside a kernel"), std::string::npos) << p;
}

TEST(VerifyThreadBinding, LocalBuffersPastTheLocalMemoryLimitAreRefused) {
  // 2 vthreads x 2,048 floats x 4 bytes = 16 KiB: the limit exactly.
  const std::string text = R"(@prim_func
def f(A: Buffer((64,), float32)):
    for bx in thread_binding(1, thread="blockIdx.x"):
        for v in thread_binding(2, thread="vthread.x"):
            for tx in thread_binding(32, thread="threadIdx.x"):
                with allocate(C_local, (SIZE,), float32, scope="local"):
                    C_local[0] = 1.0
                    A[v * 32 + tx] = C_local[0]
)";
  auto with_size = [&](const std::string& size) {
    std::string t = text;
    return t.replace(t.find("SIZE"), 4, size);
  };
  EXPECT_EQ(Problems(with_size("2048")), "");
  std::string p = Problems(with_size("2049"));
  EXPECT_NE(p.find("the kernel of loop 'bx' has 16392 bytes of local buffers per thread (the "
                   "largest 'C_local'); the target allows 16384"),
            std::string::npos)
      << p;
  GpuLimits small;
  small.max_local_memory_per_thread = 1024;
  EXPECT_NE(Problems(with_size("256"), small).find("the target allows 1024"), std::string::npos);
}

TEST(LowerGpu, AnUnboundFunctionIsAUserErrorNamingIt) {
  try {
    LowerGpu(Elementwise(), kSm90);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("scale cannot run on the GPU"), std::string::npos)
        << e.what();
  }
}

TEST(SplitHostDevice, BoundLoopsBecomeTheLaunchAndItsIndices) {
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((256,), float32), B: Buffer((256,), float32)):
    for bx in thread_binding(4, thread="blockIdx.x"):
        for v in thread_binding(2, thread="vthread.x"):
            for tx in thread_binding(32, thread="threadIdx.x"):
                B[bx * 64 + v * 32 + tx] = A[bx * 64 + v * 32 + tx]
)");
  GpuModule module = SplitHostDevice(f);
  ASSERT_EQ(module.kernels.size(), 1u);
  const GpuKernel& k = module.kernels[0];
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{32, 1, 1}));
  EXPECT_EQ(ToString(k.body),
            "for v in range(2):\n"
            "    B[blockIdx_x * 64 + v * 32 + threadIdx_x] = A[blockIdx_x * 64 + v * 32 + "
            "threadIdx_x]");
}

TEST(PlanGpuAllocations, BeyondStaticSharedMemoryIsDynamicAndBeyondTheOptInRefused) {
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((16384,), float32)):
    for bx in thread_binding(1, thread="blockIdx.x"):
        with allocate(S, (16384,), float32, scope="shared"):
            for tx in thread_binding(128, thread="threadIdx.x"):
                for i in range(128):
                    S[i * 128 + tx] = A[i * 128 + tx]
            for tx in thread_binding(128, thread="threadIdx.x"):
                for i in range(128):
                    A[i * 128 + tx] = S[16383 - i * 128 - tx]
)");
  GpuModule module = SplitHostDevice(f);
  // 64 KiB: beyond static shared memory, within sm_90's opt-in 227 KiB: dynamic.
  GpuKernel dynamic = PlanGpuAllocations(module.kernels[0], kSm90);
  EXPECT_TRUE(dynamic.dynamic_shared);
  EXPECT_EQ(dynamic.DynamicSharedBytes(), 65536);
  try {
    GpuLimits small;
    small.max_dynamic_shared_memory_per_block = 60000;
    PlanGpuAllocations(module.kernels[0], small);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("needs 65536 bytes of shared memory per block; the "
                                         "target allows 60000 (49152 without the opt-in)"),
              std::string::npos)
        << e.what();
  }
  GpuKernel planned = PlanGpuAllocations(module.kernels[0], [] {
    GpuLimits big;
    big.max_shared_memory_per_block = 65536;
    return big;
  }());
  ASSERT_EQ(planned.shared.size(), 1u);
  EXPECT_EQ(planned.SharedBytes(), 65536);
  // The two stages hand data over through shared memory: a barrier between them.
  GpuKernel synced = InsertBarriers(planned);
  EXPECT_EQ(CountBarriers(synced.body), 1);
  GpuModule runnable = module;
  runnable.kernels[0] = synced;
  std::vector<NDArray> args = ExecuteWithRandomInputs(runnable, 3);
  NDArray a = MakeRandomArgs(f, 3)[0];
  EXPECT_EQ(args[0].GetDouble(0), a.GetDouble(16383));
  runnable.kernels[0] = planned;  // without the barrier
  EXPECT_THROW(ExecuteWithRandomInputs(runnable, 3), GpuRaceError);
}

TEST(InsertBarriers, NoBarrierUnderAThreadDependentCondition) {
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((64,), float32)):
    for bx in thread_binding(1, thread="blockIdx.x"):
        with allocate(S, (64,), float32, scope="shared"):
            for tx in thread_binding(64, thread="threadIdx.x"):
                if tx < 32:
                    S[tx] = A[tx]
                    A[tx] = S[63 - tx]
)");
  GpuKernel k = PlanGpuAllocations(SplitHostDevice(f).kernels[0], kSm90);
  EXPECT_EQ(CountBarriers(InsertBarriers(k).body), 0);
}

}  // namespace
}  // namespace tirtune::testing
