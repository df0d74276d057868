// fuse_reduction_epilogue: a bias-add folds into the reduction's init exactly (both operand
// orders, broadcast and full biases); every epilogue that folding would change is rejected with
// an error that says why and names reverse_compute_at.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

// GEMM into `temp`, then an epilogue `D[vi, vj] = EPILOGUE`, with a bias C of shape BIAS_SHAPE.
std::string GemmWithEpilogue(const std::string& epilogue, const std::string& bias_shape,
                             const std::string& bias_region) {
  return R"(@prim_func
def gemm_epilogue(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer()" +
         bias_shape + R"(, float32), D: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((16, 12), float32)
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("matmul"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(temp[vi, vj])
                        with init():
                            temp[vi, vj] = 0.0
                        temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vk, vj]
        for i in range(16):
            for j in range(12):
                with block("epilogue"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j)
                    reads(temp[vi, vj], )" +
         bias_region + R"()
                    writes(D[vi, vj])
                    D[vi, vj] = )" +
         epilogue + "\n";
}

std::string Fused(const std::string& bias_shape, const std::string& bias_load) {
  return R"(@prim_func
def gemm_epilogue(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer()" +
         bias_shape + R"(, float32), D: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("matmul"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads()" +
         bias_load + R"(, A[vi, vk], B[vk, vj])
                        writes(D[vi, vj])
                        with init():
                            D[vi, vj] = )" +
         bias_load + R"(
                        D[vi, vj] = D[vi, vj] + A[vi, vk] * B[vk, vj]
)";
}

void ExpectFusedExactly(const std::string& before, const std::string& after) {
  PrimFunc f = ParseFunc(before);
  Schedule sch(f);
  sch.FuseReductionEpilogue(sch.GetBlock("matmul"), sch.GetBlock("epilogue"));
  ExpectFuncEqual(sch.func(), after);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(FuseReductionEpilogue, FullBiasTempFirst) {
  ExpectFusedExactly(GemmWithEpilogue("temp[vi, vj] + C[vi, vj]", "(16, 12)", "C[vi, vj]"),
                     Fused("(16, 12)", "C[vi, vj]"));
}

TEST(FuseReductionEpilogue, FullBiasTempSecond) {
  ExpectFusedExactly(GemmWithEpilogue("C[vi, vj] + temp[vi, vj]", "(16, 12)", "C[vi, vj]"),
                     Fused("(16, 12)", "C[vi, vj]"));
}

TEST(FuseReductionEpilogue, BroadcastBiasTempFirst) {
  ExpectFusedExactly(GemmWithEpilogue("temp[vi, vj] + C[vj]", "(12,)", "C[vj]"),
                     Fused("(12,)", "C[vj]"));
}

TEST(FuseReductionEpilogue, BroadcastBiasTempSecond) {
  ExpectFusedExactly(GemmWithEpilogue("C[vj] + temp[vi, vj]", "(12,)", "C[vj]"),
                     Fused("(12,)", "C[vj]"));
}

TEST(FuseReductionEpilogue, BiasPerRow) {
  ExpectFusedExactly(GemmWithEpilogue("temp[vi, vj] + C[vi]", "(16,)", "C[vi]"),
                     Fused("(16,)", "C[vi]"));
}

// The epilogue's own iterator names and loop order do not matter: it is mapped through the
// indices of temp. Integer arithmetic makes the comparison exact.
TEST(FuseReductionEpilogue, EpilogueIteratorsAreMappedThroughTemp) {
  PrimFunc f = ParseFunc(R"(@prim_func
def int_gemm(A: Buffer((4, 6), int32), B: Buffer((6, 5), int32), C: Buffer((5, 4), int32), D: Buffer((4, 5), int32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((4, 5), int32)
        for i in range(4):
            for j in range(5):
                for k in range(6):
                    with block("matmul"):
                        vi = axis.spatial(4, i)
                        vj = axis.spatial(5, j)
                        vk = axis.reduce(6, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(temp[vi, vj])
                        with init():
                            temp[vi, vj] = int32(0)
                        temp[vi, vj] = A[vi, vk] * B[vk, vj] + temp[vi, vj]
        for b in range(5):
            for a in range(4):
                with block("epilogue"):
                    x = axis.spatial(5, b)
                    y = axis.spatial(4, a)
                    reads(temp[y, x], C[x, y])
                    writes(D[y, x])
                    D[y, x] = C[x, y] + temp[y, x]
)");
  Schedule sch(f);
  sch.FuseReductionEpilogue(sch.GetBlock("matmul"), sch.GetBlock("epilogue"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def int_gemm(A: Buffer((4, 6), int32), B: Buffer((6, 5), int32), C: Buffer((5, 4), int32), D: Buffer((4, 5), int32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for j in range(5):
                for k in range(6):
                    with block("matmul"):
                        vi = axis.spatial(4, i)
                        vj = axis.spatial(5, j)
                        vk = axis.reduce(6, k)
                        reads(C[vj, vi], A[vi, vk], B[vk, vj])
                        writes(D[vi, vj])
                        with init():
                            D[vi, vj] = C[vj, vi]
                        D[vi, vj] = A[vi, vk] * B[vk, vj] + D[vi, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func(), /*seed=*/11, /*tolerance=*/0.0);
}

TEST(FuseReductionEpilogue, AfterTilingTheReduction) {
  PrimFunc f = ParseFunc(GemmWithEpilogue("temp[vi, vj] + C[vj]", "(12,)", "C[vj]"));
  Schedule sch(f);
  BlockRV matmul = sch.GetBlock("matmul");
  auto loops = sch.GetLoops(matmul);
  auto k = sch.Split(loops[2], {std::monostate{}, int64_t{4}});
  sch.Reorder({k[0], loops[1]});
  sch.FuseReductionEpilogue(matmul, sch.GetBlock("epilogue"));
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(FuseReductionEpilogue, TheEpilogueAndTempAreGone) {
  Schedule sch(ParseFunc(GemmWithEpilogue("temp[vi, vj] + C[vj]", "(12,)", "C[vj]")));
  BlockRV epilogue = sch.GetBlock("epilogue");
  sch.FuseReductionEpilogue(sch.GetBlock("matmul"), epilogue);
  ExpectScheduleError(sch, "BlockNotFoundError", "'epilogue' no longer exists",
                      [&] { sch.GetLoops(epilogue); });
  std::string text = Print(sch.func());
  EXPECT_EQ(text.find("temp"), std::string::npos) << text;
}

// ---- Rejected epilogues: each would change the result if folded.

void ExpectNotExact(const std::string& epilogue, const std::string& reason) {
  Schedule sch(ParseFunc(GemmWithEpilogue(epilogue, "(12,)", "C[vj]")));
  BlockRV matmul = sch.GetBlock("matmul");
  BlockRV epi = sch.GetBlock("epilogue");
  ExpectScheduleError(sch, "NonExactEpilogueError", reason,
                      [&] { sch.FuseReductionEpilogue(matmul, epi); });
  ExpectScheduleError(sch, "NonExactEpilogueError", "use reverse_compute_at",
                      [&] { sch.FuseReductionEpilogue(matmul, epi); });
}

TEST(FuseReductionEpilogue, RejectsBiasRelu) {
  ExpectNotExact("max(temp[vi, vj] + C[vj], 0.0)",
                 "applies max to the reduction result (as ReLU or clipping do), and a fused "
                 "update would apply it to every partial sum");
}

TEST(FuseReductionEpilogue, RejectsReluWithZeroFirst) {
  ExpectNotExact("max(0.0, C[vj] + temp[vi, vj])", "applies max to the reduction result");
}

TEST(FuseReductionEpilogue, RejectsClip) {
  ExpectNotExact("min(max(temp[vi, vj], 0.0), 6.0)", "applies min and max to the reduction");
}

TEST(FuseReductionEpilogue, RejectsScaling) {
  ExpectNotExact("temp[vi, vj] * 2.0", "scales the reduction result");
}

TEST(FuseReductionEpilogue, RejectsScaledBiasAdd) {
  ExpectNotExact("temp[vi, vj] * 2.0 + C[vj]", "scales the reduction result");
}

TEST(FuseReductionEpilogue, RejectsSecondUseOfTemp) {
  ExpectNotExact("temp[vi, vj] + temp[vi, vj] * C[vj]", "uses the reduction result 'temp' 2 times");
}

TEST(FuseReductionEpilogue, RejectsSubtraction) {
  ExpectNotExact("C[vj] - temp[vi, vj]", "subtracts with the reduction result");
}

TEST(FuseReductionEpilogue, RejectsConstantAddend) {
  ExpectNotExact("temp[vi, vj] + 1.0", "its addend is not a load of a bias buffer");
}

TEST(FuseReductionEpilogue, RejectsMathFunction) {
  ExpectNotExact("exp(temp[vi, vj]) + C[vj]",
                 "applies a math function to the reduction result, and a fused update");
}

TEST(FuseReductionEpilogue, RejectsMaxReduction) {
  PrimFunc f = ParseFunc(R"(@prim_func
def row_max(A: Buffer((16, 8), float32), C: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((16,), float32)
        for i in range(16):
            for k in range(8):
                with block("rmax"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(temp[vi])
                    with init():
                        temp[vi] = -3.4028234663852886e+38
                    temp[vi] = max(temp[vi], A[vi, vk])
        for i in range(16):
            with block("epilogue"):
                vi = axis.spatial(16, i)
                reads(temp[vi], C[vi])
                writes(D[vi])
                D[vi] = temp[vi] + C[vi]
)");
  Schedule sch(f);
  BlockRV rmax = sch.GetBlock("rmax");
  BlockRV epi = sch.GetBlock("epilogue");
  ExpectScheduleError(sch, "NotSumReductionError", "its init does not store 0",
                      [&] { sch.FuseReductionEpilogue(rmax, epi); });
  ExpectScheduleError(sch, "NotSumReductionError", "use reverse_compute_at",
                      [&] { sch.FuseReductionEpilogue(rmax, epi); });
}

TEST(FuseReductionEpilogue, RejectsMaxReductionStartingAtZero) {
  PrimFunc f = ParseFunc(R"(@prim_func
def row_max(A: Buffer((16, 8), float32), C: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((16,), float32)
        for i in range(16):
            for k in range(8):
                with block("rmax"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(temp[vi])
                    with init():
                        temp[vi] = 0.0
                    temp[vi] = max(temp[vi], A[vi, vk])
        for i in range(16):
            with block("epilogue"):
                vi = axis.spatial(16, i)
                reads(temp[vi], C[vi])
                writes(D[vi])
                D[vi] = temp[vi] + C[vi]
)");
  Schedule sch(f);
  BlockRV rmax = sch.GetBlock("rmax");
  BlockRV epi = sch.GetBlock("epilogue");
  ExpectScheduleError(sch, "NotSumReductionError", "its update is not `temp = temp + x`",
                      [&] { sch.FuseReductionEpilogue(rmax, epi); });
}

TEST(FuseReductionEpilogue, RejectsTempWithASecondReader) {
  PrimFunc f = ParseFunc(R"(@prim_func
def two_readers(A: Buffer((16, 8), float32), C: Buffer((16,), float32), D: Buffer((16,), float32), E: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((16,), float32)
        for i in range(16):
            for k in range(8):
                with block("rsum"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(temp[vi])
                    with init():
                        temp[vi] = 0.0
                    temp[vi] = temp[vi] + A[vi, vk]
        for i in range(16):
            with block("epilogue"):
                vi = axis.spatial(16, i)
                reads(temp[vi], C[vi])
                writes(D[vi])
                D[vi] = temp[vi] + C[vi]
        for i in range(16):
            with block("other"):
                vi = axis.spatial(16, i)
                reads(temp[vi])
                writes(E[vi])
                E[vi] = temp[vi] * 0.5
)");
  Schedule sch(f);
  BlockRV rsum = sch.GetBlock("rsum");
  BlockRV epi = sch.GetBlock("epilogue");
  ExpectScheduleError(sch, "IntermediateUseError", "block 'other' also reads 'temp'",
                      [&] { sch.FuseReductionEpilogue(rsum, epi); });
}

TEST(FuseReductionEpilogue, RejectsTempThatIsAnOutput) {
  PrimFunc f = ParseFunc(R"(@prim_func
def temp_param(A: Buffer((16, 8), float32), C: Buffer((16,), float32), T: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for k in range(8):
                with block("rsum"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(T[vi])
                    with init():
                        T[vi] = 0.0
                    T[vi] = T[vi] + A[vi, vk]
        for i in range(16):
            with block("epilogue"):
                vi = axis.spatial(16, i)
                reads(T[vi], C[vi])
                writes(D[vi])
                D[vi] = T[vi] + C[vi]
)");
  Schedule sch(f);
  BlockRV rsum = sch.GetBlock("rsum");
  BlockRV epi = sch.GetBlock("epilogue");
  ExpectScheduleError(sch, "NotIntermediateError", "buffer 'T' written by block 'rsum'",
                      [&] { sch.FuseReductionEpilogue(rsum, epi); });
}

TEST(FuseReductionEpilogue, RejectsEpilogueOverPartOfTemp) {
  PrimFunc f = ParseFunc(R"(@prim_func
def half(A: Buffer((16, 8), float32), C: Buffer((8,), float32), D: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((16,), float32)
        for i in range(16):
            for k in range(8):
                with block("rsum"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(temp[vi])
                    with init():
                        temp[vi] = 0.0
                    temp[vi] = temp[vi] + A[vi, vk]
        for i in range(8):
            with block("epilogue"):
                vi = axis.spatial(8, i)
                reads(temp[vi], C[vi])
                writes(D[vi])
                D[vi] = temp[vi] + C[vi]
)");
  Schedule sch(f);
  BlockRV rsum = sch.GetBlock("rsum");
  BlockRV epi = sch.GetBlock("epilogue");
  ExpectScheduleError(sch, "EpilogueMappingError", "have different domains",
                      [&] { sch.FuseReductionEpilogue(rsum, epi); });
}

TEST(FuseReductionEpilogue, RejectsBlockBetweenThatReadsTheOutput) {
  PrimFunc f = ParseFunc(R"(@prim_func
def reads_d(A: Buffer((16, 8), float32), C: Buffer((16,), float32), D: Buffer((16,), float32), E: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((16,), float32)
        for i in range(16):
            for k in range(8):
                with block("rsum"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(temp[vi])
                    with init():
                        temp[vi] = 0.0
                    temp[vi] = temp[vi] + A[vi, vk]
        for i in range(16):
            with block("copy_d"):
                vi = axis.spatial(16, i)
                reads(D[vi])
                writes(E[vi])
                E[vi] = D[vi]
        for i in range(16):
            with block("epilogue"):
                vi = axis.spatial(16, i)
                reads(temp[vi], C[vi])
                writes(D[vi])
                D[vi] = temp[vi] + C[vi]
)");
  Schedule sch(f);
  BlockRV rsum = sch.GetBlock("rsum");
  BlockRV epi = sch.GetBlock("epilogue");
  ExpectScheduleError(sch, "IntermediateUseError", "block 'copy_d' between the two blocks",
                      [&] { sch.FuseReductionEpilogue(rsum, epi); });
}

TEST(FuseReductionEpilogue, DetailedMessageMarksTheEpilogue) {
  PrimFunc f = ParseFunc(GemmWithEpilogue("max(temp[vi, vj] + C[vj], 0.0)", "(12,)", "C[vj]"));
  Schedule sch(f);
  try {
    sch.FuseReductionEpilogue(sch.GetBlock("matmul"), sch.GetBlock("epilogue"));
    FAIL() << "expected NonExactEpilogueError";
  } catch (const ScheduleError& e) {
    std::string detailed = e.DetailedMessage(sch.func());
    EXPECT_NE(detailed.find("max(max(0 + -2, 0) + 3, 0) = 3"), std::string::npos) << detailed;
    // The line after the epilogue's header carries the mark.
    size_t header = detailed.find("with block(\"epilogue\"):\n");
    ASSERT_NE(header, std::string::npos) << detailed;
    size_t next = detailed.find('\n', header) + 1;
    std::string mark = detailed.substr(next, detailed.find('\n', next) - next);
    EXPECT_NE(mark.find("NonExactEpilogueError"), std::string::npos) << detailed;
  }
}

}  // namespace
}  // namespace tirtune
