// ReplayTrace: random search over the design spaces, the baseline of the evolutionary search.
#include "tirtune/search/strategy.h"

namespace tirtune {
namespace {

class ReplayTrace : public SearchStrategy {
 public:
  ReplayTrace(const SpaceGenerator* space, uint64_t seed, int max_fail_count)
      : space_(space), rng_(seed), max_fail_count_(max_fail_count) {}

  std::string name() const override { return "replay"; }

  void PreTuning(const PrimFunc& func, const std::vector<Schedule>& design_spaces,
                 const std::vector<std::pair<Schedule, double>>& /*warm_start*/,
                 const std::unordered_set<std::string>& measured) override {
    func_ = func;
    spaces_.clear();
    for (const Schedule& s : design_spaces) spaces_.push_back(WithoutDecisions(s.trace()));
    seen_ = measured;
  }

  std::vector<Schedule> GenerateMeasureCandidates(int n) override {
    std::vector<Schedule> picked;
    int failures = 0;
    while (static_cast<int>(picked.size()) < n && failures < max_fail_count_ * n &&
           !spaces_.empty()) {
      const Trace& space = spaces_[rng_.UniformInt(0, static_cast<int64_t>(spaces_.size()))];
      std::optional<Schedule> sch = space_->ReplayAndPostprocess(func_, space, rng_.Next());
      if (!sch || !seen_.insert(CandidateKey(*sch)).second) {
        ++failures;
        continue;
      }
      picked.push_back(std::move(*sch));
    }
    return picked;
  }

  void NotifyRunnerResults(const std::vector<Schedule>& candidates,
                           const std::vector<double>&) override {
    // The tuning loop may add candidates of its own (transferred ones): never propose them again.
    for (const Schedule& c : candidates) seen_.insert(CandidateKey(c));
  }

 private:
  const SpaceGenerator* space_;
  RandomEngine rng_;
  int max_fail_count_;
  PrimFunc func_;
  std::vector<Trace> spaces_;
  std::unordered_set<std::string> seen_;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeReplayTrace(const SpaceGenerator* space, uint64_t seed,
                                                int max_fail_count) {
  return std::make_unique<ReplayTrace>(space, seed, max_fail_count);
}

}  // namespace tirtune
