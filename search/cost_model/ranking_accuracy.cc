// PairwiseRankingAccuracy: how often a model's scores order two candidates of one task as their
// measured times do. A failed run (a time that is not finite and positive) counts as the slowest.
#include <cmath>
#include <limits>

#include "tirtune/search/cost_model.h"
#include "tirtune/support/error.h"

namespace tirtune {

double PairwiseRankingAccuracy(const std::vector<CostSample>& samples,
                               const std::vector<double>& scores) {
  TT_ICHECK(samples.size() == scores.size(), "{} scores for {} samples", scores.size(),
            samples.size());
  auto time = [&](size_t i) {
    double s = samples[i].seconds;
    return std::isfinite(s) && s > 0 ? s : std::numeric_limits<double>::infinity();
  };
  // A tie in the scores counts half: it orders the pair no better than a coin.
  double correct = 0;
  size_t pairs = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    for (size_t j = i + 1; j < samples.size(); ++j) {
      if (samples[i].task != samples[j].task || time(i) == time(j)) continue;
      ++pairs;
      size_t faster = time(i) < time(j) ? i : j;
      size_t slower = faster == i ? j : i;
      if (scores[faster] > scores[slower]) {
        correct += 1;
      } else if (scores[faster] == scores[slower]) {
        correct += 0.5;
      }
    }
  }
  return pairs == 0 ? 0.5 : correct / static_cast<double>(pairs);
}

}  // namespace tirtune
