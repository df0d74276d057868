// Compiling with library offload: --offload always runs every composite on its library;
// --offload measured the library where its record is kept (the best, or the best tuned one is not
// 3% faster), with the algorithm the record names (Winograd); each model matches the interpreter.
#include <gtest/gtest.h>

#include <memory>

#include "model_fixture.h"
#include "tirtune/database/database.h"
#include "tirtune/offload/library.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/search/default_schedule.h"
#include "tirtune/support/error.h"

namespace tirtune::model {
namespace {

using testing::OneTask;
using testing::SmallCnn;
using testing::WriteModel;

class ModelTest : public testing::CompiledModelTest {};

TEST_F(ModelTest, OffloadAlwaysRunsTheLibrarysCompositesAndMatchesTheInterpreter) {
  std::vector<CompiledTask> compiled =
      CompileAndCheck(WriteModel(SmallCnn(), dir_ / "cnn.onnx"), nullptr, Offload::kAlways);
  std::vector<std::string> libraries;
  for (const CompiledTask& t : compiled) {
    if (!t.library.empty()) {
      libraries.push_back(t.library);
      EXPECT_TRUE(t.object_file.empty()) << t.name;
    }
  }
  ASSERT_EQ(libraries.size(), 3u);
  EXPECT_NE(libraries[0].find("oneDNN conv2d"), std::string::npos) << libraries[0];
  EXPECT_NE(libraries[0].find("post-ops relu"), std::string::npos) << libraries[0];
  EXPECT_NE(libraries[1].find("oneDNN max_pool2d"), std::string::npos) << libraries[1];
  EXPECT_NE(libraries[2].find("oneDNN dense"), std::string::npos) << libraries[2];
  // The per-call timings and the reference graph (the functions as written) cover them too.
  GraphExecutor executor((dir_ / "art").string());
  std::vector<NDArray> inputs = graph::MakeRandomInputs(executor.ReferenceGraph(), 3);
  std::vector<NDArray> expected = graph::RunGraph(executor.ReferenceGraph(), inputs);
  std::vector<NDArray> actual = executor.Run(inputs);
  EXPECT_TRUE(CompareArrays("y", expected[0], actual[0], Tolerance{1e-4, 1e-5}).ok);
  EXPECT_EQ(executor.RunTimedCalls().size(), executor.artifact().calls.size());
  // Each call again four times in a row (library calls too) leaves the model's outputs as they
  // were.
  std::vector<double> alone = executor.RunTimedCalls(4);
  ASSERT_EQ(alone.size(), executor.artifact().calls.size());
  for (double seconds : alone) EXPECT_GT(seconds, 0);
  EXPECT_TRUE(CompareArrays("y", expected[0], executor.Outputs()[0], Tolerance{1e-4, 1e-5}).ok);
  // A cuda target's libraries are cuBLAS (its products first) and cuDNN (convolutions).
  std::vector<graph::FusionPattern> gpu =
      OffloadPatterns(Offload::kAlways, Target::Parse("cuda -arch=sm_90"));
  std::vector<std::string> backends;
  for (const graph::FusionPattern& p : gpu) {
    std::string backend = p.name.substr(0, p.name.find('.'));
    if (backends.empty() || backends.back() != backend) backends.push_back(backend);
  }
  EXPECT_EQ(backends, (std::vector<std::string>{"cublas", "cudnn"}));
  EXPECT_THROW(ParseOffload("sometimes"), UserError);
}

// --offload measured: the library runs a function whose best record is the library's (a trace
// that offloads), or a tuned one not 3% faster; a tuned kernel one whose best record is
// tuned; --offload never passes over a library record with the reason.
TEST_F(ModelTest, OffloadMeasuredRunsTheLibraryWhereItsRecordIsTheBest) {
  std::string path = WriteModel(OneTask(), dir_ / "one.onnx");
  const Target target = Target::Parse("llvm -num-cores=2");
  ModelTasks m = LoadOnnxModel(path, OffloadPatterns(Offload::kMeasured, target));
  ASSERT_EQ(m.tasks.size(), 1u);
  ASSERT_FALSE(TaskLibrary(m, 0).empty());
  Schedule library(m.tasks[0].func);
  library.Offload("dnnl.dense");
  Schedule tuned = DefaultSchedule(m.tasks[0].func, target);
  // Compiled with a database holding the library's record and the tuned one at these times.
  std::unique_ptr<Database> db;
  auto compile_with = [&](double library_secs, double tuned_secs, Offload offload) {
    db = MakeMemoryDatabase();
    const WorkloadId w = db->CommitWorkload(m.tasks[0].func).id;
    std::vector<TuningRecord> records(2);
    for (int i = 0; i < 2; ++i) {
      records[i].workload = w;
      records[i].target = target.str();
      records[i].trace = (i == 0 ? library : tuned).trace().ToJson();
      records[i].run_secs = {i == 0 ? library_secs : tuned_secs};
    }
    db->CommitRecords(records);
    std::vector<CompiledTask> compiled = CompileAndCheck(path, db.get(), offload);
    EXPECT_EQ(compiled.size(), 1u);
    return compiled.at(0);
  };
  CompiledTask compiled = compile_with(1e-6, 2e-6, Offload::kMeasured);
  EXPECT_NE(compiled.library.find("oneDNN dense"), std::string::npos) << compiled.library;
  EXPECT_DOUBLE_EQ(compiled.best_seconds.value_or(0), 1e-6);

  // Never: the tuned record, and a note on the library's.
  compiled = compile_with(1e-6, 2e-6, Offload::kNever);
  EXPECT_TRUE(compiled.library.empty());
  EXPECT_TRUE(compiled.tuned);
  EXPECT_NE(compiled.note.find("is the library's (compile with --offload measured)"),
            std::string::npos)
      << compiled.note;

  // The tuned record faster: measured keeps the kernel.
  compiled = compile_with(3e-6, 2e-6, Offload::kMeasured);
  EXPECT_TRUE(compiled.library.empty());
  EXPECT_TRUE(compiled.tuned);

  // The tuned record faster by less than 3% (one sample: median and lower quartile alike): the
  // library's, with a note saying so.
  compiled = compile_with(2.05e-6, 2e-6, Offload::kMeasured);
  EXPECT_FALSE(compiled.library.empty());
  EXPECT_DOUBLE_EQ(compiled.best_seconds.value_or(0), 2.05e-6);
  EXPECT_NE(compiled.note.find("not 3% faster"), std::string::npos) << compiled.note;
  // By 5%: the tuned kernel.
  compiled = compile_with(2.1e-6, 2e-6, Offload::kMeasured);
  EXPECT_TRUE(compiled.library.empty());
  EXPECT_TRUE(compiled.tuned);
}

// A 3x3 convolution with a residual sum and ReLU whose best record is the library's Winograd
// F(4x4, 3x3): compile builds that algorithm (the artifact's description names it), and the
// model computes what the interpreter does.
TEST_F(ModelTest, AWinogradLibraryRecordRunsAsWinograd) {
  testing::OnnxModelBuilder b;
  b.Input("x", {1, 16, 10, 10}).Output("y", {1, 16, 10, 10});
  b.Weight("w", {16, 16, 3, 3}, 1).Weight("b", {16}, 2);
  testing::OnnxModelBuilder::SetInts(b.Node("Conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c", "x"}, {"s"});
  b.Node("Relu", {"s"}, {"y"});
  std::string path = WriteModel(b, dir_ / "res.onnx");
  const Target target = Target::Parse("llvm -num-cores=2");
  ModelTasks m = LoadOnnxModel(path, OffloadPatterns(Offload::kMeasured, target));
  int conv = -1;
  for (size_t t = 0; t < m.tasks.size(); ++t) {
    if (!TaskLibrary(m, static_cast<int>(t)).empty()) conv = static_cast<int>(t);
  }
  ASSERT_GE(conv, 0);
  EXPECT_EQ(offload::LibraryAlgorithms(TaskLibrary(m, conv)),
            (std::vector<std::string>{"winograd4", "winograd2"}));
  std::unique_ptr<Database> db = MakeMemoryDatabase();
  WorkloadEntry entry = db->CommitWorkload(m.tasks[conv].func);
  Schedule winograd(m.tasks[conv].func);
  winograd.Offload("dnnl.conv2d", "winograd4");
  TuningRecord r;
  r.workload = entry.id;
  r.target = target.str();
  r.trace = winograd.trace().ToJson();
  r.run_secs = {1e-6};
  db->CommitRecords({r});
  std::vector<CompiledTask> compiled = CompileAndCheck(path, db.get(), Offload::kMeasured);
  ASSERT_GT(compiled.size(), static_cast<size_t>(conv));
  EXPECT_NE(compiled[conv].library.find("Winograd F(4x4, 3x3)"), std::string::npos)
      << compiled[conv].library;
  EXPECT_NE(compiled[conv].library.find("post-ops sum + relu"), std::string::npos)
      << compiled[conv].library;
}

}  // namespace
}  // namespace tirtune::model
