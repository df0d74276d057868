// The library candidate of an operator-library workload (WorkloadLibrary): built for the
// operators a library's patterns take, with the workload's parameters as its arguments, so that
// `tune --workload` measures it, verified against the workload's own reference, beside the tuned
// kernels; none for other operators, with --offload never, or on a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tirtune/model/model.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::model {
namespace {

const char* const kSpecs[] = {
    "gemm:16,24,32",
    "dense:8,16,32",
    "batch_matmul:2,8,12,16",
    "conv1d:1,12,8,16,3,1,1",
    "conv2d:1,8,8,8,16,3,1,1",
    "conv2d:1,9,9,8,8,3,2,1,1,2",  // strided and grouped
    "conv2d:1,10,10,16,32,3,1,1",  // also as Winograd F(4x4, 3x3) and F(2x2, 3x3)
    "conv3d:1,4,6,6,4,8,3,1,1",
    "max_pool2d:1,8,8,16,3,2,1",
    "avg_pool2d:1,8,8,16,3,2,1",
    "depthwise_conv2d:1,9,9,8,3,2,1",  // its weight [3, 3, 8] reshaped to [3, 3, 1, 8]
    "conv2d_transpose:1,4,4,8,8,4,2,1",
    "softmax:16,24",
    "cbr:1,6,6,8,8,3,1,1",
    "mbg:8,16,12",
    "tbg:1,5,3,4",  // query and value read through strides: transposed and reshaped in place
};

TEST(WorkloadLibrary, EveryOperatorALibraryTakesIsMeasuredAndVerifiedAsALibraryRecord) {
  Target cpu = Target::Parse("llvm -num-cores=2");
  std::vector<TuneTask> tasks;
  for (const char* spec : kSpecs) {
    Workload w = MakeWorkload(spec);
    std::string library = WorkloadLibrary(w.spec, Offload::kMeasured, cpu);
    EXPECT_NE(library, "") << spec;
    tasks.push_back(TuneTask{w.spec, w.func, 1, w.flops, library});
  }
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("tirtune_workload_library_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  TuneOptions o;
  o.target = cpu;
  o.max_trials = static_cast<int>(3 * tasks.size());
  o.trials_per_round = 3;
  o.task_scheduler = "round-robin";
  o.evolutionary.population_size = 16;
  o.evolutionary.init_min_unmeasured = 4;
  o.runner.timer.repeat = 2;
  o.runner.timer.min_repeat_ms = 0.2;
  std::unique_ptr<Database> db = OpenDatabase((dir / "t.db").string());
  TuneResult r = Tune(tasks, *db, o);
  for (const TaskResult& t : r.tasks) {
    SCOPED_TRACE(t.name);
    std::vector<std::string> algorithms;
    for (const TuningRecord& rec : db->RecordsOf(t.workload)) {
      if (rec.trace.dump().find("\"Offload\"") == std::string::npos) continue;
      const nlohmann::json& attrs = rec.trace["insts"][0]["attrs"];
      algorithms.push_back(attrs.value("algorithm", ""));
      EXPECT_EQ(rec.status, RecordStatus::kOk) << rec.error;
    }
    // One library record of each algorithm the backend offers, verified like any candidate.
    if (t.name == "conv2d:1,10,10,16,32,3,1,1") {
      EXPECT_EQ(algorithms, (std::vector<std::string>{"", "winograd4", "winograd2"}));
    } else {
      EXPECT_EQ(algorithms, std::vector<std::string>{""});
    }
  }
  db.reset();
  std::filesystem::remove_all(dir);
}

// A workload's weight is a placeholder the runner fills with seeded values: its description
// states no value, even for a weight small enough to state (a dense of 4 x 4).
TEST(WorkloadLibrary, StatesNoValueOfItsPlaceholderWeight) {
  std::string library =
      WorkloadLibrary("dense:2,4,4", Offload::kMeasured, Target::Parse("llvm -num-cores=2"));
  ASSERT_NE(library, "");
  EXPECT_EQ(library.find("\"value\""), std::string::npos) << library;
}

TEST(WorkloadLibrary, NoneForOtherOperatorsAndForNever) {
  Target cpu = Target::Parse("llvm -num-cores=2");
  EXPECT_EQ(WorkloadLibrary("norm:1,16,16", Offload::kMeasured, cpu), "");
  EXPECT_EQ(WorkloadLibrary("capsule_conv2d:1,4,4,2,2,3,1,1", Offload::kMeasured, cpu), "");
  // A batch of two: [batch, heads] merged after the transpose is no strided view (tuned only).
  EXPECT_EQ(WorkloadLibrary("tbg:2,5,3,4", Offload::kMeasured, cpu), "");
  EXPECT_EQ(WorkloadLibrary("conv2d:1,8,8,8,16,3,1,1", Offload::kNever, cpu), "");
  // On a GPU, cuBLAS runs the matrix products and cuDNN the convolutions.
  const Target gpu = Target::Parse("cuda -arch=sm_90");
  for (const char* conv : {"conv2d:1,8,8,8,16,3,1,1", "depthwise_conv2d:1,8,8,8,3,1,1",
                           "cbr:1,8,8,8,16,3,1,1", "conv1d:1,9,4,6,3,2,1"}) {
    std::string library = WorkloadLibrary(conv, Offload::kMeasured, gpu);
    EXPECT_NE(library.find("cudnn.conv"), std::string::npos) << conv << ": " << library;
  }
  EXPECT_EQ(WorkloadLibrary("max_pool2d:1,8,8,4,2,2,0", Offload::kMeasured, gpu), "");
  std::string dense = WorkloadLibrary("dense:2,4,4", Offload::kMeasured, gpu);
  EXPECT_NE(dense.find("cublas.dense"), std::string::npos) << dense;
  EXPECT_NE(WorkloadLibrary("gemm:8,8,8", Offload::kMeasured, gpu), "");
}

}  // namespace
}  // namespace tirtune::model
