// Per-store features: hand-written lowered functions give the expected values in named columns,
// schedules that differ give different features, and the parallel extraction equals the serial one.
#include "tirtune/search/feature.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "../common/gpu_gemm_sample.h"
#include "tirtune/codegen/target.h"
#include "tirtune/ir/parser.h"
#include "tirtune/lower/lower.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/search/space.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

// log2(1 + x), the scaling of most columns.
float Slog(double x) { return static_cast<float>(std::log2(1.0 + x)); }

// The value of the column called `name` in row `row`.
float Column(const FeatureMatrix& f, size_t row, const std::string& name) {
  const std::vector<std::string>& names = FeatureNames();
  auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << "no feature column " << name;
  if (it == names.end() || row >= f.rows) return NAN;
  return f.row(row)[it - names.begin()];
}

// The lowered naive n^3 GEMM: the init store under `if k == 0`, then the update.
std::string NaiveGemm(int n) {
  return fmt::format(R"(@prim_func
def gemm(A: Buffer(({nn},), float32), B: Buffer(({nn},), float32), C: Buffer(({nn},), float32)):
    for i in range({n}):
        for j in range({n}):
            for k in range({n}):
                if k == 0:
                    C[i * {n} + j] = 0.0
                C[i * {n} + j] = C[i * {n} + j] + A[i * {n} + k] * B[j + k * {n}]
)",
                     fmt::arg("n", n), fmt::arg("nn", n * n));
}
TEST(FeatureNames, NameEveryColumnOnce) {
  const std::vector<std::string>& names = FeatureNames();
  ASSERT_EQ(names.size(), FeatureMatrix::kNumFeatures);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(names.front(), "float_mad");
  EXPECT_EQ(names.back(), "share_B2_lines");
}

TEST(ExtractFeatures, GivesOneRowPerStoreStatement) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(NaiveGemm(64)));
  EXPECT_EQ(f.rows, 2u);
  EXPECT_EQ(f.data.size(), 2 * FeatureMatrix::kNumFeatures);
}

TEST(ExtractFeatures, FunctionWithoutStoresGivesNoRows) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def nothing(A: Buffer((4,), float32)):
    evaluate(0)
)"));
  EXPECT_EQ(f.rows, 0u);
  EXPECT_TRUE(f.data.empty());
}

TEST(ExtractFeatures, GemmUpdateCountsOneMultiplyAddPerIteration) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(NaiveGemm(64)));
  // Row 1 is the update C = C + A * B inside three loops of 64.
  EXPECT_FLOAT_EQ(Column(f, 1, "float_mad"), Slog(64.0 * 64 * 64));
  EXPECT_FLOAT_EQ(Column(f, 1, "float_addsub"), 0);
  EXPECT_FLOAT_EQ(Column(f, 1, "float_mul"), 0);
  EXPECT_FLOAT_EQ(Column(f, 1, "num_loops"), Slog(3));
  EXPECT_FLOAT_EQ(Column(f, 1, "outer_prod"), Slog(64.0 * 64 * 64));
  EXPECT_FLOAT_EQ(Column(f, 1, "vec_pos_none"), 1);
  EXPECT_FLOAT_EQ(Column(f, 1, "parallel_num"), 0);
  // The init store does no float arithmetic; its guard k == 0 is one int comparison per k.
  EXPECT_FLOAT_EQ(Column(f, 0, "float_mad"), 0);
  EXPECT_FLOAT_EQ(Column(f, 0, "int_cmp"), Slog(64.0 * 64 * 64));
}

TEST(ExtractFeatures, GemmBuffersAreSortedByCacheLinesWithTheirStrides) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(NaiveGemm(64)));
  // B walks down a column (stride 64: a new line every k), A along a row (a line per 16 k), C
  // stays put over k: B, A, C.
  EXPECT_FLOAT_EQ(Column(f, 1, "B0_acc_read"), 1);
  EXPECT_FLOAT_EQ(Column(f, 1, "B0_stride"), Slog(64));
  EXPECT_FLOAT_EQ(Column(f, 1, "B0_lines"), Slog(64.0 * 64 * 64));
  EXPECT_FLOAT_EQ(Column(f, 1, "B0_unique_bytes"), Slog(4096 * 4));
  EXPECT_FLOAT_EQ(Column(f, 1, "B1_stride"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 1, "B1_lines"), Slog(64.0 * 64 * 64 / 16));
  // C is read and written, and reused across the k loop (64 times, one iteration apart).
  EXPECT_FLOAT_EQ(Column(f, 1, "B2_acc_readwrite"), 1);
  EXPECT_FLOAT_EQ(Column(f, 1, "B2_reuse_loop_multiple_read"), 1);
  EXPECT_FLOAT_EQ(Column(f, 1, "B2_reuse_ct"), Slog(64));
  EXPECT_FLOAT_EQ(Column(f, 1, "B2_reuse_dis_iter"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 1, "B3_bytes"), 0);
}

TEST(ExtractFeatures, VectorStoreCountsAsInnermostVectorizedLoop) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def scale(A: Buffer((1024,), float32), B: Buffer((1024,), float32)):
    for i in parallel(16):
        for j in range(8):
            B[ramp(i * 64 + j * 8, 1, 8)] = A[ramp(i * 64 + j * 8, 1, 8)] * broadcast(2.0, 8)
)"));
  ASSERT_EQ(f.rows, 1u);
  EXPECT_FLOAT_EQ(Column(f, 0, "vec_num"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 0, "vec_len"), Slog(8));
  EXPECT_FLOAT_EQ(Column(f, 0, "vec_pos_inner_spatial"), 1);
  EXPECT_FLOAT_EQ(Column(f, 0, "parallel_num"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 0, "parallel_prod"), Slog(16));
  EXPECT_FLOAT_EQ(Column(f, 0, "parallel_pos_outer_spatial"), 1);
  // Every lane multiplies: 16 * 8 * 8 float multiplications.
  EXPECT_FLOAT_EQ(Column(f, 0, "float_mul"), Slog(1024));
  EXPECT_FLOAT_EQ(Column(f, 0, "B0_bytes"), Slog(1024 * 4));
  EXPECT_FLOAT_EQ(Column(f, 0, "B0_unique_bytes"), Slog(1024 * 4));
  EXPECT_FLOAT_EQ(Column(f, 0, "B0_stride"), Slog(1));
}

TEST(ExtractFeatures, GatheredLoadsGuardsAndCopiesHaveColumnsOfTheirOwn) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def shapes(A: Buffer((1024,), float32), B: Buffer((128,), float32), C: Buffer((130,), float32)):
    for i in range(16):
        B[ramp(i * 8, 1, 8)] = A[ramp(i * 64, 8, 8)] * broadcast(2.0, 8)
    for i in range(13):
        for j in range(10):
            if i * 10 + j < 128:
                C[i * 10 + j] = B[i * 10 + j]
            else:
                C[i * 10 + j] = 0.0
)"));
  ASSERT_EQ(f.rows, 3u);
  // Row 0: a vector store whose load strides by 8 elements per lane: 16 gathers, no guard, no copy.
  EXPECT_FLOAT_EQ(Column(f, 0, "gathered_loads"), Slog(16));
  EXPECT_FLOAT_EQ(Column(f, 0, "guard_num"), 0);
  EXPECT_FLOAT_EQ(Column(f, 0, "copy_iters"), 0);
  // Row 1: the guarded copy, one condition with no loop inside it.
  EXPECT_FLOAT_EQ(Column(f, 1, "gathered_loads"), 0);
  EXPECT_FLOAT_EQ(Column(f, 1, "guard_num"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 1, "guard_inner_iters"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 1, "copy_iters"), Slog(130));
  // Row 2: the padding's zeros are a store of a constant, not a copy.
  EXPECT_FLOAT_EQ(Column(f, 2, "copy_iters"), 0);
  EXPECT_FLOAT_EQ(Column(f, 2, "guard_num"), Slog(1));
}

TEST(ExtractFeatures, SiblingStoresDifferingInOffsetsAreOneRowInAnUnrolledLoop) {
  // What UnrollLoops leaves of `for c in unroll(4): B[i * 4 + c] = A[i * 4 + c]`.
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def copy(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(16):
        B[i * 4] = A[i * 4]
        B[i * 4 + 1] = A[i * 4 + 1]
        B[i * 4 + 2] = A[i * 4 + 2]
        B[i * 4 + 3] = A[i * 4 + 3]
)"));
  ASSERT_EQ(f.rows, 1u);
  EXPECT_FLOAT_EQ(Column(f, 0, "unroll_num"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 0, "unroll_len"), Slog(4));
  EXPECT_FLOAT_EQ(Column(f, 0, "unroll_pos_inner_spatial"), 1);
  EXPECT_FLOAT_EQ(Column(f, 0, "auto_unroll_max_step"), Slog(4));
  EXPECT_FLOAT_EQ(Column(f, 0, "num_loops"), Slog(2));
  EXPECT_FLOAT_EQ(Column(f, 0, "outer_prod"), Slog(64));
  // The copies step through consecutive elements: all 64, one line per 16.
  EXPECT_FLOAT_EQ(Column(f, 0, "B0_unique_bytes"), Slog(64 * 4));
  EXPECT_FLOAT_EQ(Column(f, 0, "B0_stride"), Slog(1));
  EXPECT_FLOAT_EQ(Column(f, 0, "B0_lines"), Slog(4));
}

TEST(ExtractFeatures, UnrolledLoopCopiesWithTheirOwnLoopVariablesAreOneRow) {
  // gemm:16,16,16 with i split by 4 and the inner part unrolled outside j: four copies of the j
  // loop, each with a fresh loop variable.
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def gemm(A: Buffer((256,), float32), B: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i_0 in range(4):
        for k in range(16):
            for j in range(16):
                if k == 0:
                    C[i_0 * 64 + j] = 0.0
                C[i_0 * 64 + j] = C[i_0 * 64 + j] + A[i_0 * 64 + k] * B[j + k * 16]
            for j_1 in range(16):
                if k == 0:
                    C[i_0 * 64 + j_1 + 16] = 0.0
                C[i_0 * 64 + j_1 + 16] = C[i_0 * 64 + j_1 + 16] + A[i_0 * 64 + k + 16] * B[j_1 + k * 16]
            for j_2 in range(16):
                if k == 0:
                    C[i_0 * 64 + j_2 + 32] = 0.0
                C[i_0 * 64 + j_2 + 32] = C[i_0 * 64 + j_2 + 32] + A[i_0 * 64 + k + 32] * B[j_2 + k * 16]
            for j_3 in range(16):
                if k == 0:
                    C[i_0 * 64 + j_3 + 48] = 0.0
                C[i_0 * 64 + j_3 + 48] = C[i_0 * 64 + j_3 + 48] + A[i_0 * 64 + k + 48] * B[j_3 + k * 16]
)"));
  ASSERT_EQ(f.rows, 2u);
  EXPECT_FLOAT_EQ(Column(f, 1, "float_mad"), Slog(16.0 * 16 * 16));
  EXPECT_FLOAT_EQ(Column(f, 1, "unroll_len"), Slog(4));
  EXPECT_FLOAT_EQ(Column(f, 1, "unroll_pos_middle_spatial"), 1);
  EXPECT_FLOAT_EQ(Column(f, 1, "num_loops"), Slog(4));
  // A moves by 16 elements from copy to copy: all 256 elements are read.
  EXPECT_FLOAT_EQ(Column(f, 1, "B1_unique_bytes"), Slog(256 * 4));
}

TEST(ExtractFeatures, RegisterBlockIsTheLoopsInsideTheInnermostReuseLoop) {
  // k does not move the stored element: inside it, i1 (4) x j (4) x 16 lanes stay in registers.
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def gemm(A: Buffer((4096,), float32), B: Buffer((4096,), float32), C: Buffer((4096,), float32)):
    for i0 in range(16):
        for i1 in range(4):
            for j in range(4):
                C[ramp(i0 * 256 + i1 * 64 + j * 16, 1, 16)] = broadcast(0.0, 16)
        for k in range(64):
            for i1 in range(4):
                for j in range(4):
                    C[ramp(i0 * 256 + i1 * 64 + j * 16, 1, 16)] = C[ramp(i0 * 256 + i1 * 64 + j * 16, 1, 16)] + broadcast(A[i0 * 256 + i1 * 64 + k], 16) * B[ramp(k * 64 + j * 16, 1, 16)]
)"));
  ASSERT_EQ(f.rows, 2u);
  // The init store: every loop moves the element, so there is no block.
  EXPECT_FLOAT_EQ(Column(f, 0, "regblock_elems"), 0);
  EXPECT_FLOAT_EQ(Column(f, 0, "regblock_reuse_len"), 0);
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_elems"), Slog(4 * 4 * 16));
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_num_loops"), Slog(2));
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_inner_0"), Slog(4));  // j
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_inner_1"), Slog(4));  // i1
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_inner_2"), 0);
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_reuse_len"), Slog(64));
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_outer_elems"), Slog(4 * 16));
  // The store runs 16 x 64 x 4 x 4 times; over the block's 256 elements.
  EXPECT_FLOAT_EQ(Column(f, 1, "regblock_outer_iters"), Slog(16.0 * 64 * 4 * 4 / 256));
}

TEST(ExtractFeatures, SizeSharesAreRelativeToTheFloatOperations) {
  FeatureMatrix small = ExtractFeatures(ParsePrimFunc(NaiveGemm(32)));
  FeatureMatrix large = ExtractFeatures(ParsePrimFunc(NaiveGemm(64)));
  // The update does all n^3 multiply-adds of the function inside loops of n^3 iterations.
  EXPECT_FLOAT_EQ(Column(large, 1, "share_float_mad"), 64);
  EXPECT_FLOAT_EQ(Column(large, 1, "share_outer_prod"), 64);
  EXPECT_FLOAT_EQ(Column(large, 1, "share_B1_lines"),
                  Slog(64.0 * 64 * 64 / 16) - Slog(64.0 * 64 * 64) + 64);
  // Absent stays absent: the init store does no float arithmetic.
  EXPECT_FLOAT_EQ(Column(large, 0, "share_float_mad"), 0);
  EXPECT_FLOAT_EQ(Column(large, 0, "share_select"), 0);
  // A share is its source column less log2(1 + the function's float operations), plus 64.
  for (const char* name : {"B0_bytes", "B0_lines", "B1_lines", "B2_lines"}) {
    EXPECT_FLOAT_EQ(Column(large, 1, fmt::format("share_{}", name)),
                    Column(large, 1, name) - Slog(64.0 * 64 * 64) + 64)
        << name;
  }
  // The same schedule at another size: the raw columns move, the shares of what grows with the
  // work (n^3: the multiply-adds, the lines of A and B) do not. C stays put over k: its lines grow
  // as n^2, so at twice the size its share is about one less.
  EXPECT_NE(Column(small, 1, "B0_lines"), Column(large, 1, "B0_lines"));
  for (const char* name :
       {"share_outer_prod", "share_float_mad", "share_B0_lines", "share_B1_lines"}) {
    EXPECT_NEAR(Column(small, 1, name), Column(large, 1, name), 0.01) << name;
  }
  EXPECT_NEAR(Column(small, 1, "share_B2_lines") - Column(large, 1, "share_B2_lines"), 1, 0.02);
}

TEST(ExtractFeatures, SizeSharesOfAnIntegerFunctionAreRelativeToAllItsOperations) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def count(A: Buffer((64,), int64)):
    for i in range(64):
        A[i] = i * 3 + 1
)"));
  ASSERT_EQ(f.rows, 1u);
  // One int multiply-add per iteration: as many operations as iterations.
  EXPECT_FLOAT_EQ(Column(f, 0, "int_mad"), Slog(64));
  EXPECT_FLOAT_EQ(Column(f, 0, "share_outer_prod"), 64);
}

TEST(ExtractFeatures, AllocatedBufferHasAllocationFeatures) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(R"(@prim_func
def staged(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(8):
        with allocate(T, (8,), float32, scope="local"):
            for j in range(8):
                T[j] = A[i * 8 + j] + 1.0
            for j in range(8):
                B[i * 8 + j] = T[j]
)"));
  ASSERT_EQ(f.rows, 2u);
  EXPECT_FLOAT_EQ(Column(f, 0, "alloc_size"), Slog(8 * 4));
  EXPECT_FLOAT_EQ(Column(f, 0, "alloc_outer_prod"), Slog(8));
  EXPECT_FLOAT_EQ(Column(f, 0, "alloc_inner_prod"), Slog(8));
  EXPECT_FLOAT_EQ(Column(f, 1, "alloc_size"), 0);
  EXPECT_FLOAT_EQ(Column(f, 0, "float_addsub"), Slog(64));
}

TEST(ExtractFeatures, ArithmeticIntensityGrowsWithReuse) {
  FeatureMatrix f = ExtractFeatures(ParsePrimFunc(NaiveGemm(64)));
  float first = Column(f, 1, "arith_intensity_curve_0");
  float last = Column(f, 1, "arith_intensity_curve_9");
  EXPECT_GT(first, 0);
  // Over the whole GEMM: 64^3 mads over 3 * 4096 * 4 unique bytes.
  EXPECT_NEAR(last, 64.0 * 64 * 64 / (3 * 4096 * 4), 1e-3);
  EXPECT_GT(last, first);
}

// gemm:64,64,64 tiled, with the inner column loop vectorized or not.
PrimFunc LoweredTiledGemm(bool vectorize) {
  Schedule sch(MakeWorkload("gemm:64,64,64").func);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, int64_t{8}});
  sch.Reorder({loops[0], j[0], loops[2], j[1]});
  sch.Parallel(loops[0]);
  if (vectorize) sch.Vectorize(j[1]);
  return Lower(sch.func());
}

TEST(ExtractFeatures, VectorizedAndScalarSchedulesDiffer) {
  FeatureMatrix scalar = ExtractFeatures(LoweredTiledGemm(false));
  FeatureMatrix vector = ExtractFeatures(LoweredTiledGemm(true));
  ASSERT_GT(scalar.rows, 0u);
  ASSERT_EQ(scalar.rows, vector.rows);
  EXPECT_NE(scalar.data, vector.data);
  size_t last = vector.rows - 1;
  EXPECT_FLOAT_EQ(Column(scalar, last, "vec_len"), 0);
  EXPECT_FLOAT_EQ(Column(vector, last, "vec_len"), Slog(8));
  EXPECT_FLOAT_EQ(Column(vector, last, "parallel_prod"), Slog(64));
  // The same arithmetic either way.
  EXPECT_FLOAT_EQ(Column(scalar, last, "float_mad"), Column(vector, last, "float_mad"));
}

TEST(ExtractFeaturesParallel, EqualsSerialExtraction) {
  std::vector<PrimFunc> funcs = {ParsePrimFunc(NaiveGemm(64)), LoweredTiledGemm(false),
                                 LoweredTiledGemm(true)};
  for (const char* spec : {"gemm:32,48,16", "conv2d:1,8,16,16,8,3,3,1,1", "softmax:4,64"}) {
    funcs.push_back(Lower(MakeWorkload(spec).func));
  }
  std::vector<FeatureMatrix> parallel = ExtractFeaturesParallel(funcs, /*num_threads=*/2);
  ASSERT_EQ(parallel.size(), funcs.size());
  for (size_t i = 0; i < funcs.size(); ++i) {
    FeatureMatrix serial = ExtractFeatures(funcs[i]);
    EXPECT_EQ(parallel[i].rows, serial.rows) << i;
    EXPECT_EQ(parallel[i].data, serial.data) << i;
  }
}

TEST(ExtractFeatures, EveryValueIsFinite) {
  for (const char* spec : {"gemm:32,48,16", "conv2d:1,8,16,16,8,3,3,1,1", "softmax:4,64"}) {
    FeatureMatrix f = ExtractFeatures(Lower(MakeWorkload(spec).func));
    EXPECT_GT(f.rows, 0u) << spec;
    for (float v : f.data) ASSERT_TRUE(std::isfinite(v)) << spec;
  }
}

// A GPU schedule (the CUDA space's tiling of a GEMM with fixed decisions) fills the GPU columns
// of its update: thread and block extents, the shared tiles' bytes and an occupancy estimate;
// a CPU schedule leaves them zero.
TEST(ExtractFeatures, GpuColumnsDescribeTheLaunchOfAGpuSchedule) {
  const PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  // i, j: [blocks 4, vthread 1, threads 4 x 8, 2, 2]; k: [8, 4, 2]; scalar fetches.
  std::string why;
  std::optional<Schedule> sch =
      tirtune::testing::GpuSampleWithTiles(f, {{4, 1, 4, 2, 2}, {4, 1, 8, 1, 2}, {8, 4, 2}}, &why);
  ASSERT_TRUE(sch.has_value()) << why;
  FeatureMatrix m = ExtractFeatures(LowerForFeatures(sch->func()));
  ASSERT_GT(m.rows, 0u);
  bool found_update = false;
  for (size_t r = 0; r < m.rows; ++r) {
    if (Column(m, r, "float_mad") == 0) continue;
    found_update = true;
    EXPECT_FLOAT_EQ(Column(m, r, "is_gpu"), 1);
    EXPECT_FLOAT_EQ(Column(m, r, "blockIdx_x_len"), Slog(16));
    EXPECT_FLOAT_EQ(Column(m, r, "threadIdx_x_len"), Slog(32));
    EXPECT_FLOAT_EQ(Column(m, r, "vthread_len"), Slog(1));
    // A tile of 16 x 8 of A and 8 x 16 of B per slice of k: 256 floats.
    EXPECT_FLOAT_EQ(Column(m, r, "shared_bytes"), Slog(256 * 4));
    // 32 blocks of 32 threads fill half of an SM's 2,048 thread slots.
    EXPECT_FLOAT_EQ(Column(m, r, "occupancy"), 0.5f);
  }
  EXPECT_TRUE(found_update);
  FeatureMatrix cpu = ExtractFeatures(Lower(f));
  for (size_t r = 0; r < cpu.rows; ++r) EXPECT_FLOAT_EQ(Column(cpu, r, "is_gpu"), 0);
}

}  // namespace
}  // namespace tirtune
