// tirtune-gpu-runner where there is no GPU: it says so and exits 1; with the CUDA toolkit's stub
// library in place of the driver, every driver entry point it needs resolves (the stub exports
// the real driver's names) and it reports the stub; a bad bundle is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "../common/cli_run.h"
#include "../common/gpu_schedules.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/measure/gpu_bundle.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/measure/runner_pool.h"
#include "tirtune/measure/runner_worker.h"
#include "tirtune/measure/verify.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;

class GpuRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (cuda::CudaDriverAvailable(&why)) GTEST_SKIP() << "a GPU is present";
    dir_ = fs::temp_directory_path() / ("tirtune-gpu-runner-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "bundle");
    std::ofstream(dir_ / "bundle" / "manifest.json") << R"({"format": 1, "arch": "sm_90",
                                                          "cases": []})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(GpuRunner, WithoutADriverSaysSoAndExits1) {
  std::string why;
  EXPECT_FALSE(cuda::CudaDriverAvailable(&why));
  EXPECT_TRUE(why.find("no NVIDIA driver") != std::string::npos ||
              why.find("no CUDA device") != std::string::npos)
      << why;
  EXPECT_THROW(cuda::Context context(0), cuda::CudaUnavailable);
  testing::CliResult r = RunCli(TIRTUNE_GPU_RUNNER_BIN, (dir_ / "bundle").string(), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
}

TEST_F(GpuRunner, TheStubLibraryResolvesEveryEntryPoint) {
  fs::path stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!fs::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  fs::create_directories(dir_ / "lib");
  fs::create_symlink(stub, dir_ / "lib" / "libcuda.so.1");
  testing::CliResult r =
      RunCli("LD_LIBRARY_PATH=" + (dir_ / "lib").string() + " " + TIRTUNE_GPU_RUNNER_BIN,
             (dir_ / "bundle").string(), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the CUDA toolkit's stub library"), std::string::npos) << r.err;
}

TEST_F(GpuRunner, ABadManifestIsNamed) {
  std::ofstream(dir_ / "bundle" / "manifest.json") << "{\"format\": 1, \"cases\": [";
  testing::CliResult r = RunCli(TIRTUNE_GPU_RUNNER_BIN, (dir_ / "bundle").string(), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("manifest.json"), std::string::npos) << r.err;
  std::ofstream(dir_ / "bundle" / "manifest.json") << R"({"format": 7, "cases": []})";
  r = RunCli(TIRTUNE_GPU_RUNNER_BIN, (dir_ / "bundle").string(), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a format-1 bundle"), std::string::npos) << r.err;
}

// A check entry carries the reference's numbers (non-finite ones as strings, which JSON has no
// number for) with the tolerance the CPU's verification would apply to the same array.
TEST(GpuBundleCheck, CarriesTheCpuToleranceAndNonFiniteValues) {
  NDArray expected = NDArray::Empty({4}, DataType::Float(32));
  expected.SetDouble(0, 100.0);
  expected.SetDouble(1, std::nan(""));
  expected.SetDouble(2, -INFINITY);
  expected.SetDouble(3, 0.5);
  nlohmann::json check = gpu_bundle::CheckOf(expected, /*reduction_length=*/1e6);
  EXPECT_EQ(check["indices"], nlohmann::json::array({0, 1, 2, 3}));
  EXPECT_EQ(check["values"], nlohmann::json::array({100.0, "nan", "-inf", 0.5}));
  Tolerance want = Tolerance::ForSum(DataType::Float(32), 1e6);
  EXPECT_DOUBLE_EQ(check["rtol"].get<double>(), want.rtol);
  EXPECT_DOUBLE_EQ(check["atol"].get<double>(), want.atol * 100.0);  // scaled by the largest |v|

  double rtol = check["rtol"], atol = check["atol"];
  EXPECT_TRUE(gpu_bundle::Matches(100.05, check["values"][0], rtol, atol));
  EXPECT_FALSE(gpu_bundle::Matches(101.0, check["values"][0], rtol, atol));
  EXPECT_TRUE(gpu_bundle::Matches(std::nan(""), check["values"][1], rtol, atol));
  EXPECT_FALSE(gpu_bundle::Matches(0.0, check["values"][1], rtol, atol));
  EXPECT_TRUE(gpu_bundle::Matches(-INFINITY, check["values"][2], rtol, atol));
  EXPECT_FALSE(gpu_bundle::Matches(INFINITY, check["values"][2], rtol, atol));
  EXPECT_FALSE(gpu_bundle::Matches(std::nan(""), check["values"][3], rtol, atol));  // unwritten
}

TEST(GpuBundleCheck, SpreadIndicesCoverSmallArraysWholeAndLargeOnesSpread) {
  EXPECT_EQ(gpu_bundle::SpreadIndices(3, 8), (std::vector<int64_t>{0, 1, 2}));
  std::vector<int64_t> spread = gpu_bundle::SpreadIndices(1000000, 64);
  ASSERT_EQ(spread.size(), 64u);
  for (int64_t at : spread) EXPECT_LT(at, 1000000);
  EXPECT_GT(*std::max_element(spread.begin(), spread.end()), 900000);
}

// ---- GPU candidates in the runner protocol (gpu_program.h, gpu_worker.cc). ----

GpuProgram TwoKernelProgram() {
  GpuProgram p;
  p.cubin = std::string("\x7f" "ELF\0\1", 6) + std::string(1000, '\xab');
  p.intermediates = {{DataType::Float(32), 4096}};
  p.launches = {{"f_kernel0", {16, 1, 1}, {256, 1, 1}, {0, 2}},
                {"f_kernel1", {4, 2, 1}, {32, 8, 1}, {2, 1}, 65536}};
  return p;
}

TEST(GpuProgram, RoundTripsAndRefusesDamagedPayloads) {
  GpuProgram p = TwoKernelProgram();
  std::string bytes = p.Serialize();
  GpuProgram q = GpuProgram::Deserialize(bytes);
  EXPECT_EQ(q.cubin, p.cubin);
  ASSERT_EQ(q.intermediates.size(), 1u);
  EXPECT_EQ(q.intermediates[0].elements, 4096);
  EXPECT_EQ(q.intermediates[0].dtype, DataType::Float(32));
  ASSERT_EQ(q.launches.size(), 2u);
  EXPECT_EQ(q.launches[1].kernel, "f_kernel1");
  EXPECT_EQ(q.launches[1].grid, (std::array<int64_t, 3>{4, 2, 1}));
  EXPECT_EQ(q.launches[1].block, (std::array<int64_t, 3>{32, 8, 1}));
  EXPECT_EQ(q.launches[1].args, (std::vector<int>{2, 1}));
  EXPECT_EQ(q.launches[0].dynamic_shared_bytes, 0);
  EXPECT_EQ(q.launches[1].dynamic_shared_bytes, 65536);
  // Every truncation is a UserError naming where; so are trailing bytes and another format.
  for (size_t n : {size_t{0}, size_t{3}, size_t{9}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(GpuProgram::Deserialize(bytes.substr(0, n)), UserError) << n;
  }
  EXPECT_THROW(GpuProgram::Deserialize(bytes + "x"), UserError);
  EXPECT_THROW(GpuProgram::Deserialize("TTGQ" + bytes.substr(4)), UserError);
}

TEST(GpuProgram, OfAModuleNumbersParametersThenIntermediates) {
  GpuModule module = LowerGpu(gpu_schedules::ScheduledGemm(), GpuLimits());
  CudaBinary binary;
  binary.cubin = "not compiled";
  GpuProgram p = GpuProgram::Of(module, binary);
  ASSERT_EQ(p.launches.size(), module.kernels.size());
  EXPECT_EQ(p.launches[0].kernel, module.kernels[0].name);
  EXPECT_EQ(p.launches[0].grid, module.kernels[0].grid);
  EXPECT_EQ(p.launches[0].block, module.kernels[0].block);
  EXPECT_EQ(p.launches[0].args.size(), module.kernels[0].params.size());
  for (int a : p.launches[0].args) EXPECT_LT(a, static_cast<int>(module.params.size()));
}

class GpuCandidate : public GpuRunner {
 protected:
  MeasureCandidate Candidate() {
    MeasureCandidate c;
    c.object = TwoKernelProgram().Serialize();
    c.func_name = "f";
    c.target = "cuda -arch=sm_90";
    c.args = {{"A", {64}, DataType::Float(32), {}}, {"B", {64}, DataType::Float(32), {}}};
    return c;
  }
};

// Without a GPU, a cuda candidate comes back as a runtime error that says so, in process and
// through a worker of the pool (the protocol's path); a damaged program is named.
TEST_F(GpuCandidate, WithoutAGpuTheReplySaysSo) {
  RunRequest request;
  request.object = Candidate().object;
  request.target = "cuda -arch=sm_90";
  RunReply reply = HandleRunRequest(request);
  EXPECT_EQ(reply.kind, ReplyKind::kRuntimeError);
  EXPECT_NE(reply.message.find("no GPU to measure on"), std::string::npos) << reply.message;
  EXPECT_FALSE(reply.restart);
  request.object = "TTGP";
  reply = HandleRunRequest(request);
  EXPECT_NE(reply.message.find("GPU program: truncated"), std::string::npos) << reply.message;

  RunnerConfig config;
  config.cuda_devices = {0};
  RunnerPool pool(config);
  MeasureResult r = pool.MeasureOne(Candidate());
  EXPECT_EQ(r.status, MeasureStatus::kRuntimeError);
  EXPECT_NE(r.message.find("no GPU to measure on"), std::string::npos) << r.message;
  EXPECT_EQ(pool.spawn_count(), 1);
  RunnerConfig two;
  two.num_workers = 2;
  two.cuda_devices = {0};
  EXPECT_THROW(RunnerPool{two}, UserError);
}

TEST(RunnerProtocol, ARestartingWorkerSaysSoInItsReply) {
  RunReply reply;
  reply.kind = ReplyKind::kRuntimeError;
  reply.message = "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS";
  reply.restart = true;
  RunReply back = DeserializeReply(SerializeReply(reply));
  EXPECT_TRUE(back.restart);
  EXPECT_EQ(back.message, reply.message);
  EXPECT_FALSE(DeserializeReply(SerializeReply(RunReply{})).restart);
}

}  // namespace
}  // namespace tirtune
