// tirtune-gpu-runner where there is no GPU: it says so and exits 1; with the CUDA toolkit's stub
// library in place of the driver, every driver entry point it needs resolves (the stub exports
// the real driver's names) and it reports the stub; a bad bundle is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "../common/cli_run.h"
#include "tirtune/measure/gpu_bundle.h"
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

}  // namespace
}  // namespace tirtune
