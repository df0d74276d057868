// End-to-end tests of the `tirtune` command, run as a user would: exit codes, stdout, stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../common/cli_run.h"

namespace {

using Result = tirtune::testing::CliResult;
using tirtune::testing::ReadFile;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tirtune_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result Run(const std::string& args) { return tirtune::testing::RunCli(TIRTUNE_BIN, args, dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;
};

TEST_F(Cli, WorkloadListNamesTheBenchmarkOperators) {
  Result r = Run("workload list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"gemm", "conv2d", "softmax"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
}

TEST_F(Cli, JsonFlagWorksBeforeAndAfterTheSubcommand) {
  for (const char* args : {"--json workload list", "workload list --json"}) {
    Result r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.is_array()) << args;
    EXPECT_FALSE(j.empty());
  }
}

TEST_F(Cli, PrintedWorkloadPassesIrCheck) {
  Result printed = Run("workload print gemm:8,8,8");
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  // Drop the leading comment line with flops and hash; the rest is the function.
  std::string file = Write("gemm.tir", printed.out);
  Result checked = Run("ir check " + file);
  EXPECT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_NE(checked.out.find("def gemm"), std::string::npos) << checked.out;
}

TEST_F(Cli, PrintJsonCarriesHashAndFlops) {
  Result r = Run("workload print gemm:8,8,8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["flops"].get<double>(), 2.0 * 8 * 8 * 8);
  EXPECT_EQ(j["hash"].get<std::string>().size(), 16u);
  Result again = Run("workload print gemm:8,8,8 --json");
  EXPECT_EQ(nlohmann::json::parse(again.out)["hash"], j["hash"]);
}

TEST_F(Cli, UnknownWorkloadIsAUserError) {
  Result r = Run("workload print nosuch:1,2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
}

TEST_F(Cli, WrongArgumentCountIsAUserError) {
  Result r = Run("workload print gemm:8,8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gemm"), std::string::npos) << r.err;
}

TEST_F(Cli, MissingFileIsAUserError) {
  Result r = Run("ir check " + (dir_ / "absent.tir").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
}

TEST_F(Cli, MalformedIrReportsFileLineAndColumn) {
  std::string file = Write("bad.tir",
                           "@prim_func\n"
                           "def f(A: Buffer((4,), float32)):\n"
                           "    A[0] = (1.0\n");
  Result r = Run("ir check " + file);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(file + ":3:"), std::string::npos) << r.err;
}

TEST_F(Cli, EvalRunsTheInterpreter) {
  Result r = Run("workload eval gemm:4,4,4 --seed 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["params"].size(), 3u);
  EXPECT_EQ(j["params"][2]["shape"], nlohmann::json({4, 4}));
}

constexpr const char* kTileTrace = R"({"format": "tirtune-trace", "version": 1, "insts": [
  {"kind": "GetBlock", "v": 1, "inputs": [], "attrs": {"name": "C"}, "outputs": ["b0"]},
  {"kind": "GetLoops", "v": 1, "inputs": ["b0"], "attrs": {}, "outputs": ["l1", "l2", "l3"]},
  {"kind": "Split", "v": 1, "inputs": ["l1", null, 4], "attrs": {}, "outputs": ["l4", "l5"]},
  {"kind": "Parallel", "v": 1, "inputs": ["l4"], "attrs": {}, "outputs": []}]})";

TEST_F(Cli, ScheduleAppliesATrace) {
  std::string ir = Write("gemm.tir", Run("workload print gemm:16,16,16").out);
  std::string trace = Write("trace.json", kTileTrace);
  Result r = Run("schedule " + ir + " --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("for i_0 in parallel(4):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for i_1 in range(4):"), std::string::npos) << r.out;
  Result j = Run("schedule " + ir + " --trace " + trace + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["trace"]["insts"].size(), 4u);
}

TEST_F(Cli, ScheduleReportsATraceThatDoesNotApply) {
  std::string ir = Write("gemm.tir", Run("workload print gemm:16,16,16").out);
  std::string text = kTileTrace;
  text.replace(text.find("\"C\""), 3, "\"X\"");
  std::string trace = Write("trace.json", text);
  Result r = Run("schedule " + ir + " --trace " + trace);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no block named 'X'"), std::string::npos) << r.err;
}

TEST_F(Cli, ScheduleRejectsMalformedTraceJson) {
  std::string ir = Write("gemm.tir", Run("workload print gemm:16,16,16").out);
  Result r = Run("schedule " + ir + " --trace " + Write("trace.json", "{\"format\": 3"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  Result r2 = Run("schedule " + ir + " --trace " +
                  Write("t2.json", R"({"format": "tirtune-trace", "version": 1,
                                       "insts": [{"kind": "Warp", "v": 1}]})"));
  EXPECT_EQ(r2.exit_code, 1);
  EXPECT_NE(r2.err.find("unknown instruction kind"), std::string::npos) << r2.err;
}

TEST_F(Cli, LowerPrintsEveryPassWithSteps) {
  Result r = Run("lower --workload gemm:8,8,8 --steps");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# after "), std::string::npos) << r.out;
  Result final_only = Run("lower --workload gemm:8,8,8");
  EXPECT_EQ(final_only.out.find("# after "), std::string::npos);
  EXPECT_NE(final_only.out.find("Buffer((64,), float32)"), std::string::npos) << final_only.out;
}

TEST_F(Cli, BuildWritesAnObjectAndEmitsLlvm) {
  std::string trace = Write("trace.json", kTileTrace);
  std::string obj = (dir_ / "gemm.o").string();
  Result r = Run("build --workload gemm:16,16,16 --trace " + trace + " -o " + obj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(std::filesystem::file_size(obj), 100u);
  Result ir = Run("build --workload gemm:16,16,16 --emit llvm");
  ASSERT_EQ(ir.exit_code, 0) << ir.err;
  EXPECT_NE(ir.out.find("define"), std::string::npos);
}

TEST_F(Cli, ADeeplyNestedTraceIsRefusedInAFileAndSkippedInADatabase) {
  const int kDepth = 100000;  // deep enough to overflow the stack of anything recursive
  std::string deep = R"({"format": "tirtune-trace", "version": 1, "insts": )" +
                     std::string(kDepth, '[') + std::string(kDepth, ']') + "}";
  Result file = Run("schedule --workload gemm:8,8,8 --trace " + Write("deep.json", deep));
  EXPECT_EQ(file.exit_code, 1);
  EXPECT_NE(file.err.find("deep.json: nested deeper than 64 levels"), std::string::npos)
      << file.err;

  std::string db = (dir_ / "t.db").string();
  ASSERT_EQ(Run("tune --workload gemm:16,16,16 --trials 4 --trials-per-round 4 --population 16 "
                "--db " +
                db)
                .exit_code,
            0);
  // One poisoned row, next to the good ones.
  std::string sql = Write("poison.sql",
                          "INSERT INTO tuning_record (workload_id, target_id, trace_hash, trace, "
                          "status, run_secs, median_secs, error, device, program_version, "
                          "created_at) SELECT workload_id, target_id, 'poison', '" +
                              deep +
                              "', 'ok', '[1e-9]', 1e-9, '', 'd', 'v', created_at FROM "
                              "tuning_record LIMIT 1;\n");
  ASSERT_EQ(std::system(("sqlite3 " + db + " < " + sql).c_str()), 0);
  for (const std::string& cmd :
       {"db best --db " + db, "db export -o " + (dir_ / "e.jsonl").string() + " --db " + db,
        "report -o " + (dir_ / "r.html").string() + " --db " + db,
        "tune --workload gemm:16,16,16 --trials 8 --resume "
        "--trials-per-round 4 --population 16 --db " +
            db}) {
    Result r = Run(cmd);
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("nested deeper than 64 levels; skipped"), std::string::npos)
        << cmd << ": " << r.err;
  }
}

// Options out of range are refused before anything is opened or created (a database file, its
// log): a typo must not leave files behind.
TEST_F(Cli, TuneOptionsOutOfRangeAreRefusedBeforeTheDatabaseIsCreated) {
  std::string db = (dir_ / "new.db").string();
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--trials -5", "--trials must be positive, got -5"},
           {"--trials 4 --timeout 0", "--timeout must be a positive number of seconds"},
           {"--trials 4 --strategy magic", "unknown strategy 'magic'"},
           {"--trials 4 --library-retimes -1",
            "--library-retimes must be from 0 to 100, got -1"}}) {
    Result r = Run("tune --workload gemm:8,8,8 " + args + " --db " + db);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << args;
    EXPECT_FALSE(std::filesystem::exists(db + ".log")) << args;
  }
}

TEST_F(Cli, AWorkloadTooLargeForMemoryIsAClearError) {
  for (const char* cmd :
       {"workload eval gemm:100000,100000,100000", "time --workload gemm:100000,100000,100000"}) {
    Result r = Run(cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find("tensor of shape [100000, 100000] needs 40 GB, more than this machine's"),
              std::string::npos)
        << cmd << ": " << r.err;
  }
}

TEST_F(Cli, TimeVerifiesAndReportsThroughput) {
  std::string trace = Write("trace.json", kTileTrace);
  Result r = Run("time --workload gemm:16,16,16 --trace " + trace +
                 " --target \"llvm -num-cores=2\" --min-repeat-ms 1 --repeat 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verified_against"], "interpreter");
  EXPECT_GT(j["gflops"].get<double>(), 0);
  EXPECT_EQ(j["samples"].size(), 2u);
}

TEST_F(Cli, TuneStoresEveryTrialAndReportsTheBest) {
  std::string db = (dir_ / "t.db").string();
  Result r =
      Run("tune --workload gemm:16,16,16 --trials 8 --trials-per-round 4 --population 32 --db " +
          db + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 1u);
  EXPECT_EQ(j["tasks"][0]["trials"], 8);
  EXPECT_GT(j["tasks"][0]["best_gflops"].get<double>(), 0);
  EXPECT_TRUE(j["tasks"][0]["best_trace"].is_object());
  EXPECT_NE(ReadFile(db + ".log").find("task 'gemm:16,16,16'"), std::string::npos);
  Result list = Run("db list --db " + db + " --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)[0]["targets"][0]["records"], 8) << list.out;

  // On cold caches: every sample one call after a flush; the trials are measured all the same.
  Result cold =
      Run("tune --workload gemm:16,16,16 --trials 4 --trials-per-round 4 --population "
          "32 --flush-cache --db " +
          (dir_ / "cold.db").string() + " --json");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  nlohmann::json c = nlohmann::json::parse(cold.out);
  EXPECT_EQ(c["tasks"][0]["trials"], 4);
  EXPECT_GT(c["tasks"][0]["best_gflops"].get<double>(), 0);
}

// SIGKILL in the middle of a run: whole batches stay, nothing half-written, and --resume tops the
// run up to the requested number of trials.
TEST_F(Cli, TuneKilledMidRunLosesNothingAndResumes) {
  std::string db = (dir_ / "k.db").string();
  std::string tune = std::string(TIRTUNE_BIN) +
                     " tune --workload gemm:16,16,16 --trials-per-round 4 --population 32 --db " +
                     db;
  std::string script = tune + " --trials 400 > /dev/null 2>&1 & pid=$!; " +
                       "for i in $(seq 600); do n=$(grep -c 'candidate(s)' " + db +
                       ".log 2>/dev/null || true); [ \"${n:-0}\" -ge 2 ] && break; sleep 0.05; "
                       "done; kill -9 $pid; wait $pid 2>/dev/null; exit 0";
  ASSERT_EQ(std::system(("bash " + Write("kill.sh", script)).c_str()), 0);
  Result list = Run("db list --db " + db + " --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  nlohmann::json stats = nlohmann::json::parse(list.out);
  int stored = stats[0]["targets"][0]["records"].get<int>();
  EXPECT_GE(stored, 8);
  EXPECT_EQ(stored % 4, 0) << "a batch was half-written";
  Result resumed = Run("tune --workload gemm:16,16,16 --trials-per-round 4 --population 32 --db " +
                       db + " --trials " + std::to_string(stored + 4) + " --resume --json");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  nlohmann::json j = nlohmann::json::parse(resumed.out);
  EXPECT_EQ(j["tasks"][0]["trials_before"], stored);
  EXPECT_EQ(j["tasks"][0]["trials"], 4);
}

TEST_F(Cli, TuneRejectsBadOptions) {
  std::string db = (dir_ / "b.db").string();
  Result r = Run("tune --workload gemm:8,8,8 --trials 4 --strategy annealing --db " + db);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown strategy 'annealing'"), std::string::npos) << r.err;
  Result missing = Run("tune --workload gemm:8,8,8 --db " + db);
  EXPECT_EQ(missing.exit_code, 2);
  Result nothing = Run("tune --trials 4 --db " + db);
  EXPECT_EQ(nothing.exit_code, 1);
  EXPECT_NE(nothing.err.find("nothing to tune"), std::string::npos) << nothing.err;
}

TEST_F(Cli, BadTargetIsAUserError) {
  Result r = Run("time --workload gemm:8,8,8 --target \"llvm -num-cores=zero\"");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("num-cores"), std::string::npos) << r.err;
}

TEST_F(Cli, TuningForCudaWithoutAGpuOrPoolIsRefusedBeforeAnyWork) {
  // No NVIDIA driver here (CI, most hosts): the run is refused with the reason and the way out.
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this host has an NVIDIA driver";
  Result r = Run("tune --workload gemm:8,8,8 --target \"cuda -arch=sm_90\" --trials 1 --db :memory:");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tirtune tune --target cuda: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--runner redis://"), std::string::npos) << r.err;
  r = Run("build --workload gemm:8,8,8 --target \"cuda -arch=sm_75\"");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown CUDA arch 'sm_75'"), std::string::npos) << r.err;
}

// GPU kernels from a hand-written trace: lowered, built to a cubin with its launches (where the
// CUDA toolkit's compiler is installed), and an unbound schedule refused with the reason.
TEST_F(Cli, LowerAndBuildForCudaWithAHandWrittenTrace) {
  std::string trace = std::string(TIRTUNE_SOURCE_DIR) + "/bench/gpu/traces/gemm_4096.json";
  std::string args = "--workload gemm:4096,4096,4096 --target \"cuda -arch=sm_90\" --trace " + trace;
  Result lowered = Run("lower " + args);
  ASSERT_EQ(lowered.exit_code, 0) << lowered.err;
  EXPECT_NE(lowered.out.find("gemm_kernel0"), std::string::npos) << lowered.out;
  EXPECT_NE(lowered.out.find("sync_threads()"), std::string::npos) << lowered.out;

  Result built = Run("--json build " + args + " -o " + (dir_ / "gemm.cubin").string());
  if (built.exit_code != 0) {
    EXPECT_NE(built.err.find("NVRTC"), std::string::npos) << built.err;  // no toolkit here
  } else {
    nlohmann::json j = built.Json();
    ASSERT_EQ(j["kernels"].size(), 1u);
    EXPECT_EQ(j["kernels"][0]["grid"], nlohmann::json::array({32, 64, 1}));
    EXPECT_EQ(j["kernels"][0]["block"], nlohmann::json::array({16, 8, 1}));
    EXPECT_GT(j["kernels"][0]["registers"].get<int>(), 0);
    EXPECT_GT(std::filesystem::file_size(dir_ / "gemm.cubin"), 1000u);
    Result source = Run("build " + args + " --emit cuda");
    EXPECT_NE(source.out.find("__global__"), std::string::npos) << source.err;
  }
  Result unbound = Run("build --workload gemm:64,64,64 --target \"cuda -arch=sm_90\" -o x.cubin");
  EXPECT_EQ(unbound.exit_code, 1);
  EXPECT_NE(unbound.err.find("cannot run on the GPU"), std::string::npos) << unbound.err;
  EXPECT_NE(unbound.err.find("bind it to a GPU thread axis"), std::string::npos) << unbound.err;
  Result emit = Run("build " + args + " --emit obj -o x.o");
  EXPECT_EQ(emit.exit_code, 1);
  EXPECT_NE(emit.err.find("--emit takes cubin, ptx or cuda"), std::string::npos) << emit.err;
}

TEST_F(Cli, TimeOnCudaWithoutAGpuSaysSo) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this host has an NVIDIA driver";
  std::string trace = std::string(TIRTUNE_SOURCE_DIR) + "/bench/gpu/traces/gemm_4096.json";
  Result r = Run("time --workload gemm:4096,4096,4096 --target \"cuda -arch=sm_90\" --trace " +
                 trace);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tirtune time --target cuda: no "), std::string::npos) << r.err;
}

TEST_F(Cli, MissingSubcommandIsAUsageError) {
  Result r = Run("");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
