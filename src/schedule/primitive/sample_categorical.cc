// sample_categorical: picks one of several integer candidates with the given probabilities. The
// decision is the index of the candidate picked.
#include <fmt/format.h>

#include "tirtune/schedule/schedule.h"

namespace tirtune {

ExprRV Schedule::SampleCategorical(std::vector<int64_t> candidates, std::vector<double> probs,
                                   std::optional<int64_t> decision) {
  if (candidates.empty() || candidates.size() != probs.size()) {
    throw SimpleScheduleError("InvalidCandidatesError",
                              fmt::format("sample_categorical needs as many probabilities as "
                                          "candidates (at least one); got {} and {}",
                                          candidates.size(), probs.size()));
  }
  int64_t index;
  if (decision.has_value()) {
    index = *decision;
    if (index < 0 || index >= static_cast<int64_t>(candidates.size())) {
      throw SimpleScheduleError(
          "InvalidDecisionError",
          fmt::format("decision {} is not an index into {} candidates", index, candidates.size()));
    }
  } else {
    index = rng_.Categorical(probs);
  }
  ExprRV out = NewExprRV(candidates[index]);
  Record("SampleCategorical", {}, {{"candidates", candidates}, {"probs", probs}}, {out.ref()},
         index);
  return out;
}

}  // namespace tirtune
