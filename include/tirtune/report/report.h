// The tuning report: one self-contained HTML page (inline CSS and SVG, no scripts, nothing
// fetched) with a table of every (workload, target), their tuning curves, and optionally a
// comparison with baselines from a benchmark results file.
#pragma once

#include <optional>
#include <string>

#include "tirtune/database/database.h"
#include "tirtune/report/bench_results.h"

namespace tirtune::report {

struct ReportOptions {
  /// The page title and heading.
  std::string title = "tirtune tuning report";
  /// When the report was made, in Unix seconds (printed in UTC). Passed in rather than read from
  /// the clock so that the same inputs give the same bytes. Default 0: printed as unknown.
  double generated_at = 0;
  /// Plot the trial axis of the tuning curves on a log scale. Default off.
  bool log_trials = false;
};

/// The report on every workload and record of `db`, with a comparison section when `bench` is
/// given. Reads the database only.
std::string BuildReport(Database& db, const std::optional<BenchResults>& bench,
                        const ReportOptions& options = {});

}  // namespace tirtune::report
