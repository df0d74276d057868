// The GPU bundle's hand-written schedules (bench/gpu/hand_schedules.h), checked without a GPU at
// small sizes: the GPU-semantics executor computes the interpreter's numbers, the cubins pass the
// resource gates, and each thread's accumulator is its own tile (registers, not the block's tile
// in local memory: what made the tiled GEMM fast on the GPU).
#include "hand_schedules.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../lower/gpu_check.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::gpu_bundle {
namespace {

const GpuLimits kLimits = Target::Parse("cuda -arch=sm_90").gpu;

void ExpectAgreesAndCompiles(const PrimFunc& original, const Schedule& sch,
                             const std::string& accumulator) {
  GpuModule module = LowerGpu(sch.func(), kLimits);
  EXPECT_EQ(testing::CompareWithInterpreter(original, module, 7, 1e-3), "");
  std::string source = EmitCudaSource(module);
  if (!accumulator.empty()) {
    EXPECT_NE(source.find(accumulator), std::string::npos) << source;
  }
  std::string why;
  if (!CudaCompilerAvailable(&why)) GTEST_SKIP() << why;
  CudaBinary binary = CompileCuda(module, Target::Parse("cuda -arch=sm_90"));
  EXPECT_EQ(CheckResourceGates(module, binary, kLimits), std::vector<std::string>{});
  for (const KernelResources& r : binary.resources) EXPECT_EQ(r.stack_bytes, 0) << r.kernel;
}

TEST(HandSchedules, TiledGemmStridedAndAdjacentTiles) {
  PrimFunc gemm = MakeWorkload("gemm:128,64,32").func;
  for (bool strided : {true, false}) {
    GemmTiling t{.threads_y = 8, .threads_x = 4, .tile_y = 4, .tile_x = 4, .k_tile = 8,
                 .strided = strided};
    SCOPED_TRACE(t.Describe());
    ExpectAgreesAndCompiles(gemm, TiledGemmSchedule(gemm, t), "float C_local[16];");
  }
}

TEST(HandSchedules, TiledGemmWithVectorAccesses) {
  // Adjacent tiles: the fetches into shared memory and the write-back of C move float4s.
  PrimFunc gemm = MakeWorkload("gemm:64,64,32").func;
  GemmTiling t{.threads_y = 4, .threads_x = 4, .tile_y = 4, .tile_x = 8, .k_tile = 8,
               .strided = false, .vector_lanes = 4};
  Schedule sch = TiledGemmSchedule(gemm, t);
  ExpectAgreesAndCompiles(gemm, sch, "float C_local[32];");
  std::string source = EmitCudaSource(LowerGpu(sch.func(), kLimits));
  EXPECT_NE(source.find("= *reinterpret_cast<const float4*>(&A["), std::string::npos) << source;
  EXPECT_NE(source.find("= *reinterpret_cast<const float4*>(&B["), std::string::npos) << source;
  EXPECT_NE(source.find("*reinterpret_cast<float4*>(&C["), std::string::npos) << source;
}

// 64 x 64 block tiles with a k tile of 128: 64 KiB of shared memory, beyond the static 48 KiB,
// in dynamic shared memory.
TEST(HandSchedules, TiledGemmWithDynamicSharedMemory) {
  PrimFunc gemm = MakeWorkload("gemm:64,64,128").func;
  GemmTiling t{.threads_y = 16, .threads_x = 16, .tile_y = 4, .tile_x = 4, .k_tile = 128,
               .strided = false, .unroll = false, .vector_lanes = 4};
  Schedule sch = TiledGemmSchedule(gemm, t);
  GpuModule module = LowerGpu(sch.func(), kLimits);
  ASSERT_TRUE(module.kernels[0].dynamic_shared);
  EXPECT_EQ(module.kernels[0].DynamicSharedBytes(), 65536);
  ExpectAgreesAndCompiles(gemm, sch, "");
  std::string source = EmitCudaSource(module);
  EXPECT_NE(source.find("extern __shared__ __align__(16) unsigned char tt_shared[];"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("float* const B_shared = reinterpret_cast<float*>(tt_shared + 32768);"),
            std::string::npos)
      << source;
}

TEST(HandSchedules, TiledGemmWithTheInitInTheKLoop) {
  PrimFunc gemm = MakeWorkload("gemm:64,64,16").func;
  GemmTiling t{.threads_y = 4, .threads_x = 8, .tile_y = 2, .tile_x = 2, .k_tile = 4,
               .decompose = false};
  ExpectAgreesAndCompiles(gemm, TiledGemmSchedule(gemm, t), "float C_local[4];");
}

TEST(HandSchedules, TiledConv2dWithPadding) {
  PrimFunc conv = MakeWorkload("conv2d:1,4,8,8,32,3,1,1").func;
  ConvTiling t{.h_tile = 2, .w_threads = 4, .w_tile = 2, .co_threads = 8, .co_tile = 4,
               .rc_tile = 4};
  ExpectAgreesAndCompiles(conv, TiledConv2dSchedule(conv, t), "float conv2d_nhwc_local[16];");
}

TEST(HandSchedules, TiledConv2dWithVectorAccesses) {
  PrimFunc conv = MakeWorkload("conv2d:1,4,8,8,32,3,1,1").func;
  ConvTiling t{.h_tile = 2, .w_threads = 4, .w_tile = 2, .co_threads = 8, .co_tile = 4,
               .rc_tile = 4, .strided = false, .vector_lanes = 4};
  Schedule sch = TiledConv2dSchedule(conv, t);
  ExpectAgreesAndCompiles(conv, sch, "float conv2d_nhwc_local[16];");
  std::string source = EmitCudaSource(LowerGpu(sch.func(), kLimits));
  EXPECT_NE(source.find("*reinterpret_cast<float4*>(&conv2d_nhwc["), std::string::npos) << source;
}

TEST(HandSchedules, SoftmaxWithOneBlockPerRow) {
  PrimFunc softmax = MakeWorkload("softmax:4,64").func;
  Schedule sch = SoftmaxSchedule(softmax, 16);
  ExpectAgreesAndCompiles(softmax, sch, "");
  // One barrier per reduction: each thread's share is a register, stored into its slot once.
  std::string text = PrintGpuModule(LowerGpu(sch.func(), kLimits));
  size_t barriers = 0;
  for (size_t at = text.find("sync_threads()"); at != std::string::npos;
       at = text.find("sync_threads()", at + 1)) {
    ++barriers;
  }
  EXPECT_EQ(barriers, 2u) << text;
}

// Cross-thread reductions: warp shuffles alone (16 threads), shuffles then one shared slot per
// warp (64), shared memory alone (24: not a power of two).
TEST(HandSchedules, SoftmaxWithCrossThreadReductions) {
  for (int64_t threads : {16, 64, 24}) {
    SCOPED_TRACE(threads);
    PrimFunc softmax = MakeWorkload(fmt::format("softmax:4,{}", threads * 3)).func;
    Schedule sch = SoftmaxCrossThreadSchedule(softmax, threads);
    ExpectAgreesAndCompiles(softmax, sch, "");
    std::string text = PrintGpuModule(LowerGpu(sch.func(), kLimits));
    bool shuffles = text.find("warp_shuffle_xor") != std::string::npos;
    EXPECT_EQ(shuffles, threads != 24) << text;
    EXPECT_EQ(text.find("shared") != std::string::npos, threads != 16) << text;
  }
}

TEST(HandSchedules, PlainScheduleOfEveryWorkload) {
  for (const WorkloadDef& def : AllWorkloads()) {
    if (def.small_shape.empty()) continue;
    SCOPED_TRACE(def.name);
    PrimFunc f = def.build(def.small_shape);
    GpuModule module = LowerGpu(PlainGpuSchedule(f).func(), kLimits);
    EXPECT_EQ(testing::CompareWithInterpreter(f, module, 7, 1e-3), "");
  }
}

}  // namespace
}  // namespace tirtune::gpu_bundle
