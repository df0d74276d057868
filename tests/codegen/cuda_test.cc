// CUDA code generation without a GPU: the CUDA C of hand-written GPU schedules, compiled through
// NVRTC and nvJitLink to sm_90 (and sm_80, sm_89) cubins whose ptxas report passes the static
// gates; the report's parsing and every gate on its own. The compile tests skip where the CUDA
// toolkit's libraries cannot be loaded.
#include "tirtune/codegen/cuda.h"

#include <gtest/gtest.h>

#include "../common/gpu_schedules.h"
#include "../lower/gpu_check.h"
#include "../lower/lower_check.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

using gpu_schedules::F;
using gpu_schedules::kInfer;

GpuModule ElementwiseModule() {
  Schedule sch(gpu_schedules::Elementwise());
  std::vector<LoopRV> parts =
      sch.Split(sch.Fuse(sch.GetLoops(sch.GetBlock("B"))), {kInfer, F(128)});
  sch.Bind(parts[0], "blockIdx.x");
  sch.Bind(parts[1], "threadIdx.x");
  return LowerGpu(sch.func(), GpuLimits());
}

GpuModule GemmModule() { return LowerGpu(gpu_schedules::ScheduledGemm(), GpuLimits()); }

#define SKIP_WITHOUT_NVRTC()                               \
  do {                                                     \
    std::string why;                                       \
    if (!CudaCompilerAvailable(&why)) GTEST_SKIP() << why; \
  } while (0)

TEST(CudaSource, AKernelIsAGlobalFunctionWithItsLaunchBoundsAndIndices) {
  std::string source = EmitCudaSource(ElementwiseModule());
  EXPECT_NE(source.find("extern \"C\" __global__ void __launch_bounds__(128) "
                        "scale_kernel0(float* __restrict__ A, float* __restrict__ B) {"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("const long long threadIdx_x = threadIdx.x;"), std::string::npos)
      << source;
  EXPECT_NE(source.find("const long long blockIdx_x = blockIdx.x;"), std::string::npos);
  // Asked to, and every index of a 64 x 32 array fits in 32 bits: int.
  source = EmitCudaSource(ElementwiseModule(), {.int32_indices = true});
  EXPECT_NE(source.find("const int threadIdx_x = threadIdx.x;"), std::string::npos) << source;
  EXPECT_NE(source.find("const int blockIdx_x = blockIdx.x;"), std::string::npos);
  EXPECT_EQ(source.find("ll)"), std::string::npos) << source;
}

// Indices past 2^31 (a 65536 x 65536 output) keep the kernel's arithmetic in 64 bits even when
// 32 are asked for.
TEST(CudaSource, IndicesPast32BitsStayLongLong) {
  Schedule sch(MakeWorkload("gemm:65536,65536,4").func);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> parts = sch.Split(sch.Fuse({loops[0], loops[1]}), {kInfer, F(256)});
  sch.Bind(parts[0], "blockIdx.x");
  sch.Bind(parts[1], "threadIdx.x");
  std::string source = EmitCudaSource(LowerGpu(sch.func(), GpuLimits()), {.int32_indices = true});
  EXPECT_NE(source.find("const long long blockIdx_x = blockIdx.x;"), std::string::npos)
      << source;
  EXPECT_EQ(source.find("const int blockIdx_x"), std::string::npos) << source;
}

TEST(CudaSource, SharedTilesBarriersAndLocalArraysArePrinted) {
  std::string source = EmitCudaSource(GemmModule());
  EXPECT_NE(source.find("__shared__ __align__(16) float A_shared[128];"), std::string::npos)
      << source;
  EXPECT_NE(source.find("__syncthreads();"), std::string::npos) << source;
  // Each thread's own 4 x 4 tile of the accumulator, not the block's 16 x 16.
  EXPECT_NE(source.find("float C_local[16];"), std::string::npos) << source;
}

// A vectorized loop prints lane by lane; its contiguous accesses that start on a multiple of 4
// elements move float4s, strided ones stay element by element.
TEST(CudaSource, VectorStatementsMoveFloat4sWhereAlignedAndLanesElsewhere) {
  PrimFunc f = gpu_schedules::Elementwise();  // 64 x 32
  for (bool contiguous : {true, false}) {
    SCOPED_TRACE(contiguous ? "contiguous" : "strided");
    Schedule sch(f);
    std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B"));
    LoopRV vector;
    if (contiguous) {
      std::vector<LoopRV> p = sch.Split(sch.Fuse(loops), {kInfer, F(128), F(4)});
      sch.Bind(p[0], "blockIdx.x");
      sch.Bind(p[1], "threadIdx.x");
      vector = p[2];
    } else {  // four rows 32 elements apart per thread
      std::vector<LoopRV> rows = sch.Split(loops[0], {kInfer, F(4)});
      sch.Reorder({rows[0], loops[1], rows[1]});
      sch.Bind(rows[0], "blockIdx.x");
      sch.Bind(loops[1], "threadIdx.x");
      vector = rows[1];
    }
    sch.Vectorize(vector);
    GpuModule module = LowerGpu(sch.func(), GpuLimits());
    EXPECT_EQ(testing::CompareWithInterpreter(f, module, 3, 0), "");
    std::string source = EmitCudaSource(module);
    bool float4 = source.find("*reinterpret_cast<const float4*>(&A[") != std::string::npos &&
                  source.find("*reinterpret_cast<float4*>(&B[") != std::string::npos;
    EXPECT_EQ(float4, contiguous) << source;
    if (!contiguous) {
      EXPECT_NE(source.find("const float lane_3 = A["), std::string::npos) << source;
    }
    std::string why;
    if (CudaCompilerAvailable(&why)) {
      CudaBinary binary = CompileCuda(module, Target::Parse("cuda -arch=sm_90"));
      EXPECT_EQ(CheckResourceGates(module, binary, GpuLimits()), std::vector<std::string>{});
    }
  }
}

// A reduction over 16 threads of a 16-thread block: warp shuffles among the 16 lanes that exist.
TEST(CudaSource, CrossThreadReductionsShuffleAmongTheLanesThatExist) {
  Schedule sch(gpu_schedules::RowSum());
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B"));
  sch.Bind(loops[0], "blockIdx.x");
  std::vector<LoopRV> k = sch.Split(loops[1], {kInfer, F(16)});
  sch.Reorder({k[1], k[0]});
  sch.Bind(k[1], "threadIdx.x");
  GpuModule module = LowerGpu(sch.func(), GpuLimits());
  std::string source = EmitCudaSource(module);
  EXPECT_NE(source.find("__shfl_xor_sync(0xffffu, "), std::string::npos) << source;
  // 16 x 3 threads: the second warp has only 16 lanes.
  GpuModule rows = module;
  rows.kernels[0].block[1] = 3;
  EXPECT_NE(EmitCudaSource(rows).find("/ 32 == 1 ? 0xffffu : 0xffffffffu)"), std::string::npos)
      << EmitCudaSource(rows);
  std::string why;
  if (!CudaCompilerAvailable(&why)) GTEST_SKIP() << why;
  for (const GpuModule& m : {module, rows}) {
    CudaBinary binary = CompileCuda(m, Target::Parse("cuda -arch=sm_90"));
    EXPECT_EQ(CheckResourceGates(m, binary, GpuLimits()), std::vector<std::string>{});
  }
}

TEST(CudaCompile, HandWrittenSchedulesCompileToCubinsThatPassTheGates) {
  SKIP_WITHOUT_NVRTC();
  Target sm90 = Target::Parse("cuda -arch=sm_90");
  for (const GpuModule& module : {ElementwiseModule(), GemmModule()}) {
    CudaBinary binary = CompileCuda(module, sm90);
    ASSERT_GT(binary.cubin.size(), 4u);
    EXPECT_EQ(binary.cubin.substr(0, 4),
              "\x7f"
              "ELF");
    EXPECT_NE(binary.ptx.find(".target sm_90"), std::string::npos);
    ASSERT_EQ(binary.resources.size(), module.kernels.size()) << binary.log;
    const KernelResources& r = binary.resources[0];
    EXPECT_EQ(r.kernel, module.kernels[0].name);
    EXPECT_GT(r.registers, 0);
    EXPECT_EQ(r.spill_store_bytes, 0);
    EXPECT_EQ(r.shared_bytes, module.kernels[0].SharedBytes()) << binary.log;
    EXPECT_EQ(CheckResourceGates(module, binary, sm90.gpu), std::vector<std::string>())
        << binary.log;
  }
}

// Every random GPU schedule of a workload that LowerGpu accepts (the same 50 per workload as
// tests/lower/random_gpu_schedule_test.cc, which checks their numbers in the executor) compiles
// to an sm_90 cubin whose report passes the gates.
class RandomGpuScheduleCompiles : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomGpuScheduleCompiles, ToCubinsThatPassTheGates) {
  SKIP_WITHOUT_NVRTC();
  Target sm90 = Target::Parse("cuda -arch=sm_90");
  const WorkloadDef* def = nullptr;
  for (const WorkloadDef& d : AllWorkloads()) {
    if (d.name == GetParam()) def = &d;
  }
  ASSERT_NE(def, nullptr);
  PrimFunc original = def->build(def->small_shape);
  int compiled = 0;
  for (int trial = 0; trial < 50; ++trial) {
    GpuModule module;
    try {
      module = LowerGpu(gpu_schedules::RandomGpuSchedule(original, trial).func(), sm90.gpu);
    } catch (const UserError&) {
      continue;  // a schedule the GPU cannot run
    }
    CudaBinary binary = CompileCuda(module, sm90);
    EXPECT_EQ(binary.resources.size(), module.kernels.size()) << "trial " << trial << "\n"
                                                              << binary.log;
    EXPECT_EQ(CheckResourceGates(module, binary, sm90.gpu), std::vector<std::string>())
        << "trial " << trial << "\n"
        << binary.log;
    ++compiled;
  }
  RecordProperty("compiled", compiled);
  EXPECT_GT(compiled, 0);
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) names.push_back(def.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, RandomGpuScheduleCompiles,
                         ::testing::ValuesIn(WorkloadNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(CudaCompile, EveryArchCompiles) {
  SKIP_WITHOUT_NVRTC();
  for (const char* arch : {"sm_80", "sm_89"}) {
    CudaBinary binary = CompileCuda(GemmModule(), Target::Parse(std::string("cuda -arch=") + arch));
    EXPECT_NE(binary.log.find(std::string("for '") + arch + "'"), std::string::npos) << binary.log;
  }
}

TEST(CudaCompile, TheRegisterGateUsesTheTargetsLimit) {
  SKIP_WITHOUT_NVRTC();
  GpuModule module = GemmModule();
  Target small = Target::Parse("cuda -arch=sm_90 -max-registers-per-block=64");
  std::vector<std::string> failures =
      CheckResourceGates(module, CompileCuda(module, small), small.gpu);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("gemm_kernel0: "), std::string::npos);
  EXPECT_NE(failures[0].find("times 16 threads); the target allows 64"), std::string::npos)
      << failures[0];
}

TEST(PtxasReport, ParsesEveryKernelsLines) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k0' for 'sm_90'\n"
      "ptxas info    : Function properties for k0\n"
      "ptxas         .     8 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 2048 bytes smem\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90'\n"
      "ptxas info    : Function properties for k1\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers\n"
      "info    : Function properties for 'k1':\n"
      "info    : used 10 registers, used 0 barriers, 0 stack, 1024 bytes smem\n";
  std::vector<KernelResources> r = ParsePtxasReport(log);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].kernel, "k0");
  EXPECT_EQ(r[0].registers, 255);
  EXPECT_EQ(r[0].stack_bytes, 8);
  EXPECT_EQ(r[0].spill_store_bytes, 16);
  EXPECT_EQ(r[0].spill_load_bytes, 12);
  EXPECT_EQ(r[0].shared_bytes, 2048);
  EXPECT_EQ(r[1].kernel, "k1");
  EXPECT_EQ(r[1].registers, 10);
  EXPECT_EQ(r[1].shared_bytes, 0) << "nvJitLink's own summary lines are not ptxas's";
}

TEST(ResourceGates, SpillsAndSharedMemoryAreBuildErrorsWithTheReason) {
  GpuModule module = GemmModule();
  CudaBinary binary;
  binary.resources = {KernelResources{.kernel = "gemm_kernel0",
                                      .registers = 32,
                                      .spill_store_bytes = 8,
                                      .spill_load_bytes = 4,
                                      .shared_bytes = 60000}};
  std::vector<std::string> failures = CheckResourceGates(module, binary, GpuLimits());
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0], "gemm_kernel0: spills registers (8 bytes stored, 4 loaded)");
  EXPECT_EQ(failures[1], "gemm_kernel0: 60000 bytes of shared memory; the target allows 49152");
  binary.resources.clear();
  EXPECT_EQ(CheckResourceGates(module, binary, GpuLimits()),
            std::vector<std::string>{
                "gemm_kernel0: ptxas reported nothing for it (a cubin from the driver's compute "
                "cache? CUDA_CACHE_DISABLE=1 makes nvJitLink compile and report)"});
}

// A per-thread array past the target's local memory: launching it fails with
// CUDA_ERROR_INVALID_VALUE (seen on an H200 while tuning GEMM 4096^3), so its stack frame is a
// build error. The kernel is lowered with a limit raised past the array, as if VerifyThreadBinding
// had not seen it, to check the gate on what ptxas reports.
TEST(ResourceGates, AStackFramePastTheLocalMemoryLimitIsABuildError) {
  GpuModule module = GemmModule();
  CudaBinary binary;
  binary.resources = {KernelResources{
      .kernel = "gemm_kernel0", .registers = 186, .stack_bytes = 4194304, .shared_bytes = 24576}};
  EXPECT_EQ(CheckResourceGates(module, binary, GpuLimits()),
            std::vector<std::string>{
                "gemm_kernel0: a stack frame of 4194304 bytes per thread; the target allows 16384"});

  SKIP_WITHOUT_NVRTC();
  PrimFunc f = testing::ParseFunc(R"(@prim_func
def f(A: Buffer((8192,), float32), B: Buffer((64,), float32)):
    for tx in thread_binding(64, thread="threadIdx.x"):
        with allocate(T, (8192,), float32, scope="local"):
            for i in range(8192):
                T[i] = A[i] * 2.0
            B[tx] = T[tx * 128]
)");
  GpuLimits roomy;
  roomy.max_local_memory_per_thread = 1 << 20;
  GpuModule big = LowerGpu(f, roomy);
  Target sm90 = Target::Parse("cuda -arch=sm_90");
  CudaBinary compiled = CompileCuda(big, sm90);
  ASSERT_EQ(compiled.resources.size(), 1u) << compiled.log;
  EXPECT_GE(compiled.resources[0].stack_bytes, 8192 * 4) << compiled.log;
  std::vector<std::string> failures = CheckResourceGates(big, compiled, sm90.gpu);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("a stack frame of"), std::string::npos) << failures[0];
  EXPECT_TRUE(CheckResourceGates(big, compiled, roomy).empty());
}

}  // namespace
}  // namespace tirtune
