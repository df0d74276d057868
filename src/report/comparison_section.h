// The report's comparison with baselines, from a benchmark results file. Internal to the report
// library.
#pragma once

#include <string>

#include "tirtune/report/bench_results.h"

namespace tirtune::report {

/// Appends the "comparison" section: the machine and versions, a table with one row per
/// workload (tirtune's latency, each baseline's, ratio = baseline latency / tirtune latency, the
/// tuning effort), the geometric mean ratio per baseline, and a bar chart of the ratios per
/// baseline.
void AppendComparisonSection(std::string& out, const BenchResults& bench);

}  // namespace tirtune::report
