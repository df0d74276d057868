// Models on a GPU, checked where there is none: every fused function of a small CNN gets a
// default GPU schedule whose kernels compute the interpreter's numbers on the GPU-semantics
// executor; `CompileModel` for a cuda target writes one GpuProgram per function (where NVRTC is
// installed); and the executor refuses a cuda artifact on a host without the NVIDIA driver,
// saying why.
#include <gtest/gtest.h>

#include <filesystem>

#include "../lower/gpu_check.h"
#include "model_testing.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/model/compile.h"
#include "tirtune/search/default_schedule.h"
#include "tirtune/model/executor.h"
#include "tirtune/model/model.h"
#include "tirtune/support/error.h"

namespace tirtune::model {
namespace {

namespace fs = std::filesystem;

Target Sm90() { return Target::Parse("cuda -arch=sm_90"); }

class GpuModelTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TestDir("tirtune_gpu_model_test_"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(GpuModelTest, EveryFunctionsDefaultGpuScheduleComputesTheInterpretersNumbers) {
  ModelTasks m = LoadOnnxModel(testing::WriteModel(testing::SmallCnn(), dir_ / "cnn.onnx"));
  ASSERT_GE(m.tasks.size(), 3u);
  for (const graph::Task& task : m.tasks) {
    Schedule sch = DefaultGpuSchedule(task.func, Sm90());
    GpuModule module = LowerGpu(sch.func(), Sm90().gpu);
    EXPECT_FALSE(module.kernels.empty()) << task.name;
    EXPECT_EQ(tirtune::testing::CompareWithInterpreter(task.func, module), "")
        << task.name << "\n"
        << PrintGpuModule(module);
  }
}

TEST_F(GpuModelTest, CompilesOneGpuProgramPerFunctionAndNeedsADriverToRun) {
  std::string why;
  if (!CudaCompilerAvailable(&why)) GTEST_SKIP() << why;
  ModelTasks m = LoadOnnxModel(testing::WriteModel(testing::SmallCnn(), dir_ / "cnn.onnx"));
  CompileModelOptions options;
  options.target = Sm90();
  std::vector<CompiledTask> compiled = CompileModel(m, (dir_ / "art").string(), options);
  ASSERT_EQ(compiled.size(), m.tasks.size());
  for (const CompiledTask& t : compiled) {
    EXPECT_FALSE(t.tuned);
    ASSERT_TRUE(t.object_file.size() > 4 &&
                t.object_file.substr(t.object_file.size() - 4) == ".gpu")
        << t.object_file;
    std::ifstream in(dir_ / "art" / t.object_file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    GpuProgram program = GpuProgram::Deserialize(bytes);
    EXPECT_FALSE(program.launches.empty()) << t.name;
    for (const GpuProgram::Launch& l : program.launches) EXPECT_GE(l.block[0], 1) << t.name;
  }
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this host has an NVIDIA driver";
  try {
    GraphExecutor executor((dir_ / "art").string());
    FAIL() << "a cuda artifact loaded without a GPU";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("which needs this host's GPU"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tirtune::model
