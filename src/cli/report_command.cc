// `tirtune report --db DB [--bench RESULTS.json] -o report.html`: one self-contained HTML page
// with the database's tuning results (and a comparison with baselines).
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tirtune/database/database.h"
#include "tirtune/report/bench_results.h"
#include "tirtune/report/report.h"

namespace tirtune::cli {
namespace {

namespace fs = std::filesystem;

struct ReportCommandOptions {
  std::string db;
  std::string bench;
  std::string output;
  std::string title = "tirtune tuning report";
  bool log_trials = false;
};

/// Writes `text` to `path` through a temporary file in the same folder, renamed at the end: the
/// output is either the whole report or untouched.
void WriteWhole(const std::string& path, const std::string& text) {
  fs::path target(path);
  fs::path temp = target;
  temp += fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) TT_USER_ERROR("cannot write '{}': {}", path, std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(temp, ec);
      TT_USER_ERROR("cannot write '{}': {}", path, std::strerror(errno));
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    TT_USER_ERROR("cannot write '{}': {}", path, ec.message());
  }
}

void RunReport(const ReportCommandOptions& opts, const GlobalOptions& global) {
  // Everything is read and built before the output is touched.
  OpenOptions open;
  open.create_if_missing = false;
  std::unique_ptr<Database> db = OpenDatabase(opts.db, open);
  std::error_code ec;
  if (fs::exists(opts.output, ec) && fs::equivalent(opts.output, opts.db, ec)) {
    TT_USER_ERROR("'{}' is the database itself; give another output file", opts.output);
  }
  std::optional<report::BenchResults> bench;
  if (!opts.bench.empty()) bench = report::ReadBenchResults(opts.bench);
  report::ReportOptions options;
  options.title = opts.title;
  options.generated_at = static_cast<double>(std::time(nullptr));
  options.log_trials = opts.log_trials;
  std::string html = report::BuildReport(*db, bench, options);
  WriteWhole(opts.output, html);
  if (global.json) {
    fmt::print("{}\n",
               nlohmann::ordered_json{{"file", opts.output}, {"bytes", html.size()}}.dump(2));
    return;
  }
  fmt::print("wrote {} ({} KiB)\n", opts.output, (html.size() + 1023) / 1024);
}

}  // namespace

void AddReportCommand(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<ReportCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "write an HTML report of a database: tables and tuning curves (no network needed)");
  cmd->add_option("--db", opts->db, "the database (.db/.sqlite, .jsonl)")->required();
  cmd->add_option("--bench", opts->bench,
                  "benchmark results (tirtune-bench/1 JSON, docs/BENCH_FORMAT.md) to compare with "
                  "baselines");
  cmd->add_option("-o,--output", opts->output, "the .html file to write")->required();
  cmd->add_option("--title", opts->title, "the page title");
  cmd->add_flag("--log-trials", opts->log_trials, "plot the trial axis on a log scale");
  cmd->callback([opts, &global] { RunReport(*opts, global); });
}

}  // namespace tirtune::cli
