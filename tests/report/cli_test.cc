// `tirtune report` run as a user would: a SQLite database in, one HTML file out; bad input is a
// clear error with a non-zero exit that leaves the output file alone.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "../common/cli_run.h"
#include "../database/test_records.h"

namespace tirtune {
namespace {

using testing::Gemm;
using testing::MakeRecord;
using testing::TempDir;
using Result = testing::CliResult;
using testing::ReadFile;

constexpr const char* kCpu = "llvm -mcpu=znver4 -num-cores=2";

constexpr const char* kBench = R"({
  "schema": "tirtune-bench/1", "created_at": "2026-11-22T10:00:00Z", "command": "suite",
  "budget": {"name": "quick", "trials": 8}, "machine": {"cpu": "test cpu"}, "versions": {},
  "workloads": [{"name": "gemm:16,16,16", "group": "GEMM", "kind": "operator", "flops": 8192,
                 "tirtune": {"latency_s": 1e-6, "trials": 3, "tuning_s": 1.5, "verified": true},
                 "baselines": {"onednn": {"latency_s": 2e-6}}}]
})";

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("tuning.db");
    std::unique_ptr<Database> db = OpenDatabase(db_);
    WorkloadId w = db->CommitWorkload(Gemm(16)).id;
    db->CommitRecords({MakeRecord(w, kCpu, 1, {3e-6}), MakeRecord(w, kCpu, 2, {1e-6}),
                       MakeRecord(w, kCpu, 3, {}, RecordStatus::kBuildError)});
  }

  Result Run(const std::string& args) { return testing::RunCli(TIRTUNE_BIN, args, dir_.path()); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_.File(name);
    std::ofstream(path) << text;
    return path;
  }

  /// Files in the directory other than the database, stdout and stderr.
  std::vector<std::string> OtherFiles() {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      std::string name = entry.path().filename().string();
      if (name.rfind("tuning.db", 0) != 0 && name != "stdout" && name != "stderr") {
        names.push_back(name);
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  TempDir dir_;
  std::string db_;
};

TEST_F(ReportCli, WritesOneHtmlFile) {
  std::string html = dir_.File("report.html");
  Result r = Run("report --db " + db_ + " -o " + html + " --title 'My run'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + html), std::string::npos) << r.out;
  std::string text = ReadFile(html);
  EXPECT_EQ(text.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(text.find("<title>My run</title>"), std::string::npos);
  EXPECT_NE(text.find("SQLite database"), std::string::npos);
  EXPECT_NE(text.find("</html>"), std::string::npos);
  EXPECT_EQ(OtherFiles(), std::vector<std::string>{"report.html"}) << "no temporary file left";
}

TEST_F(ReportCli, BenchResultsAddTheComparison) {
  std::string bench = Write("results.json", kBench);
  std::string html = dir_.File("report.html");
  Result r = Run("report --db " + db_ + " --bench " + bench + " -o " + html + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["file"], html);
  std::string text = ReadFile(html);
  EXPECT_NE(text.find("<section id=\"comparison\">"), std::string::npos);
  EXPECT_NE(text.find("<td class=\"num ratio faster\">2.000</td>"), std::string::npos);
}

TEST_F(ReportCli, MissingDatabaseIsAClearErrorAndWritesNothing) {
  std::string html = dir_.File("report.html");
  std::string absent = dir_.File("absent.db");
  Result r = Run("report --db " + absent + " -o " + html);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: '" + absent + "': no such database"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(html));
  EXPECT_FALSE(std::filesystem::exists(absent)) << "a report never creates a database";
}

TEST_F(ReportCli, BadBenchResultsNameTheFieldAndLeaveTheOldReport) {
  std::string html = Write("report.html", "old report");
  nlohmann::json doc = nlohmann::json::parse(kBench);
  doc["workloads"][0].erase("group");
  std::string bench = Write("results.json", doc.dump());
  Result r = Run("report --db " + db_ + " --bench " + bench + " -o " + html);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bench + ": workloads[0].group: missing"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(html), "old report");
  EXPECT_EQ(OtherFiles(), (std::vector<std::string>{"report.html", "results.json"}));
}

TEST_F(ReportCli, UnwritableOutputIsAClearError) {
  std::string html = dir_.File("no-such-dir/report.html");
  Result r = Run("report --db " + db_ + " -o " + html);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot write '" + html + "'"), std::string::npos) << r.err;
}

TEST_F(ReportCli, MissingOptionsAreUsageErrors) {
  EXPECT_EQ(Run("report --db " + db_).exit_code, 2);
  EXPECT_EQ(Run("report -o " + dir_.File("r.html")).exit_code, 2);
}

}  // namespace
}  // namespace tirtune
