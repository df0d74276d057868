// The HTML report of an in-memory database: a self-contained, well-formed page with one table row
// per (workload, target), its status counts and curve numbers, one chart per curve, and the
// comparison section when a benchmark results document is given.
#include "tirtune/report/report.h"

#include <gtest/gtest.h>

#include "../database/test_records.h"
#include "markup_check.h"
#include "tirtune/ir/flop_count.h"

namespace tirtune::report {
namespace {

using testing::CheckMarkup;
using testing::CountOf;
using tirtune::testing::Gemm;

constexpr const char* kCpu = "llvm -mcpu=znver4 -num-cores=2";
constexpr const char* kOtherCpu = "llvm -mcpu=znver5";
constexpr double kGenerated = 1700000000;  // 2023-11-14 22:13:20 UTC

TuningRecord Record(WorkloadId w, const char* target, int64_t n, std::vector<double> run_secs,
                    RecordStatus status, double created_at) {
  TuningRecord r = tirtune::testing::MakeRecord(w, target, n, std::move(run_secs), status);
  r.created_at = created_at;
  return r;
}

/// The text from `open` (the first occurrence at or after `from`) to the `close` after it.
std::string Between(const std::string& text, const std::string& open, const std::string& close,
                    size_t from = 0) {
  size_t start = text.find(open, from);
  if (start == std::string::npos) return "";
  size_t end = text.find(close, start + open.size());
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

/// The summary table's row of the group whose curves have id `anchor`.
std::string RowOf(const std::string& html, const std::string& anchor) {
  size_t link = html.find("<a href=\"#" + anchor + "\">");
  if (link == std::string::npos) return "";
  size_t start = html.rfind("<tr>", link);
  return html.substr(start, html.find("</tr>", link) - start);
}

/// The curves part of the group `anchor`.
std::string GroupOf(const std::string& html, const std::string& anchor) {
  size_t start = html.find("<div class=\"group\" id=\"" + anchor + "\">");
  if (start == std::string::npos) return "";
  size_t next = html.find("<div class=\"group\"", start + 1);
  if (next == std::string::npos) next = html.find("</section>", start);
  return html.substr(start, next - start);
}

BenchTiming Latency(double seconds) {
  BenchTiming t;
  t.latency_s = seconds;
  return t;
}

BenchResults Bench() {
  BenchTiming fast{0.01, 1000, 400.0, true, 120, 50.0, 300, 130.0, std::nullopt};
  BenchTiming slow{0.02, 64, 10.0, false, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                   std::nullopt};
  BenchResults bench;
  bench.created_at = "2026-11-22T10:00:00Z";
  bench.command = "bash bench/suite.sh --budget quick";
  bench.budget_name = "quick";
  bench.budget_trials = 200;
  bench.machine = {{"cores", "2"}, {"cpu", "AMD EPYC <9B45>"}};
  bench.versions = {{"onednn", "2.6.3"}, {"tirtune", "0.1.0"}};
  bench.workloads = {
      {"gemm:1024,1024,1024",
       "GEMM",
       "operator",
       2147483648.0,
       fast,
       {{"metaschedule", Latency(0.0125)}, {"onednn", Latency(0.02)}}},
      {"softmax:1,1024", "Norm", "subgraph", 1e6, slow, {{"onednn", Latency(0.01)}}},
  };
  return bench;
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenDatabase(":memory:");
    WorkloadId tuned = db_->CommitWorkload(Gemm(16)).id;
    WorkloadId failing = db_->CommitWorkload(Gemm(32)).id;
    db_->CommitWorkload(Gemm(8));  // no records at all
    db_->CommitRecords({
        // gemm 16 (8192 FLOPs) on kCpu: 4.096, 7.447 and 8.192 GFLOP/s with failures between.
        Record(tuned, kCpu, 1, {2e-6}, RecordStatus::kOk, 1000),
        Record(tuned, kCpu, 2, {}, RecordStatus::kBuildError, 1001),
        Record(tuned, kCpu, 3, {1.1e-6}, RecordStatus::kOk, 1003),
        Record(tuned, kCpu, 4, {}, RecordStatus::kTimeout, 1004),
        Record(tuned, kCpu, 5, {1e-6, 5e-6, 1e-6}, RecordStatus::kOk, 1010),
        Record(tuned, kCpu, 6, {3e-6}, RecordStatus::kRuntimeError, 1011),
        // A single record on another target.
        Record(tuned, kOtherCpu, 7, {4e-6}, RecordStatus::kOk, 2000),
        // gemm 32: nothing ever worked.
        Record(failing, kCpu, 8, {}, RecordStatus::kWrongResult, 3000),
        Record(failing, kCpu, 9, {}, RecordStatus::kRunnerLost, 3001),
    });
    options_.generated_at = kGenerated;
  }

  std::unique_ptr<Database> db_;
  ReportOptions options_;
};

TEST_F(Report, IsOneWellFormedSelfContainedPage) {
  std::string html = BuildReport(*db_, std::nullopt, options_);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_EQ(CheckMarkup(html), "");
  for (const char* external : {"http://", "https://", "<script", "src=", "url(", "@import"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
}

TEST_F(Report, HeaderDescribesTheDatabase) {
  std::string html = BuildReport(*db_, std::nullopt, options_);
  EXPECT_NE(html.find("<title>tirtune tuning report</title>"), std::string::npos);
  EXPECT_NE(html.find("Generated at 2023-11-14 22:13:20 UTC from in-memory"), std::string::npos)
      << Between(html, "<p class=\"meta\">", "</p>");
  EXPECT_NE(html.find("3 workloads, 9 records."), std::string::npos);
  EXPECT_NE(html.find("Measured on: test device."), std::string::npos);
}

TEST_F(Report, TableHasOneRowPerWorkloadAndTarget) {
  std::string html = BuildReport(*db_, std::nullopt, options_);
  std::string body = Between(html, "<table id=\"summary-table\">", "</table>");
  EXPECT_EQ(CountOf(Between(body, "<tbody>", "</tbody>"), "<tr>"), 4u);
  EXPECT_NE(RowOf(html, "g0").find(kCpu), std::string::npos);
  EXPECT_NE(RowOf(html, "g1").find(kOtherCpu), std::string::npos);
  EXPECT_NE(RowOf(html, "g2").find(kCpu), std::string::npos);
  EXPECT_NE(RowOf(html, "g3").find("(no records)"), std::string::npos);
  for (const char* name :
       {"ok", "build error", "runtime error", "timeout", "wrong result", "runner lost"}) {
    EXPECT_NE(body.find(std::string("<th>") + name + "</th>"), std::string::npos) << name;
  }
}

TEST_F(Report, RowCountsStatusesAndGivesTheBestAndTheTrialsToReachIt) {
  ASSERT_EQ(EstimateFlops(Gemm(16)), 8192);
  std::string html = BuildReport(*db_, std::nullopt, options_);
  std::string row = RowOf(html, "g0");
  for (const char* cell :
       {"<td class=\"num\">6</td>", "st-ok\">3</td>", "st-build_error\">1</td>",
        "st-runtime_error\">1</td>", "st-timeout\">1</td>", "st-wrong_result\">0</td>",
        "st-runner_lost\">0</td>", "<td class=\"num\">1.00 us</td>", "<td class=\"num\">8.192</td>",
        // 90% of 8.192 is first reached by trial 3 (7.447, 3 s in), 95% by trial 5 (10 s in).
        "<td class=\"num\">3 (3.0 s)</td>", "<td class=\"num\">5 (10.0 s)</td>"}) {
    EXPECT_NE(row.find(cell), std::string::npos) << cell << "\n" << row;
  }
  std::string failing = RowOf(html, "g2");
  for (const char* cell : {"st-ok\">0</td>", "st-wrong_result\">1</td>", "st-runner_lost\">1</td>",
                           "<td class=\"num\">-</td>"}) {
    EXPECT_NE(failing.find(cell), std::string::npos) << cell << "\n" << failing;
  }
}

TEST_F(Report, EachGroupWithASuccessHasTwoCharts) {
  std::string html = BuildReport(*db_, std::nullopt, options_);
  EXPECT_EQ(CountOf(html, "<svg"), 4u);
  std::string tuned = GroupOf(html, "g0");
  EXPECT_EQ(CountOf(tuned, "<svg"), 2u);
  EXPECT_NE(tuned.find(">Best GFLOP/s by trial</text>"), std::string::npos);
  EXPECT_NE(tuned.find(">Best GFLOP/s by tuning time</text>"), std::string::npos);
  EXPECT_NE(tuned.find(">seconds since the first trial</text>"), std::string::npos);
  EXPECT_EQ(CountOf(tuned, "font-weight=\"bold\" fill=\"#1f6fb4\">8.192</text>"), 2u)
      << "each curve marks its final value";
  EXPECT_NE(tuned.find("6 trials (3 ok) over 11.0 s; best 8.192 GFLOP/s at trial 5 (10.0 s); 90% "
                       "of it after trial 3 (3.0 s), 95% after trial 5 (10.0 s)."),
            std::string::npos)
      << tuned;
  std::string single = GroupOf(html, "g1");
  EXPECT_EQ(CountOf(single, "<svg"), 2u);
  EXPECT_NE(single.find("1 trial (1 ok) over 0 ms;"), std::string::npos) << single;
  EXPECT_NE(single.find(">2.048</text>"), std::string::npos);
}

TEST_F(Report, GroupsWithoutSuccessSaySoAndHaveNoChart) {
  std::string html = BuildReport(*db_, std::nullopt, options_);
  std::string failing = GroupOf(html, "g2");
  EXPECT_EQ(CountOf(failing, "<svg"), 0u);
  EXPECT_NE(failing.find("No successful trial among 2 records (1 wrong_result, 1 runner_lost)"),
            std::string::npos)
      << failing;
  std::string empty = GroupOf(html, "g3");
  EXPECT_EQ(CountOf(empty, "<svg"), 0u);
  EXPECT_NE(empty.find("No records."), std::string::npos);
}

TEST_F(Report, SameInputsGiveTheSameBytes) {
  EXPECT_EQ(BuildReport(*db_, Bench(), options_), BuildReport(*db_, Bench(), options_));
}

TEST_F(Report, TitleIsEscaped) {
  options_.title = "<b>tuning & \"more\"</b>";
  std::string html = BuildReport(*db_, std::nullopt, options_);
  EXPECT_NE(html.find("<h1>&lt;b&gt;tuning &amp; &quot;more&quot;&lt;/b&gt;</h1>"),
            std::string::npos);
  EXPECT_EQ(CheckMarkup(html), "");
}

TEST_F(Report, WithoutBenchResultsThereIsNoComparison) {
  std::string html = BuildReport(*db_, std::nullopt, options_);
  EXPECT_EQ(html.find("id=\"comparison\""), std::string::npos);
}

TEST_F(Report, ComparisonTableHasARatioPerBaselineAndWorkload) {
  std::string html = BuildReport(*db_, Bench(), options_);
  EXPECT_EQ(CheckMarkup(html), "");
  std::string table = Between(html, "<table id=\"comparison-table\">", "</table>");
  std::string body = Between(table, "<tbody>", "</tbody>");
  EXPECT_EQ(CountOf(body, "<tr>"), 2u);
  EXPECT_NE(table.find("<th>onednn latency</th><th>ratio vs onednn</th>"), std::string::npos);
  std::string gemm = Between(body, "<tr>", "</tr>");
  for (const char* cell : {"<code>gemm:1024,1024,1024</code>", "<td class=\"num\">10.000 ms</td>",
                           "<td class=\"num\">214.7</td>",               // GFLOP/s
                           "<td class=\"num ratio faster\">1.250</td>",  // metaschedule
                           "<td class=\"num ratio faster\">2.000</td>",  // onednn
                           "<td class=\"num\">120 (50.0 s)</td>",
                           "<td class=\"num\">300 (2.2 min)</td>", "<td>yes</td>"}) {
    EXPECT_NE(gemm.find(cell), std::string::npos) << cell << "\n" << gemm;
  }
  std::string softmax = body.substr(body.rfind("<tr>", body.find("softmax")));
  for (const char* cell : {"<td class=\"num ratio slower\">0.500</td>",
                           "<td class=\"num zero\">-</td>", "<td class=\"bad\">no</td>"}) {
    EXPECT_NE(softmax.find(cell), std::string::npos) << cell << "\n" << softmax;
  }
}

TEST_F(Report, ComparisonShowsTheRatioTheRunMeasuredWhereTheFileHasOne) {
  BenchResults bench = Bench();
  bench.workloads[0].baselines[1].second.ratio = 1.9;  // onednn: latencies give 2.000
  std::string html = BuildReport(*db_, bench, options_);
  std::string table = Between(html, "<table id=\"comparison-table\">", "</table>");
  std::string gemm = Between(Between(table, "<tbody>", "</tbody>"), "<tr>", "</tr>");
  EXPECT_NE(gemm.find("<td class=\"num ratio faster\">1.900</td>"), std::string::npos) << gemm;
  EXPECT_EQ(gemm.find("<td class=\"num ratio faster\">2.000</td>"), std::string::npos) << gemm;
}

TEST_F(Report, ComparisonGivesTheGeometricMeanAndAChartPerBaseline) {
  std::string html = BuildReport(*db_, Bench(), options_);
  std::string table = Between(html, "<table id=\"geomean-table\">", "</table>");
  // onednn: ratios 2 and 0.5, geometric mean 1; metaschedule: one ratio, 1.25.
  EXPECT_NE(table.find("<tr><td>onednn</td><td class=\"num\">2</td><td class=\"num\">1</td>"
                       "<td class=\"num ratio faster\">1.000</td></tr>"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("<tr><td>metaschedule</td><td class=\"num\">1</td><td class=\"num\">1</td>"
                       "<td class=\"num ratio faster\">1.250</td></tr>"),
            std::string::npos)
      << table;
  std::string section = html.substr(html.find("<section id=\"comparison\">"));
  EXPECT_EQ(CountOf(section, "<svg"), 2u);
  EXPECT_NE(section.find(">tirtune vs onednn</text>"), std::string::npos);
  EXPECT_EQ(CountOf(section, "stroke-dasharray"), 2u) << "a reference line at 1.0 per chart";
  EXPECT_NE(section.find(">geometric mean<title>"), std::string::npos);
  EXPECT_NE(section.find("<th>cpu</th><td>AMD EPYC &lt;9B45&gt;</td>"), std::string::npos);
  EXPECT_NE(section.find("<th>onednn</th><td>2.6.3</td>"), std::string::npos);
  EXPECT_NE(section.find("budget quick (200 trials)"), std::string::npos);
}

}  // namespace
}  // namespace tirtune::report
