// `tirtune db ...` run as a user would: exit codes, stdout, stderr. The binary is the one built
// next to this test (build/src/tirtune); the test is skipped when it has not been built.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "../common/cli_run.h"
#include "../common/postgres_server.h"
#include "test_records.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

using json = nlohmann::json;
using testing::Gemm;
using testing::MakeRecord;
using testing::TempDir;
using Result = testing::CliResult;
using testing::ReadFile;

constexpr const char* kCpu = "llvm -mcpu=znver5 -num-cores=2";
constexpr const char* kOtherCpu = "llvm -mcpu=znver4";

class DbCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    bin_ = (self.parent_path().parent_path() / "src" / "tirtune").string();
    if (!std::filesystem::exists(bin_)) GTEST_SKIP() << "build the tirtune target first";
    db_ = dir_.File("tuning.db");
    std::unique_ptr<Database> db = OpenDatabase(db_);
    WorkloadId w = db->CommitWorkload(Gemm(16)).id;
    WorkloadId other = db->CommitWorkload(Gemm(32)).id;
    db->CommitRecords({MakeRecord(w, kCpu, 1, {3e-3}), MakeRecord(w, kCpu, 2, {1e-3}),
                       MakeRecord(w, kCpu, 3, {}, RecordStatus::kBuildError),
                       MakeRecord(w, kOtherCpu, 4, {5e-3}), MakeRecord(other, kCpu, 5, {2e-3})});
  }

  Result Run(const std::string& args) { return testing::RunCli(bin_, args, dir_.path()); }

  // A library's record of workload `w` on kCpu (oneDNN's matmul), numbered `n`, at `seconds`.
  static TuningRecord LibraryRecord(WorkloadId w, int n, double seconds) {
    TuningRecord r = MakeRecord(w, kCpu, n, {seconds});
    r.trace = json::parse(
        R"({"format":"tirtune-trace","insts":[{"attrs":{"composite":"dnnl.matmul"},"inputs":[],)"
        R"("kind":"Offload","outputs":[],"v":1}],"version":1})");
    return r;
  }

  TempDir dir_;
  std::string bin_;
  std::string db_;
};

TEST_F(DbCli, ListShowsEachWorkloadWithItsTargets) {
  Result r = Run("db list --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 workloads, 5 records"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(StructuralHashHex(Gemm(16))), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kOtherCpu), std::string::npos) << r.out;
  r = Run("db list --json --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["targets"].size(), 2u);
  EXPECT_EQ(j[0]["targets"][1]["records"], 3);
  EXPECT_EQ(j[0]["targets"][1]["ok"], 2);
  EXPECT_EQ(j[0]["targets"][1]["best_median_secs"], 1e-3);
}

TEST_F(DbCli, BestGivesTheTopRecordsPerTarget) {
  Result r = Run("db best --json -k 5 --db " + db_ + " --workload gemm:16,16,16 --target '" +
                 std::string(kCpu) + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["target"], kCpu);
  ASSERT_EQ(j[0]["records"].size(), 2u);  // the build error is not among the best
  EXPECT_EQ(j[0]["records"][0]["median_secs"], 1e-3);
  r = Run("db best --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1.000 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.000 ms"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("3.000 ms"), std::string::npos) << r.out;  // -k 1
  EXPECT_EQ(r.out.find("runs the library's record"), std::string::npos) << r.out;
}

TEST_F(DbCli, BestSaysWhenCompileRunsTheLibrarysRecordWithinThreePercentOfTheBest) {
  {
    std::unique_ptr<Database> db = OpenDatabase(db_);
    db->CommitRecords({LibraryRecord(db->CommitWorkload(Gemm(16)).id, 9, 1.02e-3)});
  }
  Result r = Run("db best --db " + db_ + " --workload gemm:16,16,16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("compile (--offload measured) runs the library's record (1.020 ms): the "
                       "best tuned kernel is not 3% faster"),
            std::string::npos)
      << r.out;
  r = Run("db best --json --db " + db_ + " --workload gemm:16,16,16 --target '" +
          std::string(kCpu) + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["records"][0]["median_secs"], 1e-3);
  EXPECT_EQ(j[0]["runs"]["median_secs"], 1.02e-3);
  EXPECT_EQ(j[0]["runs"]["trace"]["insts"][0]["kind"], "Offload");
}

TEST_F(DbCli, ShowPrintsTheWorkloadAndAllItsRecords) {
  Result r = Run("db show --traces --db " + db_ + " " + StructuralHashHex(Gemm(16)).substr(0, 6));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("@prim_func"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("build_error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Annotate(l2"), std::string::npos) << r.out;
  r = Run("db show --json --db " + db_ + " 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["workload"]["id"], 2);
  EXPECT_EQ(j["records"].size(), 1u);
}

TEST_F(DbCli, ExportAndImportRoundTripAndImportingTwiceAddsNothing) {
  std::string out = dir_.File("export.jsonl");
  Result r = Run("db export --db " + db_ + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 workloads and 5 records"), std::string::npos) << r.out;
  r = Run("db export --db " + db_ + " -o " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("use --force"), std::string::npos) << r.err;

  std::string copy = dir_.File("copy.sqlite");
  r = Run("db import --json --db " + copy + " " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["records_new"], 5);
  r = Run("db import --json --db " + copy + " " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["records_new"], 0);
  // Export of the copy has the same record lines (workload lines differ in their commit time).
  std::string again = dir_.File("again.jsonl");
  ASSERT_EQ(Run("db export --db " + copy + " -o " + again).exit_code, 0);
  auto records = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"type\":\"record\"") != std::string::npos) out += line + "\n";
    }
    return out;
  };
  EXPECT_EQ(records(ReadFile(out)), records(ReadFile(again)));
  EXPECT_FALSE(records(ReadFile(out)).empty());
}

TEST_F(DbCli, AFailedExportLeavesTheExistingFileWhole) {
  // A database of a few hundred records whose later pages are damaged: it opens, and the export
  // fails part of the way through the records.
  std::string damaged = dir_.File("damaged.db");
  {
    std::unique_ptr<Database> db = OpenDatabase(damaged);
    WorkloadId w = db->CommitWorkload(Gemm(16)).id;
    std::vector<TuningRecord> records;
    for (int i = 0; i < 400; ++i) records.push_back(MakeRecord(w, kCpu, i, {1e-3 + i * 1e-6}));
    db->CommitRecords(records);
  }
  std::string out = dir_.File("out.jsonl");
  ASSERT_EQ(Run("db export --db " + damaged + " -o " + out).exit_code, 0);
  std::string before = ReadFile(out);
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    int64_t pages = static_cast<int64_t>(f.tellg()) / 4096;
    for (int64_t page = pages / 2; page < pages; ++page) {
      f.seekp(page * 4096 + 100);
      f.write(std::string(3900, '\x5a').data(), 3900);
    }
  }
  Result r = Run("db export --force --db " + damaged + " -o " + out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("damaged.db"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(out), before) << "the failed export replaced the file";
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().find("partial"), std::string::npos) << entry.path();
  }
}

TEST_F(DbCli, CheckRunsTheIntegrityCheckAndFailsOnADamagedFile) {
  Result r = Run("db check --db " + db_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no problem found (5 records)"), std::string::npos) << r.out;
  // An index that no longer matches its table: what "row missing from index" reports.
  std::string sql =
      "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, "
      "'median_secs)', 'error)') WHERE name = 'tuning_record_best';";
  ASSERT_EQ(std::system(("sqlite3 " + db_ + " \"" + sql + "\"").c_str()), 0);
  r = Run("db check --json --db " + db_);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_FALSE(j["problems"].empty());
  EXPECT_NE(r.err.find("is damaged"), std::string::npos) << r.err;
}

// tune does not read records through, nor write into, a damaged database: it says so and stops.
TEST_F(DbCli, TuneRefusesADamagedDatabase) {
  std::string sql =
      "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, "
      "'median_secs)', 'error)') WHERE name = 'tuning_record_best';";
  ASSERT_EQ(std::system(("sqlite3 " + db_ + " \"" + sql + "\"").c_str()), 0);
  Result r = Run("tune --workload gemm:8,8,8 --trials 1 --db " + db_);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("tirtune tune: SQLite database '" + db_ + "' is damaged ("),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tirtune db check"), std::string::npos) << r.err;
}

TEST_F(DbCli, PruneKeepsTheBestPerWorkloadAndTargetAndTheLibrarysRecords) {
  {
    std::unique_ptr<Database> db = OpenDatabase(db_);
    db->CommitRecords({LibraryRecord(db->CommitWorkload(Gemm(16)).id, 9, 1.02e-3)});
  }
  Result r = Run("db prune --json --keep 1 --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["removed"], 2);
  EXPECT_EQ(j["left"], 4);
  // The library's record, second best, stays: compile runs it.
  r = Run("db best --json --db " + db_ + " --workload gemm:16,16,16 --target '" +
          std::string(kCpu) + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)[0]["runs"]["median_secs"], 1.02e-3);
}

TEST_F(DbCli, MistakesAreReportedWithExitCode1) {
  Result r = Run("db list --db " + dir_.File("missing.db"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: '" + dir_.File("missing.db") + "': no such database"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.File("missing.db")));
  r = Run("db list --db " + dir_.File("tuning.csv"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown database kind"), std::string::npos) << r.err;
  r = Run("db show --db " + db_ + " 99");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has no workload '99'"), std::string::npos) << r.err;
  std::ofstream(dir_.File("notes.db")) << "not a database\n";
  r = Run("db best --db " + dir_.File("notes.db"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a SQLite database"), std::string::npos) << r.err;
  r = Run("db list");
  EXPECT_EQ(r.exit_code, 2);  // usage: --db is required
}

/// The record lines of an export (workload lines differ in their commit time).
std::string RecordLines(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"type\":\"record\"") != std::string::npos) out += line + "\n";
  }
  return out;
}

TEST_F(DbCli, ExportAndImportMoveEverythingBetweenSqliteJsonlAndPostgres) {
  testing::PostgresServer& server = testing::PostgresServer::Shared();
  ASSERT_TRUE(server.ok()) << server.error();
  std::string pg = server.NewDatabase();
  // SQLite -> PostgreSQL (import), twice: the second adds nothing.
  Result r = Run("db import --json --db " + pg + " " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["records_new"], 5);
  r = Run("db import --json --db " + pg + " " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["records_new"], 0);
  r = Run("db list --db " + pg);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PostgreSQL database '" + pg + "': 2 workloads, 5 records"),
            std::string::npos)
      << r.out;
  // PostgreSQL -> JSON-lines (export) -> SQLite (import): the same records as the original.
  std::string exported = dir_.File("from_pg.jsonl");
  ASSERT_EQ(Run("db export --db " + pg + " -o " + exported).exit_code, 0);
  std::string copy = dir_.File("copy.db");
  r = Run("db import --json --db " + copy + " " + exported);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["records_new"], 5);
  std::string original = dir_.File("original.jsonl"), again = dir_.File("again.jsonl");
  ASSERT_EQ(Run("db export --db " + db_ + " -o " + original).exit_code, 0);
  ASSERT_EQ(Run("db export --db " + copy + " -o " + again).exit_code, 0);
  EXPECT_EQ(RecordLines(ReadFile(original)), RecordLines(ReadFile(again)));
  EXPECT_FALSE(RecordLines(ReadFile(original)).empty());
  // JSON-lines -> PostgreSQL (export to a URL), and the best records read from there.
  std::string pg2 = server.NewDatabase();
  r = Run("db export --db " + exported + " -o " + pg2);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 workloads and 5 records"), std::string::npos) << r.out;
  r = Run("db best --db " + pg2);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1.000 ms"), std::string::npos) << r.out;
}

TEST_F(DbCli, PostgresMistakesAreReportedWithExitCode1AndNoPassword) {
  testing::PostgresServer& server = testing::PostgresServer::Shared();
  ASSERT_TRUE(server.ok()) << server.error();
  std::string at = "@127.0.0.1:" + std::to_string(server.port()) + "/no_such_db";
  Result r = Run("db list --db postgresql://postgres:hunter2" + at);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: PostgreSQL database 'postgresql://postgres" + at +
                       "': the database does not exist"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r.err;
  // A database without tirtune's tables is not created by commands that only read.
  r = Run("db list --db " + server.NewDatabase());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("holds no tirtune database"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tirtune
