// tirtune-gpu-runner where there is no GPU: it says so and exits 1; with the CUDA toolkit's stub
// library in place of the driver, every driver entry point it needs resolves (the stub exports
// the real driver's names) and it reports the stub; a bad bundle is named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../common/cli_run.h"
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

}  // namespace
}  // namespace tirtune
