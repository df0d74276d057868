// End-to-end tests of `tirtune compile`, `tirtune run` and `tirtune tune --model`, run as a user
// would: exit codes, JSON on stdout, errors on stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../common/cli_run.h"
#include "../common/scoped_env.h"
#include "model_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/model/npy.h"
#include "tirtune/offload/library.h"

namespace tirtune::model {
namespace {

namespace fs = std::filesystem;
using testing::OneTask;
using testing::SmallCnn;
using testing::WriteModel;
using Result = tirtune::testing::CliResult;
using tirtune::testing::ReadFile;

const char kTarget[] = "--target \"llvm -num-cores=1\"";

class ModelCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TestDir("tirtune_model_cli_test_"); }
  void TearDown() override { fs::remove_all(dir_); }

  Result Run(const std::string& args) { return tirtune::testing::RunCli(TIRTUNE_BIN, args, dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(ModelCli, UntunedCompileRunsAndVerifies) {
  std::string model = WriteModel(SmallCnn(), dir_ / "cnn.onnx");
  Result c = Run("compile --json --model " + model + " -o " + Path("art") + " " + kTarget);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  nlohmann::json j = c.Json();
  EXPECT_EQ(j["tuned"], 0);
  for (const nlohmann::json& f : j["functions"]) {
    EXPECT_FALSE(f["tuned"].get<bool>());
    EXPECT_EQ(f["fallback_reason"], "no database");
  }
  Result r = Run("run " + Path("art") + " --verify --json --outputs-dir " + Path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.Json()["verified"].get<bool>());

  // The written output is the interpreter's result on the same (seed 1) random input.
  graph::Graph imported = graph::ImportOnnx(model);
  NDArray x = NDArray::Empty({1, 3, 8, 8}, DataType::Float(32));
  x.FillRandom(1);
  WriteNpy(Path("x.npy"), x);
  Result r2 =
      Run("run " + Path("art") + " --inputs " + Path("x.npy") + " --outputs-dir " + Path("out2"));
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  NDArray y = ReadNpy(Path("out2/output_0.npy"));
  NDArray expected = graph::RunGraph(imported, {x})[0];
  ASSERT_EQ(y.shape(), expected.shape());
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y.GetDouble(i), expected.GetDouble(i), 1e-4);
}

// For a GPU: compiled here (NVRTC), run where the driver is; on a host without one `run` says so.
TEST_F(ModelCli, CompileForCudaWritesGpuProgramsAndRunNeedsTheDriver) {
  std::string model = WriteModel(SmallCnn(), dir_ / "cnn.onnx");
  Result c = Run("compile --json --model " + model + " -o " + Path("gpu") +
                 " --target \"cuda -arch=sm_90\"");
  if (c.exit_code != 0 && c.err.find("cannot compile CUDA here") != std::string::npos) {
    GTEST_SKIP() << c.err;
  }
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json plain = c.Json();
  for (const nlohmann::json& f : plain["functions"]) {
    std::string object = f["object"].get<std::string>();
    EXPECT_EQ(object.substr(object.size() - 4), ".gpu") << object;
  }
  // --offload always: the dense layer with its bias is one cuBLASLt product and the
  // convolution with its bias and ReLU one cuDNN call, both planned here without a GPU.
  Result a = Run("compile --json --offload always --model " + model + " -o " + Path("gpu_lib") +
                 " --target \"cuda -arch=sm_90\"");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  std::vector<std::string> libraries;
  const nlohmann::json compiled = a.Json();
  for (const nlohmann::json& f : compiled["functions"]) {
    if (f.contains("library")) libraries.push_back(f["library"].get<std::string>());
  }
  ASSERT_EQ(libraries.size(), 2u) << a.out;
  std::sort(libraries.begin(), libraries.end());
  EXPECT_EQ(libraries[0].rfind("cuBLASLt dense 1x5x64 (A transposed, bias)", 0), 0u)
      << libraries[0];
  EXPECT_EQ(libraries[1].rfind("cuDNN conv2d 3x3, 3 -> 4 channels on 1x8x8 (pad 1; bias, ReLU)", 0),
            0u)
      << libraries[1];
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this host has an NVIDIA driver";
  for (const char* dir : {"gpu", "gpu_lib"}) {
    Result r = Run("run " + Path(dir) + " --verify");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("which needs this host's GPU"), std::string::npos) << r.err;
  }
}

TEST_F(ModelCli, BenchReportsLatencyAndShares) {
  Result c = Run("compile --model " + WriteModel(SmallCnn(), dir_ / "cnn.onnx") + " -o " +
                 Path("art") + " " + kTarget);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("default"), std::string::npos) << c.out;
  Result r = Run("run " + Path("art") + " --bench --repeat 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = r.Json();
  EXPECT_GT(j["median_seconds"].get<double>(), 0);
  EXPECT_EQ(j["samples"].size(), 3u);
  double shares = 0;
  double alone = 0;
  for (const nlohmann::json& f : j["functions"]) {
    shares += f["share"].get<double>();
    EXPECT_GT(f["alone_seconds"].get<double>(), 0) << f.dump();
    alone += f["alone_seconds"].get<double>();
  }
  EXPECT_NEAR(shares, 1.0, 1e-6);
  // Each call timed warm and alone too; the functions' times add up to the calls' total.
  EXPECT_GT(j["calls_seconds"].get<double>(), 0);
  EXPECT_NEAR(j["calls_alone_seconds"].get<double>(), alone, 1e-9);
  Result text = Run("run " + Path("art") + " --bench --repeat 2");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("each warm and alone"), std::string::npos) << text.out;
}

TEST_F(ModelCli, TuneModelThenCompileUsesTheRecord) {
  std::string model = WriteModel(OneTask(), dir_ / "one.onnx");
  std::string db = Path("t.db");
  // Random search keeps the test short (the evolutionary search is the tune tests' subject).
  Result t = Run("tune --json --model " + model +
                 " --trials 8 --trials-per-round 8 --strategy replay --cost-model random --db " +
                 db + " " + kTarget);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  nlohmann::json tj = t.Json();
  ASSERT_EQ(tj["tasks"].size(), 1u);
  ASSERT_TRUE(tj["tasks"][0].contains("best_seconds")) << t.out;

  Result c =
      Run("compile --json --model " + model + " --db " + db + " -o " + Path("art") + " " + kTarget);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  nlohmann::json j = c.Json();
  EXPECT_EQ(j["tuned"], 1);
  EXPECT_TRUE(j["functions"][0]["tuned"].get<bool>());
  EXPECT_DOUBLE_EQ(j["functions"][0]["best_seconds"].get<double>(),
                   tj["tasks"][0]["best_seconds"].get<double>());
  Result r = Run("run " + Path("art") + " --verify");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verified"), std::string::npos) << r.out;
}

// A model whose weights exceed the last-level cache (here: an override of 256 bytes) has its
// candidates timed with cold weights unless told otherwise; one whose weights fit is timed warm;
// a database whose records of the tasks were timed one way goes on that way.
TEST_F(ModelCli, AModelWhoseWeightsExceedTheLastLevelCacheIsTimedWithColdWeights) {
  std::string model = WriteModel(OneTask(), dir_ / "one.onnx");  // 544 bytes of weights
  auto tune = [&](const std::string& name, const std::string& flags) {
    return Run("tune --json --model " + model +
               " --trials 4 --trials-per-round 4 --strategy replay --cost-model random --db " +
               Path(name) + " " + flags + " " + kTarget);
  };
  auto timing = [](const Result& r) { return r.Json()["timing"].get<std::string>(); };
  tirtune::testing::ScopedEnv cache("TIRTUNE_LAST_LEVEL_CACHE_BYTES");
  cache.Set("256");
  Result cold = tune("cold.db", "");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(timing(cold), "timed with cold weights");
  EXPECT_NE(ReadFile(Path("cold.db.log")).find("exceed this CPU's last-level cache"),
            std::string::npos);
  Result warm = tune("warm.db", "--warm-weights");
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(timing(warm), "timed warm");
  Result flushed = tune("flush.db", "--flush-cache");
  ASSERT_EQ(flushed.exit_code, 0) << flushed.err;
  EXPECT_EQ(timing(flushed), "timed on flushed caches");
  cache.Set("1000000");
  Result fits = tune("fits.db", "");
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(timing(fits), "timed warm");
  // A workload or a function is timed warm whatever the cache: the default is for models.
  cache.Set("256");
  Result op =
      Run("tune --json --workload gemm:8,8,8 --trials 2 --strategy replay --cost-model "
          "random --db " +
          Path("op.db") + " " + kTarget);
  ASSERT_EQ(op.exit_code, 0) << op.err;
  EXPECT_EQ(timing(op), "timed warm");
  // Every record says how it was timed; a database keeps the timing of the records its tasks
  // have, whatever the default, so that new records compare with them.
  ASSERT_EQ(Run("db export --db " + Path("cold.db") + " -o " + Path("cold.jsonl")).exit_code, 0);
  EXPECT_NE(ReadFile(Path("cold.jsonl")).find(", cold weights\""), std::string::npos);
  // Records from before timings were written down say nothing: the default decides.
  std::string old = ReadFile(Path("cold.jsonl"));
  for (size_t at; (at = old.find(", cold weights")) != std::string::npos;) old.erase(at, 14);
  std::ofstream(Path("old.jsonl")) << old;
  ASSERT_EQ(Run("db import --db " + Path("old.db") + " " + Path("old.jsonl")).exit_code, 0);
  Result old_cold = tune("old.db", "");
  ASSERT_EQ(old_cold.exit_code, 0) << old_cold.err;
  EXPECT_EQ(timing(old_cold), "timed with cold weights");
  EXPECT_EQ(ReadFile(Path("old.db.log")).find("are timed the same"), std::string::npos);
  Result warm_again = tune("warm.db", "--resume");
  ASSERT_EQ(warm_again.exit_code, 0) << warm_again.err;
  EXPECT_EQ(timing(warm_again), "timed warm");
  EXPECT_NE(ReadFile(Path("warm.db.log"))
                .find("were timed warm: new candidates are timed the "
                      "same, so that they compare (--cold-weights"),
            std::string::npos);
  cache.Set("1000000");
  Result cold_again = tune("cold.db", "");
  ASSERT_EQ(cold_again.exit_code, 0) << cold_again.err;
  EXPECT_EQ(timing(cold_again), "timed with cold weights");
  Result warm_asked = tune("cold.db", "--warm-weights");
  ASSERT_EQ(warm_asked.exit_code, 0) << warm_asked.err;
  EXPECT_EQ(timing(warm_asked), "timed warm");
  // ... and is told that its records will not compare with the stored ones.
  EXPECT_NE(ReadFile(Path("cold.db.log"))
                .find("were timed with cold weights, this run's are timed warm as asked: their "
                      "times do not compare"),
            std::string::npos);
  cache.Set("lots");
  Result bad = tune("bad.db", "");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("TIRTUNE_LAST_LEVEL_CACHE_BYTES must be a positive number of bytes"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("not 'lots'"), std::string::npos) << bad.err;
  cache.Unset();
  Result both = tune("both.db", "--warm-weights --cold-weights");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

// One poisoned row of each kind, each claiming to be the fastest record of the model's task:
// JSON nested 100,000 levels deep, a tiling decision whose product wraps around 64
// bits, an instruction nobody knows, and text that is not JSON. Every command that reads the
// database works, says which rows it skipped, and never uses or keeps them.
TEST_F(ModelCli, PoisonedRowsOfEachKindAreSkippedWithAWarningByEveryCommand) {
  std::string model = WriteModel(OneTask(), dir_ / "one.onnx");
  std::string db = Path("t.db");
  const std::string tune = "tune --model " + model +
                           " --trials-per-round 8 --strategy replay --cost-model random " +
                           kTarget + " --db " + db;
  Result t = Run(tune + " --trials 8");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const std::string deep = R"('{"format":"tirtune-trace","version":1,"insts":)" +
                           std::string(100000, '[') + std::string(100000, ']') + "}'";
  const std::vector<std::pair<std::string, std::string>> poisons = {
      {"deep", deep},
      {"absurd", R"(replace(trace, '"decision":[', '"decision":[4611686018427387905,'))"},
      {"unknown", R"(replace(trace, '"kind":"GetBlock"', '"kind":"Teleport"'))"},
      {"garbage", "'garbage {{ not a trace'"}};
  std::string sql;
  for (const auto& [name, trace] : poisons) {
    sql += "INSERT INTO tuning_record (workload_id, target_id, trace_hash, trace, status, "
           "run_secs, median_secs, error, device, program_version, created_at) SELECT "
           "workload_id, target_id, 'poison-" +
           name + "', " + trace +
           ", 'ok', '[1e-9]', 1e-9, '', 'd', 'v', created_at FROM tuning_record WHERE status = "
           "'ok' AND trace LIKE '%\"decision\":[%' LIMIT 1;\n";
  }
  std::ofstream(Path("poison.sql")) << sql;
  ASSERT_EQ(std::system(("sqlite3 " + db + " < " + Path("poison.sql")).c_str()), 0);
  ASSERT_EQ(ReadFile(db).empty(), false);
  const std::vector<std::string> skipped = {
      "trace is nested deeper than 64 levels; skipped", "Tile): the decision",
      "(Teleport): unknown instruction kind; skipped", "trace is not valid JSON; skipped"};
  auto expect_warnings = [&](const std::string& cmd, const Result& r) {
    for (const std::string& w : skipped) {
      EXPECT_NE((r.out + r.err).find(w), std::string::npos)
          << cmd << " does not warn " << w << ": " << r.err;
    }
  };
  for (const std::string& cmd :
       {"db list --db " + db, "db best --db " + db, "db show 1 --db " + db,
        "db export -o " + Path("e.jsonl") + " --db " + db,
        "db import " + db + " --db " + Path("copy.db"), "report -o " + Path("r.html") + " --db " + db,
        "compile --json --model " + model + " --db " + db + " -o " + Path("art") + " " + kTarget,
        tune + " --trials 16 --resume"}) {
    Result r = Run(cmd);
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    expect_warnings(cmd, r);
    EXPECT_EQ(r.out.find("0.001 us"), std::string::npos) << cmd << " shows a poisoned row: " << r.out;
  }
  // compile used a record that replays (the best readable one), and it runs and verifies.
  Result run = Run("run " + Path("art") + " --verify");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // check lists them and fails; prune removes them and keeps the good records.
  Result check = Run("db check --db " + db);
  EXPECT_EQ(check.exit_code, 1);
  expect_warnings("db check", check);
  Result prune = Run("db prune --keep 2 --db " + db);
  EXPECT_EQ(prune.exit_code, 0) << prune.err;
  expect_warnings("db prune", prune);
  Result after = Run("db check --db " + db);
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  // The two best, and the library's records besides them (compile may run one): one or two
  // tuned records are left, as the library's ranks.
  ASSERT_EQ(std::system(("sqlite3 " + db +
                         " \"SELECT count(*) FROM tuning_record WHERE trace NOT LIKE "
                         "'%Offload%'\" > " +
                         Path("tuned.txt"))
                            .c_str()),
            0);
  const std::string tuned_left = ReadFile(Path("tuned.txt"));
  EXPECT_TRUE(tuned_left == "1\n" || tuned_left == "2\n") << tuned_left;
  EXPECT_NE(after.out.find("no problem found ("), std::string::npos) << after.out;
}

// `time` of a library record: the trace names the composite it offloads to, which must be the
// one the target's library makes of the workload (oneDNN's here, not cuDNN's).
TEST_F(ModelCli, TimeOfALibraryTraceChecksItsComposite) {
  if (offload::DnnlBackend() == nullptr) GTEST_SKIP() << offload::BackendUnavailable("dnnl");
  auto trace = [&](const std::string& composite) {
    std::string path = Path(composite + ".json");
    std::ofstream(path) << R"({"format":"tirtune-trace","insts":[{"attrs":{"composite":")"
                        << composite
                        << R"("},"inputs":[],"kind":"Offload","outputs":[],"v":1}],"version":1})";
    return path;
  };
  const std::string workload =
      std::string("time --json --workload conv2d:1,6,6,4,8,3,1,1 ") + kTarget;
  Result ok = Run(workload + " --trace " + trace("dnnl.conv2d"));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_GT(ok.Json()["median_seconds"].get<double>(), 0);
  Result wrong = Run(workload + " --trace " + trace("cudnn.conv2d"));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("the trace offloads to cudnn.conv2d, but on llvm"), std::string::npos)
      << wrong.err;
  EXPECT_NE(wrong.err.find("the library's composite of this workload is dnnl.conv2d"),
            std::string::npos)
      << wrong.err;
}

// oneDNN missing at run time (its module not found: TIRTUNE_DNNL_MODULE names nothing): compile
// with --offload measured tunes every function and says why; --offload always refuses; a model
// compiled with library functions refuses to run without the library, naming the function; one
// compiled with --offload never runs as before.
TEST_F(ModelCli, WithoutOneDnnOffloadSaysWhyAndNothingElseChanges) {
  std::string model = WriteModel(SmallCnn(), dir_ / "cnn.onnx");
  auto without = [&](const std::string& args) {
    return tirtune::testing::RunCli(std::string("TIRTUNE_DNNL_MODULE=") +
                                        Path("missing/libtirtune_dnnl.so") + " " + TIRTUNE_BIN,
                                    args, dir_);
  };
  Result measured = without("compile --json --model " + model + " --offload measured -o " +
                            Path("tuned") + " " + kTarget);
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  EXPECT_NE(measured.err.find("note: oneDNN could not be loaded"), std::string::npos)
      << measured.err;
  EXPECT_NE(measured.err.find("missing/libtirtune_dnnl.so: no such file"), std::string::npos)
      << measured.err;
  EXPECT_EQ(measured.Json()["offloaded"], 0);
  Result always =
      without("compile --model " + model + " --offload always -o " + Path("none") + " " + kTarget);
  EXPECT_EQ(always.exit_code, 1);
  EXPECT_NE(always.err.find("--offload always: oneDNN could not be loaded"), std::string::npos)
      << always.err;
  EXPECT_FALSE(fs::exists(Path("none")));
  // Compiled where oneDNN is, run where it is not.
  Result offloaded = Run("compile --json --model " + model + " --offload always -o " +
                         Path("offloaded") + " " + kTarget);
  ASSERT_EQ(offloaded.exit_code, 0) << offloaded.err;
  ASSERT_GT(offloaded.Json()["offloaded"].get<int>(), 0);
  Result run = without("run " + Path("offloaded"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("(run by a library): oneDNN could not be loaded"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("--offload never"), std::string::npos) << run.err;
  Result tuned = without("run " + Path("tuned") + " --verify --json");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_TRUE(tuned.Json()["verified"].get<bool>());
}

TEST_F(ModelCli, BadInputsAreClearErrors) {
  std::string model = WriteModel(OneTask(), dir_ / "one.onnx");
  // A database that does not exist.
  Result missing_db = Run("compile --model " + model + " --db " + Path("none.db") + " -o " +
                          Path("art") + " " + kTarget);
  EXPECT_EQ(missing_db.exit_code, 1);
  EXPECT_NE(missing_db.err.find("none.db"), std::string::npos) << missing_db.err;
  // A damaged database (an index that no longer matches its table): compile says so, and
  // compiles nothing from records read through it.
  std::string damaged = Path("damaged.db");
  ASSERT_EQ(Run("tune --workload gemm:8,8,8 --trials 1 --db " + damaged + " " + kTarget).exit_code,
            0);
  std::string sql =
      "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, "
      "'median_secs)', 'error)') WHERE name = 'tuning_record_best';";
  ASSERT_EQ(std::system(("sqlite3 " + damaged + " \"" + sql + "\"").c_str()), 0);
  Result damaged_db =
      Run("compile --model " + model + " --db " + damaged + " -o " + Path("art") + " " + kTarget);
  EXPECT_EQ(damaged_db.exit_code, 1);
  EXPECT_NE(damaged_db.err.find("tirtune compile: SQLite database"), std::string::npos)
      << damaged_db.err;
  EXPECT_NE(damaged_db.err.find("is damaged"), std::string::npos) << damaged_db.err;
  // A target nobody knows.
  Result bad_target =
      Run("compile --model " + model + " -o " + Path("art") + " --target \"llvm -mcpu=nocpu\"");
  EXPECT_EQ(bad_target.exit_code, 1);
  EXPECT_NE(bad_target.err.find("nocpu"), std::string::npos) << bad_target.err;
  // A model file that is not there.
  Result no_model = Run("compile --model " + Path("nothing.onnx") + " -o " + Path("art"));
  EXPECT_EQ(no_model.exit_code, 1);
  EXPECT_NE(no_model.err.find("nothing.onnx"), std::string::npos) << no_model.err;
  // tune --model with something that is not an ONNX file.
  Result not_onnx = Run("tune --model " + Path("cost.model") + " --trials 1 --db :memory:");
  EXPECT_EQ(not_onnx.exit_code, 1);
  EXPECT_NE(not_onnx.err.find("--cost-model-file"), std::string::npos) << not_onnx.err;

  ASSERT_EQ(Run("compile --model " + model + " -o " + Path("art") + " " + kTarget).exit_code, 0);
  // An input of the wrong shape, as .npy and as raw bytes.
  WriteNpy(Path("x.npy"), NDArray::Empty({4, 15}, DataType::Float(32)));
  Result bad_npy = Run("run " + Path("art") + " --inputs " + Path("x.npy"));
  EXPECT_EQ(bad_npy.exit_code, 1);
  EXPECT_NE(bad_npy.err.find("must be float32[4, 16]"), std::string::npos) << bad_npy.err;
  std::ofstream(Path("x.bin")) << "abc";
  Result bad_bin = Run("run " + Path("art") + " --inputs " + Path("x.bin"));
  EXPECT_EQ(bad_bin.exit_code, 1);
  EXPECT_NE(bad_bin.err.find("3 bytes"), std::string::npos) << bad_bin.err;
  // A corrupt artifact directory.
  std::ofstream(Path("art/graph.json")) << "[1, 2";
  Result corrupt = Run("run " + Path("art"));
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_NE(corrupt.err.find("graph.json"), std::string::npos) << corrupt.err;
  Result not_dir = Run("run " + Path("nowhere"));
  EXPECT_EQ(not_dir.exit_code, 1);
  EXPECT_NE(not_dir.err.find("not a directory"), std::string::npos) << not_dir.err;
}

}  // namespace
}  // namespace tirtune::model
