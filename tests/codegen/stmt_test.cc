// Every statement kind compiled by the LLVM backend agrees with the interpreter: loops of every
// kind with their pragmas, conditionals, lets, stack and heap allocations, parallel loops
// (outlined onto the runtime pool, nested ones serial), and vector loads and stores (contiguous,
// gathered, scattered, broadcast). Also the calling convention's checks and the IR's attributes.
#include <gtest/gtest.h>

#include <thread>

#include "differential.h"
#include "tirtune/runtime/thread_pool.h"
#include "tirtune/support/error.h"

namespace tirtune::test_codegen {
namespace {

TEST(CodegenStmt, SerialLoopWithMinAndNestedLoops) {
  CheckText(R"(
@prim_func
def f(A: Buffer((96,), float32), B: Buffer((96,), float32)):
    for i in range(8, min=2):
        for j in range(12):
            B[(i - 2) * 12 + j] = A[(i - 2) * 12 + j] * 2.0 + float32(i)
)");
}

TEST(CodegenStmt, IfThenElseAndLetStmt) {
  CheckText(R"(
@prim_func
def f(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(64):
        with let(k, i % 7):
            if k < 3:
                B[i] = A[i] + float32(k)
            else:
                if A[i] > 0.0:
                    B[i] = A[i] * A[i]
    for i in range(64):
        if i // 8 == 3:
            B[i] = -1.0
)");
}

TEST(CodegenStmt, ReductionIntoAParameter) {
  CheckText(R"(
@prim_func
def matmul(A: Buffer((240,), float32), B: Buffer((300,), float32), C: Buffer((200,), float32)):
    for i in range(12):
        for j in range(20):
            if i < 10:
                C[i * 20 + j] = 0.0
                for k in range(15):
                    C[i * 20 + j] = C[i * 20 + j] + A[i * 15 + k] * B[k * 20 + j]
)",
            /*rtol=*/1e-5, /*atol=*/1e-5);
}

TEST(CodegenStmt, PragmasAndLoopKindsKeepResults) {
  CheckText(R"(
@prim_func
def f(A: Buffer((256,), float32), B: Buffer((256,), float32)):
    for i in range(16, annotations={"pragma_unroll": 4}):
        for j in range(16, annotations={"pragma_vectorize": 1}):
            B[i * 16 + j] = A[i * 16 + j] + 1.0
    for i in unroll(4):
        B[i] = B[i] * 3.0
    for i in range(7, annotations={"pragma_unroll": 1}):
        B[i + 100] = 0.5
)");
}

TEST(CodegenStmt, LoopMetadataCarriesThePragmas) {
  PrimFunc f = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((256,), float32), B: Buffer((256,), float32)):
    for i in range(16, annotations={"pragma_unroll": 4}):
        for j in range(16, annotations={"pragma_vectorize": 1}):
            B[i * 16 + j] = A[i * 16 + j] + 1.0
)");
  std::string ir = EmitLLVMIR(f, Target::Host(), /*optimized=*/false);
  EXPECT_NE(ir.find("!\"llvm.loop.unroll.count\", i32 4"), std::string::npos) << ir;
  EXPECT_NE(ir.find("!\"llvm.loop.vectorize.enable\", i1 true"), std::string::npos) << ir;
  EXPECT_NE(ir.find("ptr noalias align 64 dereferenceable(1024) %A"), std::string::npos) << ir;
  EXPECT_NE(ir.find("define i32 @f(ptr %args)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("\"target-cpu\"=\"" + Target::Host().mcpu + "\""), std::string::npos);
}

TEST(CodegenStmt, StackAndHeapAllocations) {
  std::string text = R"(
@prim_func
def f(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(4):
        with allocate(T, (16,), float32, scope="local"):
            for j in range(16):
                T[j] = A[i * 16 + j] * 2.0
            for j in range(16):
                B[i * 16 + j] = T[15 - j] + T[j]
    with allocate(G, (64,), float16):
        for j in range(64):
            G[j] = float16(B[j])
        for j in range(64):
            B[j] = float32(G[63 - j]) + 1.0
)";
  CheckText(text, 1e-5, 1e-5);
  CodegenOptions heap;
  heap.max_stack_bytes = 0;
  heap.max_stack_bytes_global = 0;
  CheckText(text, 1e-5, 1e-5, heap);
  PrimFunc f = ParsePrimFunc(text);
  EXPECT_NE(EmitLLVMIR(f, Target::Host(), false, heap).find("@tirtune_workspace_alloc"),
            std::string::npos);
  EXPECT_EQ(EmitLLVMIR(f, Target::Host(), false).find("@tirtune_workspace_alloc"),
            std::string::npos);
}

TEST(CodegenStmt, ParallelLoopCapturesVariablesAndBuffers) {
  CheckText(R"(
@prim_func
def f(A: Buffer((1000,), float32), B: Buffer((1000,), float32), S: Buffer((8,), int32)):
    with let(scale, A[0] * 0.0 + 3.0):
        with let(offset, 5):
            with allocate(W, (10,), float32, scope="local"):
                for k in range(10):
                    W[k] = float32(k) * scale
                for i in parallel(99, min=1):
                    with allocate(T, (10,), float32, scope="local"):
                        for j in range(10):
                            T[j] = A[i * 10 + j] + W[j]
                        for j in range(10):
                            B[i * 10 + j] = T[9 - j] * float32(offset)
    for p in parallel(8):
        S[p] = int32(p) * 2
)");
}

TEST(CodegenStmt, NestedParallelLoopsRunAndAgree) {
  CheckText(R"(
@prim_func
def f(A: Buffer((4096,), float32), B: Buffer((4096,), float32)):
    for i in parallel(64):
        for j in parallel(64):
            B[i * 64 + j] = A[j * 64 + i] + 1.0
)");
}

TEST(CodegenStmt, ParallelLoopWithHeapAllocationInside) {
  CodegenOptions heap;
  heap.max_stack_bytes = 0;
  CheckText(R"(
@prim_func
def f(A: Buffer((256,), float32), B: Buffer((256,), float32)):
    for i in parallel(16):
        with allocate(T, (16,), float32, scope="local"):
            for j in range(16):
                T[j] = A[i * 16 + j]
            for j in range(16):
                B[i * 16 + j] = T[j] + T[15 - j]
)",
            1e-6, 1e-6, heap);
}

TEST(CodegenStmt, ParallelLoopsUseSeveralThreads) {
  // With -num-cores=2 the loop is split into two chunks; the pool runs them concurrently.
  PrimFunc f = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((2048,), float32), B: Buffer((2048,), float32)):
    for i in parallel(2048):
        B[i] = A[i] + 1.0
)");
  Target t = Target::Parse("llvm -num-cores=2");
  std::unique_ptr<Kernel> k = JitCompile(f, t);
  ExpectMatchesInterpreter(f, *k, 5);
  EXPECT_NE(EmitLLVMIR(f, t, false).find("@tirtune_parallel_for(ptr @f.parallel_0"),
            std::string::npos);
}

TEST(CodegenStmt, VectorLoadsStoresRampsAndBroadcasts) {
  CheckText(R"(
@prim_func
def f(A: Buffer((64,), float32), B: Buffer((64,), float32), C: Buffer((64,), int64)):
    for i in range(16):
        B[ramp(i * 4, 1, 4)] = A[ramp(i * 4, 1, 4)] * broadcast(A[i], 4) + broadcast(1.0, 4)
    for i in range(8):
        C[ramp(i * 8, 1, 8)] = ramp(i, 3, 8) * broadcast(int64(2), 8)
)");
}

TEST(CodegenStmt, GathersAndScatters) {
  CheckText(R"(
@prim_func
def transpose(A: Buffer((256,), float32), B: Buffer((256,), float32)):
    for j in range(16):
        B[ramp(j * 16, 1, 16)] = A[ramp(j, 16, 16)]
    for j in range(16):
        B[ramp(j, 16, 16)] = A[ramp(j * 16, 1, 16)] + B[ramp(j, 16, 16)]
)");
}

TEST(CodegenStmt, VectorSelectsComparesAndCastsOfHalfAndBool) {
  CheckText(R"(
@prim_func
def f(A: Buffer((64,), float16), B: Buffer((64,), float32), M: Buffer((64,), bool), I: Buffer((64,), int8)):
    for i in range(8):
        M[ramp(i * 8, 1, 8)] = float32x8(A[ramp(i * 8, 1, 8)]) < B[ramp(i * 8, 1, 8)]
        A[ramp(i * 8, 1, 8)] = select(M[ramp(i * 8, 1, 8)], A[ramp(i * 8, 1, 8)], float16x8(B[ramp(i * 8, 1, 8)]) * broadcast(float16(2.0), 8))
        I[ramp(i * 8, 1, 8)] = int8x8(B[ramp(i * 8, 1, 8)] * broadcast(100.0, 8))
)");
}

TEST(CodegenStmt, ScalarStoredThroughAVectorIndexFillsEveryLane) {
  CheckText(R"(
@prim_func
def f(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(8):
        B[ramp(i * 8, 1, 8)] = A[i]
    for i in range(4):
        B[ramp(i, 4, 4)] = 7.0
)");
}

TEST(CodegenStmt, EvaluateAndInt32LoopVariables) {
  CheckText(R"(
@prim_func
def f(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in range(int32(32)):
        evaluate(i * 3)
        B[int64(i)] = A[31 - int64(i)]
    evaluate(0)
)");
}

TEST(CodegenStmt, DivisionByZeroDoesNotTrap) {
  // The interpreter rejects this; compiled code must simply not crash (it yields 0).
  PrimFunc f = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((4,), int32), B: Buffer((4,), int32)):
    for i in range(4):
        B[i] = A[i] // A[0] + A[i] % A[0] + A[i] / A[0]
)");
  std::unique_ptr<Kernel> k = JitCompile(f, Target::Host());
  NDArray a = NDArray::Empty({4}, DataType::Int(32)), b = NDArray::Empty({4}, DataType::Int(32));
  a.Fill(0);
  EXPECT_EQ(k->Run({a, b}), 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.GetDouble(i), 0);
}

TEST(CodegenStmt, RunChecksTheArguments) {
  PrimFunc f = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((8,), float32), B: Buffer((8,), int32)):
    for i in range(8):
        B[i] = int32(A[i])
)");
  std::unique_ptr<Kernel> k = JitCompile(f, Target::Host());
  ASSERT_EQ(k->params().size(), 2u);
  EXPECT_EQ(k->params()[1].dtype, DataType::Int(32));
  EXPECT_EQ(k->params()[1].num_elements, 8);
  NDArray a = NDArray::Empty({8}, DataType::Float(32));
  NDArray b = NDArray::Empty({8}, DataType::Int(32));
  EXPECT_THROW(k->Run({a}), UserError);
  EXPECT_THROW(k->Run({a, a}), UserError);
  EXPECT_THROW(k->Run({a, NDArray::Empty({9}, DataType::Int(32))}), UserError);
  EXPECT_EQ(k->Run({a, b}), 0);
}

TEST(CodegenStmt, UnloweredOrUnsupportedIrIsAUserError) {
  PrimFunc block_form = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((8,), float32)):
    with block("root"):
        for i in range(8):
            A[i] = 1.0
)");
  EXPECT_THROW(JitCompile(block_form, Target::Host()), UserError);
  PrimFunc two_dims = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((8, 8), float32)):
    for i in range(8):
        A[i, i] = 1.0
)");
  EXPECT_THROW(JitCompile(two_dims, Target::Host()), UserError);
  PrimFunc gpu = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((8,), float32)):
    for i in thread_binding(8, thread="threadIdx.x"):
        A[i] = 1.0
)");
  EXPECT_THROW(JitCompile(gpu, Target::Host()), UserError);
}

TEST(CodegenStmt, Znver5CodeUsesAvx512) {
  PrimFunc f = ParsePrimFunc(R"(
@prim_func
def f(A: Buffer((1024,), float32), B: Buffer((1024,), float32)):
    for i in range(1024):
        B[i] = A[i] * 2.0 + 1.0
)");
  std::string assembly = EmitAssembly(f, Target::Parse("llvm -mcpu=znver5"));
  EXPECT_NE(assembly.find("zmm"), std::string::npos) << assembly;
  std::string baseline = EmitAssembly(f, Target::Parse("llvm -mcpu=x86-64"));
  EXPECT_EQ(baseline.find("ymm"), std::string::npos);
  EXPECT_NE(baseline.find("xmm"), std::string::npos);
}

TEST(CodegenStmt, NoaliasBuffersVectorizeWithoutRuntimeChecks) {
  // Buffers are noalias both in the entry point and in outlined parallel bodies, so the loop
  // vectorizer needs no overlap checks between A and B.
  for (const char* kind : {"range", "parallel"}) {
    PrimFunc f = ParsePrimFunc(std::string(R"(
@prim_func
def f(A: Buffer((4096,), float32), B: Buffer((4096,), float32)):
    for i in )") + kind + R"((64):
        for j in range(64):
            B[i * 64 + j] = A[i * 64 + j] * 2.0 + B[i * 64 + j]
)");
    std::string ir = EmitLLVMIR(f, Target::Parse("llvm -mcpu=znver5"), /*optimized=*/true);
    SCOPED_TRACE(kind);
    EXPECT_EQ(ir.find("vector.memcheck"), std::string::npos) << ir;
    EXPECT_NE(ir.find("x float>"), std::string::npos) << ir;
  }
}

}  // namespace
}  // namespace tirtune::test_codegen
