// Tuning curves: how the best throughput found grows with the trials and with wall time. Plain
// functions over a run's trials, used by the report and meant for benchmark scripts as well.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "tirtune/database/database.h"

namespace tirtune::report {

/// One measured candidate of a tuning run, as a curve sees it.
struct Trial {
  /// Seconds since the run's first trial; never decreasing along a run.
  double elapsed_s = 0;
  /// The candidate's throughput (GFLOP/s in the report); nullopt for a failed trial.
  std::optional<double> throughput;
};

/// The trials of the records measured on `target`, in the order given (commit order, as
/// Database::RecordsOf returns them). Elapsed time counts from the first of them (created_at
/// differences, held at the latest seen, so a clock that went back does not make time run
/// backwards). An ok record's throughput is `work / median_secs` (work: GFLOP for GFLOP/s); any
/// other status, or a median that is not positive, is a failed trial.
std::vector<Trial> TrialsOnTarget(const std::vector<TuningRecord>& records, std::string_view target,
                                  double work);

/// For each trial, the best throughput of it and every earlier trial; nullopt until the first
/// successful trial. Failures count as trials but never improve the best.
std::vector<std::optional<double>> BestSoFar(const std::vector<Trial>& trials);

/// The best throughput of all trials; nullopt when none succeeded.
std::optional<double> FinalBest(const std::vector<Trial>& trials);

/// The number of trials it took for the best so far to reach `fraction` (e.g. 0.9) of the final
/// best: the 1-based index of the first trial at or above fraction × FinalBest. nullopt when no
/// trial succeeded.
std::optional<size_t> TrialsToReach(const std::vector<Trial>& trials, double fraction);

/// The elapsed seconds of the trial TrialsToReach names; nullopt when no trial succeeded.
std::optional<double> SecondsToReach(const std::vector<Trial>& trials, double fraction);

}  // namespace tirtune::report
