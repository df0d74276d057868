// The model library: task extraction from an ONNX file, compiling with and without records, the
// graph executor against the interpreter, and the errors of corrupt artifacts and wrong inputs.
#include "tirtune/model/model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>

#include "model_fixture.h"
#include "model_testing.h"
#include "tirtune/database/database.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/ir/printer.h"
#include "tirtune/measure/verify.h"
#include "tirtune/model/compile.h"
#include "tirtune/model/executor.h"
#include "tirtune/model/npy.h"
#include "tirtune/offload/library.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/search/default_schedule.h"
#include "tirtune/search/space.h"
#include "tirtune/support/error.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::model {
namespace {

namespace fs = std::filesystem;
using testing::OneTask;
using testing::SmallCnn;
using testing::TestDir;
using testing::WriteModel;

class ModelTest : public testing::CompiledModelTest {};

TEST_F(ModelTest, ExtractsTheFusedFunctionsAsTasks) {
  ModelTasks m = LoadOnnxModel(WriteModel(SmallCnn(), dir_ / "cnn.onnx"));
  EXPECT_GE(m.tasks.size(), 3u);
  ASSERT_EQ(m.call_task.size(), m.fused.calls().size());
  for (size_t c = 0; c < m.call_task.size(); ++c) {
    EXPECT_EQ(m.fused.calls()[c].kind, graph::CallKind::kPrimFunc);
    ASSERT_GE(m.call_task[c], 0);
    ASSERT_LT(m.call_task[c], static_cast<int>(m.tasks.size()));
  }
  int uses = 0;
  for (const graph::Task& t : m.tasks) uses += t.weight;
  EXPECT_EQ(uses, static_cast<int>(m.fused.calls().size()));
}

TEST_F(ModelTest, UntunedCompileFallsBackEverywhereAndMatchesTheInterpreter) {
  std::vector<CompiledTask> compiled =
      CompileAndCheck(WriteModel(SmallCnn(), dir_ / "cnn.onnx"), nullptr);
  for (const CompiledTask& t : compiled) {
    EXPECT_FALSE(t.tuned) << t.name;
    EXPECT_EQ(t.fallback_reason, "no database");
  }
  for (const char* file : {"manifest.json", "graph.json", "weights.bin"}) {
    EXPECT_TRUE(fs::exists(dir_ / "art" / file)) << file;
  }
}

TEST_F(ModelTest, AStoredRecordIsReplayedAndReported) {
  std::string path = WriteModel(OneTask(), dir_ / "one.onnx");
  ModelTasks m = LoadOnnxModel(path);
  ASSERT_EQ(m.tasks.size(), 1u);
  std::unique_ptr<Database> db = MakeMemoryDatabase();
  WorkloadEntry entry = db->CommitWorkload(m.tasks[0].func);
  TuningRecord record;
  record.workload = entry.id;
  record.target = Target::Parse("llvm -num-cores=2").str();
  record.trace =
      DefaultSchedule(m.tasks[0].func, Target::Parse("llvm -num-cores=2")).trace().ToJson();
  record.run_secs = {2e-6, 3e-6};
  db->CommitRecords({record});
  std::vector<CompiledTask> compiled = CompileAndCheck(path, db.get());
  ASSERT_EQ(compiled.size(), 1u);
  EXPECT_TRUE(compiled[0].tuned) << compiled[0].fallback_reason;
  ASSERT_TRUE(compiled[0].best_seconds.has_value());
  EXPECT_DOUBLE_EQ(*compiled[0].best_seconds, 2.5e-6);
}

TEST_F(ModelTest, ConstantsArePackedInTheLayoutTheirKernelsReadAndUnpackedForTheReference) {
  // Records of sampled (tiled) schedules of every function: their postprocessing packs the
  // weights the tiles read out of order.
  std::string path = WriteModel(SmallCnn(), dir_ / "cnn.onnx");
  ModelTasks m = LoadOnnxModel(path);
  Target target = Target::Parse("llvm -num-cores=2");
  SpaceGenerator space = SpaceGenerator::For(target);
  std::unique_ptr<Database> db = MakeMemoryDatabase();
  int packed_records = 0;
  for (const graph::Task& task : m.tasks) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      Trace design = space.GenerateDesignSpaces(task.func, seed).front().trace();
      std::optional<Schedule> sch = space.ReplayAndPostprocess(task.func, design, seed);
      if (!sch || PackedParams(sch->func()).empty()) continue;
      TuningRecord record;
      record.workload = db->CommitWorkload(task.func).id;
      record.target = target.str();
      record.trace = sch->trace().ToJson();
      record.run_secs = {1e-6};
      db->CommitRecords({record});
      ++packed_records;
      break;
    }
  }
  ASSERT_GT(packed_records, 0) << "no sampled schedule packs a weight";
  CompileAndCheck(path, db.get());
  Artifact art = ReadArtifact((dir_ / "art").string());
  int packed = 0;
  for (const ArtifactValue& v : art.values) {
    if (v.layout.empty()) continue;
    ++packed;
    PackedLayout layout = PackedLayout::FromJson(v.layout, v.name);
    EXPECT_EQ(layout.PackedShape(), v.shape);
  }
  EXPECT_GT(packed, 0) << "no constant was packed";
  // The reference graph reads the functions as written, on the unpacked constants.
  GraphExecutor executor((dir_ / "art").string());
  graph::Graph reference = executor.ReferenceGraph();
  std::vector<NDArray> inputs = graph::MakeRandomInputs(reference, 3);
  std::vector<NDArray> expected = graph::RunGraph(reference, inputs);
  std::vector<NDArray> actual = executor.Run(inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    VerifyResult v = CompareArrays("y", expected[i], actual[i], Tolerance{1e-4, 1e-5});
    EXPECT_TRUE(v.ok) << v.message;
  }
}

TEST_F(ModelTest, ARecordPackingAParameterThatIsNotAConstantGivesWayToTheNext) {
  std::string path = WriteModel(OneTask(), dir_ / "one.onnx");
  ModelTasks m = LoadOnnxModel(path);
  ASSERT_EQ(m.tasks.size(), 1u);
  const PrimFunc& func = m.tasks[0].func;
  std::unique_ptr<Database> db = MakeMemoryDatabase();
  Target target = Target::Parse("llvm -num-cores=2");
  TuningRecord good;
  good.workload = db->CommitWorkload(func).id;
  good.target = target.str();
  good.trace = DefaultSchedule(func, target).trace().ToJson();
  good.run_secs = {2e-6};
  // Faster, but it packs the input x (parameter 0), which the caller passes at run time.
  std::vector<int64_t> x_shape;
  for (const Expr& e : func->params[0]->shape) x_shape.push_back(e.as<IntImmNode>()->value);
  ASSERT_EQ(x_shape.size(), 2u);
  TuningRecord input_packed = good;
  input_packed.trace = Trace().ToJson();
  Schedule sch(func);
  sch.TransformLayout(0, PackedLayout{x_shape, {{1, 1, x_shape[1]}, {0, 1, x_shape[0]}}});
  input_packed.trace = sch.trace().ToJson();
  input_packed.run_secs = {1e-6};
  db->CommitRecords({good, input_packed});
  std::vector<CompiledTask> compiled = CompileAndCheck(path, db.get());
  ASSERT_EQ(compiled.size(), 1u);
  EXPECT_TRUE(compiled[0].tuned) << compiled[0].fallback_reason;
  EXPECT_DOUBLE_EQ(compiled[0].best_seconds.value_or(0), 2e-6);
  EXPECT_EQ(compiled[0].note,
            "used the record ranked 2 of 2: the best reads parameter 0 packed, which is not a "
            "constant at every call");
}

TEST_F(ModelTest, ABestRecordThatNoLongerReplaysGivesWayToTheNext) {
  std::string path = WriteModel(OneTask(), dir_ / "one.onnx");
  ModelTasks m = LoadOnnxModel(path);
  std::unique_ptr<Database> db = MakeMemoryDatabase();
  Target target = Target::Parse("llvm -num-cores=2");
  TuningRecord good;
  good.workload = db->CommitWorkload(m.tasks[0].func).id;
  good.target = target.str();
  good.trace = DefaultSchedule(m.tasks[0].func, target).trace().ToJson();
  good.run_secs = {2e-6};
  // Faster, but its trace names a block the function does not have.
  TuningRecord stale = good;
  for (nlohmann::json& inst : stale.trace["insts"]) {
    if (inst["kind"] == "GetBlock") {
      inst["attrs"]["name"] = "no_such_block";
      break;
    }
  }
  stale.run_secs = {1e-6};
  db->CommitRecords({good, stale});
  std::vector<CompiledTask> compiled = CompileAndCheck(path, db.get());
  ASSERT_EQ(compiled.size(), 1u);
  EXPECT_TRUE(compiled[0].tuned) << compiled[0].fallback_reason;
  EXPECT_DOUBLE_EQ(compiled[0].best_seconds.value_or(0), 2e-6);
  EXPECT_EQ(compiled[0].note, "used the record ranked 2 of 2: the best no longer replays");
}

TEST_F(ModelTest, ARecordOfAnotherTargetIsNotUsed) {
  std::string path = WriteModel(OneTask(), dir_ / "one.onnx");
  ModelTasks m = LoadOnnxModel(path);
  std::unique_ptr<Database> db = MakeMemoryDatabase();
  TuningRecord record;
  record.workload = db->CommitWorkload(m.tasks[0].func).id;
  record.target = "llvm -mcpu=x86-64 -num-cores=1";
  record.trace = Schedule(m.tasks[0].func).trace().ToJson();
  record.run_secs = {1e-6};
  db->CommitRecords({record});
  std::vector<CompiledTask> compiled = CompileAndCheck(path, db.get());
  EXPECT_FALSE(compiled[0].tuned);
  EXPECT_EQ(compiled[0].fallback_reason, "no record for the target");
}

TEST_F(ModelTest, WrongInputsAreUserErrors) {
  ModelTasks m = LoadOnnxModel(WriteModel(OneTask(), dir_ / "one.onnx"));
  CompileModel(m, (dir_ / "art").string(), {});
  GraphExecutor executor((dir_ / "art").string());
  EXPECT_THROW(executor.Run({}), UserError);
  NDArray wrong = NDArray::Empty({4, 15}, DataType::Float(32));
  try {
    executor.Run({wrong});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("must be float32[4, 16]"), std::string::npos) << e.what();
  }
}

TEST_F(ModelTest, CorruptArtifactsAreUserErrors) {
  ModelTasks m = LoadOnnxModel(WriteModel(OneTask(), dir_ / "one.onnx"));
  const fs::path art = dir_ / "art";
  CompileModel(m, art.string(), {});
  auto expect_error = [&](const std::string& what) {
    try {
      GraphExecutor executor(art.string());
      ADD_FAILURE() << "no error, expected one mentioning " << what;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  EXPECT_THROW(GraphExecutor((dir_ / "nothing").string()), UserError);

  // A truncated object.
  fs::path object = art / ("kernels/" + m.tasks[0].name + ".o");
  fs::resize_file(object, 100);
  expect_error(".o");
  CompileModel(m, art.string(), {});
  // Truncated weights.
  fs::resize_file(art / "weights.bin", 10);
  expect_error("weights.bin");
  CompileModel(m, art.string(), {});
  // A manifest that is not JSON, and one that is missing.
  std::ofstream(art / "manifest.json") << "{not json";
  expect_error("manifest.json");
  fs::remove(art / "manifest.json");
  expect_error("manifest.json");
  CompileModel(m, art.string(), {});
  // A graph changed after compile.
  std::ofstream(art / "graph.json")
      << R"({"values": [], "calls": [{"function": 7, "args": [], "output": 0}],)"
      << R"( "inputs": [], "outputs": []})";
  expect_error("graph.json' is damaged or was changed after compile");
  CompileModel(m, art.string(), {});
  // A few flipped bits in a kernel object: refused before it is linked into the process.
  {
    std::fstream f(object, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(200);
    char c = 0;
    f.read(&c, 1);
    f.seekp(200);
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  expect_error(".o' is damaged or was changed after compile");
}

TEST_F(ModelTest, CompilingAgainReplacesAnArtifactWholeAndNeverAStrangersDirectory) {
  ModelTasks m = LoadOnnxModel(WriteModel(OneTask(), dir_ / "one.onnx"));
  const fs::path art = dir_ / "art";
  CompileModel(m, art.string(), {});
  std::ofstream(art / "stale.txt") << "from before";
  CompileModel(m, art.string(), {});
  EXPECT_FALSE(fs::exists(art / "stale.txt")) << "the old artifact was not replaced whole";
  EXPECT_NO_THROW(GraphExecutor{art.string()});
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
  }
  const fs::path mine = dir_ / "my_notes";
  fs::create_directories(mine);
  std::ofstream(mine / "notes.txt") << "precious";
  EXPECT_THROW(CompileModel(m, mine.string(), {}), UserError);
  EXPECT_TRUE(fs::exists(mine / "notes.txt"));

  // What a compile killed with SIGKILL left (its process gone) goes with the next compile.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string host_name(host);
  std::replace(host_name.begin(), host_name.end(), '-', '_');
  std::replace(host_name.begin(), host_name.end(), '/', '_');
  const fs::path abandoned = dir_ / ("art.partial-" + host_name + "-999999999");
  fs::create_directories(abandoned / "kernels");
  CompileModel(m, art.string(), {});
  EXPECT_FALSE(fs::exists(abandoned));

  // Ctrl-C during a compile: the previous artifact stays whole, nothing half-written is left.
  std::ofstream(art / "stale.txt") << "from before";
  std::atomic<bool> stop{true};
  CompileModelOptions interrupted;
  interrupted.stop = &stop;
  EXPECT_THROW(CompileModel(m, art.string(), interrupted), Interrupted);
  EXPECT_TRUE(fs::exists(art / "stale.txt"));
  EXPECT_NO_THROW(GraphExecutor{art.string()});
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
  }
}

TEST_F(ModelTest, DefaultScheduleInlinesParallelizesAndVectorizes) {
  // dense(4x16 by 8x16) -> bias_add -> relu: the bias add is inlined into the relu, the dense's
  // spatial loops are fused and parallel, the relu's inner loop (8 lanes) is vectorized.
  ModelTasks m = LoadOnnxModel(WriteModel(OneTask(), dir_ / "one.onnx"));
  ASSERT_EQ(m.tasks.size(), 1u);
  Schedule sch = DefaultSchedule(m.tasks[0].func, Target::Parse("llvm -num-cores=2"));
  std::string text = Print(sch.func());
  EXPECT_NE(text.find("parallel"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized"), std::string::npos) << text;
  EXPECT_EQ(sch.state().AllBlocks().size(), 3u) << text;  // root, dense, relu
  std::vector<NDArray> args = MakeRandomArgs(m.tasks[0].func, 3);
  std::vector<NDArray> expected = MakeRandomArgs(m.tasks[0].func, 3);
  Interpret(m.tasks[0].func, expected);
  Interpret(sch.func(), args);
  VerifyResult v = CompareArrays("out", expected.back(), args.back(), Tolerance{1e-5, 1e-6});
  EXPECT_TRUE(v.ok) << v.message;
}

// The schedule of `spec` by DefaultSchedule, checked against the interpreter; returns its text.
std::string DefaultScheduleChecked(const std::string& spec) {
  Workload w = MakeWorkload(spec);
  Schedule sch = DefaultSchedule(w.func, Target::Parse("llvm -num-cores=2"));
  std::vector<NDArray> expected = MakeRandomArgs(w.func, 5);
  std::vector<NDArray> args = MakeRandomArgs(w.func, 5);
  Interpret(w.func, expected);
  Interpret(sch.func(), args);
  VerifyResult v = CompareArrays(spec, expected.back(), args.back(), Tolerance{1e-4, 1e-5});
  EXPECT_TRUE(v.ok) << v.message;
  return Print(sch.func());
}

TEST_F(ModelTest, DefaultScheduleVectorizesADenseWithRowMajorWeightsAlongItsRows) {
  // Y[i, j] += X[i, k] * W[j, k]: vectorizing j would gather W's column; the k loop is split by
  // 16 and factored out instead, and the partial sums vectorize over contiguous rows.
  std::string text = DefaultScheduleChecked("dense:4,8,128");
  EXPECT_NE(text.find("_rf"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized"), std::string::npos) << text;
  EXPECT_NE(text.find("parallel"), std::string::npos) << text;
  // Too short a reduction to factor: the order stays, nothing is vectorized (no gathers).
  text = DefaultScheduleChecked("dense:4,8,32");
  EXPECT_EQ(text.find("_rf"), std::string::npos) << text;
  EXPECT_EQ(text.find("vectorized"), std::string::npos) << text;
  // A GEMM with a [K, N] operand still vectorizes its output rows, without rfactor.
  text = DefaultScheduleChecked("gemm:4,32,64");
  EXPECT_EQ(text.find("_rf"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized"), std::string::npos) << text;
}

// A model that only casts, compares, masks and indexes with its other types: float16 and int32
// inputs widened to float32, a comparison and a bool input combined into a mask that selects,
// int8 arithmetic, a gather with int32 indices (negative ones count from the end), and float16 /
// bool / int8 outputs. Compiled, it matches the interpreter.
TEST_F(ModelTest, TypesAtTheBoundaryAndInsideCompileAndMatchTheInterpreter) {
  using onnx::TensorProto;
  testing::OnnxModelBuilder b;
  b.Input("x", {2, 8}, TensorProto::FLOAT16).Input("ids", {2, 8}, TensorProto::INT32);
  b.Input("keep", {2, 8}, TensorProto::BOOL).Input("k", {2, 8}, TensorProto::INT8);
  b.Input("rows", {3}, TensorProto::INT32);
  b.Output("y", {2, 8}, TensorProto::FLOAT16).Output("mask", {2, 8}, TensorProto::BOOL);
  b.Output("k2", {2, 8}, TensorProto::INT8).Output("picked", {3, 8});
  b.Weight("threshold", {8}, 11, -0.5, 0.5);
  testing::OnnxModelBuilder::SetInt(b.Node("Cast", {"x"}, {"xf"}), "to", TensorProto::FLOAT);
  testing::OnnxModelBuilder::SetInt(b.Node("Cast", {"ids"}, {"idf"}), "to", TensorProto::FLOAT);
  b.Node("Less", {"xf", "threshold"}, {"below"});
  b.Node("And", {"below", "keep"}, {"mask"});
  b.Node("Add", {"xf", "idf"}, {"sum"});
  b.Node("Where", {"mask", "sum", "xf"}, {"yf"});
  testing::OnnxModelBuilder::SetInt(b.Node("Cast", {"yf"}, {"y"}), "to", TensorProto::FLOAT16);
  b.Node("Mul", {"k", "k"}, {"kk"});
  b.Node("Sub", {"kk", "k"}, {"k2"});
  onnx::TensorProto* flat = b.graph()->add_initializer();
  flat->set_name("table");
  flat->set_data_type(TensorProto::FLOAT);
  for (int64_t d : {4, 8}) flat->add_dims(d);
  for (int i = 0; i < 32; ++i) flat->add_float_data(0.25f * i);
  testing::OnnxModelBuilder::SetInt(b.Node("Gather", {"table", "rows"}, {"picked"}), "axis", 0);
  std::string path = WriteModel(b, dir_ / "types.onnx");
  graph::Graph imported = graph::ImportOnnx(path);
  std::vector<DataType> expected_inputs = {DataType::Float(16), DataType::Int(32), DataType::Bool(),
                                           DataType::Int(8), DataType::Int(32)};
  ASSERT_EQ(imported.Inputs().size(), expected_inputs.size());
  for (size_t i = 0; i < expected_inputs.size(); ++i) {
    EXPECT_EQ(imported.value(imported.Inputs()[i]).type.dtype, expected_inputs[i]) << i;
  }
  std::vector<DataType> expected_outputs = {DataType::Float(16), DataType::Bool(), DataType::Int(8),
                                            DataType::Float(32)};
  ASSERT_EQ(imported.outputs().size(), expected_outputs.size());
  for (size_t i = 0; i < expected_outputs.size(); ++i) {
    EXPECT_EQ(imported.value(imported.outputs()[i]).type.dtype, expected_outputs[i]) << i;
  }
  CompileAndCheck(path, nullptr);
}

TEST_F(ModelTest, NpyRoundTrips) {
  for (DataType dtype :
       {DataType::Float(32), DataType::Float(64), DataType::Float(16), DataType::Int(8),
        DataType::Int(16), DataType::Int(32), DataType::Int(64), DataType::UInt(8),
        DataType::UInt(16), DataType::UInt(32), DataType::UInt(64), DataType::Bool()}) {
    NDArray a = NDArray::Empty({2, 3, 5}, dtype);
    RandomRange range = RandomRangeFor(dtype);
    a.FillRandom(3, range.lo, range.hi);
    std::string path = (dir_ / "a.npy").string();
    WriteNpy(path, a);
    NDArray b = ReadNpy(path);
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(b.dtype(), a.dtype());
    for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.GetDouble(i), b.GetDouble(i)) << dtype.str();
  }
  std::ofstream(dir_ / "bad.npy") << "hello";
  EXPECT_THROW(ReadNpy((dir_ / "bad.npy").string()), UserError);
}

// A version 1.0 .npy file with `header` as its dictionary and `data` after it.
std::string NpyWithHeader(const fs::path& path, std::string header, const std::string& data) {
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  std::ofstream(path, std::ios::binary) << bytes << header << data;
  return path.string();
}

TEST_F(ModelTest, NpyHeadersThatLieAboutTheirShapeAreRefusedBeforeAllocating) {
  const std::string f32 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  struct Case {
    std::string shape;
    std::string message;
  };
  for (const Case& c :
       std::vector<Case>{{"(100000000000, 100000), }",
                          "holds 16 bytes of data, its shape (100000000000, 100000) "
                          "needs 40000000000000000"},
                         {"(-3,), }", "bad dimension '-3'"},
                         {"(2, x), }", "bad dimension 'x'"},
                         {"(5,), }", "holds 16 bytes of data, its shape (5,) needs 20"}}) {
    std::string path = NpyWithHeader(dir_ / "lie.npy", f32 + c.shape, std::string(16, '\0'));
    try {
      ReadNpy(path);
      ADD_FAILURE() << c.shape << " was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("lie.npy"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(
      ReadNpy(NpyWithHeader(dir_ / "ok.npy", f32 + "(2, 2), }", std::string(16, '\0'))).shape(),
      (std::vector<int64_t>{2, 2}));
}

}  // namespace
}  // namespace tirtune::model
