// The fixture of the model tests that compile a model and run it (model_test.cc,
// offload_model_test.cc): a temporary directory, and compiling with a check of the executor
// against the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/measure/verify.h"
#include "tirtune/model/compile.h"
#include "tirtune/model/executor.h"
#include "tirtune/model/model.h"

namespace tirtune::model::testing {

class CompiledModelTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TestDir("tirtune_model_test_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Compiles `model_path` into dir_/art and checks the executor against the interpreter on the
  // imported (unfused) graph.
  std::vector<CompiledTask> CompileAndCheck(const std::string& model_path, Database* db,
                                            Offload offload = Offload::kNever) {
    CompileModelOptions options;
    options.target = Target::Parse("llvm -num-cores=2");
    options.db = db;
    options.offload = offload;
    ModelTasks tasks = LoadOnnxModel(model_path, OffloadPatterns(offload, options.target));
    std::vector<CompiledTask> compiled = CompileModel(tasks, (dir_ / "art").string(), options);
    graph::Graph imported = graph::ImportOnnx(model_path);
    std::vector<NDArray> inputs = graph::MakeRandomInputs(imported, 7);
    std::vector<NDArray> expected = graph::RunGraph(imported, inputs);
    GraphExecutor executor((dir_ / "art").string());
    for (int round = 0; round < 2; ++round) {  // storage is reused between runs
      std::vector<NDArray> actual = executor.Run(inputs);
      EXPECT_EQ(actual.size(), expected.size());
      for (size_t i = 0; i < actual.size(); ++i) {
        VerifyResult v = CompareArrays("y", expected[i], actual[i], Tolerance{1e-4, 1e-5});
        EXPECT_TRUE(v.ok) << v.message;
      }
    }
    return compiled;
  }

  std::filesystem::path dir_;
};

}  // namespace tirtune::model::testing
