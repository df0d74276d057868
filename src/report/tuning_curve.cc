// Best-so-far series and the trials and seconds a run needed to come close to its final best.
#include "tirtune/report/tuning_curve.h"

#include <algorithm>

namespace tirtune::report {
namespace {

/// The index of the first trial at or above fraction × the final best.
std::optional<size_t> IndexReaching(const std::vector<Trial>& trials, double fraction) {
  std::optional<double> final_best = FinalBest(trials);
  if (!final_best) return std::nullopt;
  double goal = fraction * *final_best;
  for (size_t i = 0; i < trials.size(); ++i) {
    if (trials[i].throughput && *trials[i].throughput >= goal) return i;
  }
  return std::nullopt;  // only for fraction > 1
}

}  // namespace

std::vector<Trial> TrialsOnTarget(const std::vector<TuningRecord>& records, std::string_view target,
                                  double work) {
  std::vector<Trial> trials;
  std::optional<double> first_created;
  double elapsed = 0;
  for (const TuningRecord& r : records) {
    if (r.target != target) continue;
    if (!first_created) first_created = r.created_at;
    elapsed = std::max(elapsed, r.created_at - *first_created);
    Trial t;
    t.elapsed_s = elapsed;
    if (r.status == RecordStatus::kOk && r.median_secs && *r.median_secs > 0) {
      t.throughput = work / *r.median_secs;
    }
    trials.push_back(t);
  }
  return trials;
}

std::vector<std::optional<double>> BestSoFar(const std::vector<Trial>& trials) {
  std::vector<std::optional<double>> best;
  best.reserve(trials.size());
  std::optional<double> current;
  for (const Trial& t : trials) {
    if (t.throughput && (!current || *t.throughput > *current)) current = t.throughput;
    best.push_back(current);
  }
  return best;
}

std::optional<double> FinalBest(const std::vector<Trial>& trials) {
  std::vector<std::optional<double>> best = BestSoFar(trials);
  return best.empty() ? std::nullopt : best.back();
}

std::optional<size_t> TrialsToReach(const std::vector<Trial>& trials, double fraction) {
  std::optional<size_t> i = IndexReaching(trials, fraction);
  if (!i) return std::nullopt;
  return *i + 1;
}

std::optional<double> SecondsToReach(const std::vector<Trial>& trials, double fraction) {
  std::optional<size_t> i = IndexReaching(trials, fraction);
  if (!i) return std::nullopt;
  return trials[*i].elapsed_s;
}

}  // namespace tirtune::report
