// The tuning loop for a cuda target without a GPU: the real CUDA design space, evolutionary
// search, cost model and GPU features, the real builder (GPU lowering, NVRTC, resource gates;
// skipped where the CUDA toolkit's compiler is missing) and an SQLite database, with a test
// double in place of the GPU runner: it reads each GpuProgram and answers a made-up time that is
// shortest for blocks of 128 threads. Checked: every trial is stored for the cuda target, the
// search converges on what the double rewards, and the best record replays to kernels that
// compute the interpreter's numbers on the GPU-semantics executor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "../lower/gpu_check.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

// Answers 1 µs times (1 + |log2(threads per block / 128)|) for each GpuProgram, summed over its
// launches; a payload that is no GpuProgram is a runtime error.
class ThreadCountRunner : public Runner {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureCandidate>& candidates,
                                     const SlowCutoff&, const MeasureCallback& on_result) override {
    std::vector<MeasureResult> out;
    for (size_t i = 0; i < candidates.size(); ++i) {
      MeasureResult r;
      try {
        GpuProgram p = GpuProgram::Deserialize(candidates[i].object);
        double t = 0;
        for (const GpuProgram::Launch& l : p.launches) {
          double threads = static_cast<double>(l.block[0] * l.block[1] * l.block[2]);
          t += 1e-6 * (1 + std::fabs(std::log2(threads / 128)));
        }
        r.seconds = {t, t};
        r.median = t;
        r.number = 1;
        r.device = "test double";
        ++programs;
      } catch (const UserError& e) {
        r.status = MeasureStatus::kRuntimeError;
        r.message = e.what();
      }
      if (on_result) on_result(i, r);
      out.push_back(std::move(r));
    }
    return out;
  }
  std::string Describe() const override { return "thread-count test double"; }

  int programs = 0;
};

class TuneGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!CudaCompilerAvailable(&why)) GTEST_SKIP() << why;
    dir_ = std::filesystem::temp_directory_path() /
           ("tirtune_tune_gpu_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(TuneGpuTest, TunesForCudaStoringEveryTrialAndFindsWhatTheRunnerRewards) {
  Workload w = MakeWorkload("gemm:64,64,64");
  TuneOptions o;
  o.target = Target::Parse("cuda -arch=sm_90");
  o.max_trials = 32;
  o.trials_per_round = 16;
  o.evolutionary.population_size = 64;
  o.evolutionary.init_min_unmeasured = 16;
  o.pretrain = "none";
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "gpu.db").string());
  ThreadCountRunner runner;
  TuneResult r = Tune({TuneTask{w.spec, w.func, 1, w.flops}}, *db, o, runner);
  ASSERT_EQ(r.tasks.size(), 1u);
  const TaskResult& t = r.tasks[0];
  EXPECT_EQ(t.trials, 32);
  EXPECT_EQ(db->Size(), 32u);
  std::string statuses;
  for (const auto& [status, n] : t.status_counts)
    statuses += status + " " + std::to_string(n) + " ";
  RecordProperty("statuses", statuses);
  std::printf("statuses: %s\n", statuses.c_str());
  // Most samples build and pass the resource gates.
  EXPECT_GE(runner.programs, 16) << statuses;
  ASSERT_TRUE(t.best_seconds.has_value());
  // Blocks of 64 to 256 threads are within a microsecond of the best possible.
  EXPECT_LE(*t.best_seconds, 2.01e-6);

  std::vector<TuningRecord> top = db->TopK(t.workload, CanonicalTarget(o.target.str()), 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].device, "test double, warm");  // the runner's device, and how it timed
  std::optional<Schedule> best = ReplayRecord(w.func, top[0].trace);
  ASSERT_TRUE(best.has_value());
  GpuModule module = LowerGpu(best->func(), o.target.gpu);
  EXPECT_EQ(testing::CompareWithInterpreter(w.func, module), "") << PrintGpuModule(module);
}

}  // namespace
}  // namespace tirtune
