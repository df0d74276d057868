// EvolutionarySearch: each batch starts from the best measured schedules plus fresh samples of
// the design spaces, evolves them for a few generations (parents drawn in proportion to the cost
// model's score, children made by the mutators), and hands out the best predicted unmeasured
// schedules plus a few random fresh samples (epsilon-greedy).
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "tirtune/search/strategy.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

class EvolutionarySearch : public SearchStrategy {
 public:
  EvolutionarySearch(const SpaceGenerator* space, CostModel* model, FeatureFn features,
                     const EvolutionaryConfig& config, uint64_t seed)
      : space_(space),
        model_(model),
        features_(std::move(features)),
        config_(config),
        rng_(seed),
        arena_(config.num_threads > 0
                   ? config.num_threads
                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
    double mass = 0;
    for (const MutatorWithProb& m : space_->mutators()) mass += m.prob;
    if (mass > 0) {
      for (const MutatorWithProb& m : space_->mutators()) mutator_probs_.push_back(m.prob / mass);
    }
  }

  std::string name() const override { return "evolutionary"; }

  void PreTuning(const PrimFunc& func, const std::vector<Schedule>& design_spaces,
                 const std::vector<std::pair<Schedule, double>>& warm_start,
                 const std::unordered_set<std::string>& measured) override {
    func_ = func;
    spaces_.clear();
    for (const Schedule& s : design_spaces) spaces_.push_back(WithoutDecisions(s.trace()));
    seen_ = measured;
    best_measured_ = warm_start;
    for (const auto& [sch, secs] : warm_start) seen_.insert(CandidateKey(sch));
    SortBest();
    empty_iters_ = 0;
  }

  std::vector<Schedule> GenerateMeasureCandidates(int n) override {
    while (empty_iters_ < config_.num_empty_iters_before_early_stop) {
      std::vector<Schedule> picked = OneRound(n);
      if (!picked.empty()) {
        empty_iters_ = 0;
        return picked;
      }
      ++empty_iters_;
    }
    return {};
  }

  void NotifyRunnerResults(const std::vector<Schedule>& candidates,
                           const std::vector<double>& seconds) override {
    for (size_t i = 0; i < candidates.size() && i < seconds.size(); ++i) {
      seen_.insert(CandidateKey(candidates[i]));  // the tuning loop may add its own candidates
      if (std::isfinite(seconds[i])) best_measured_.emplace_back(candidates[i], seconds[i]);
    }
    SortBest();
  }

 private:
  void SortBest() {
    std::stable_sort(best_measured_.begin(), best_measured_.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    size_t keep = static_cast<size_t>(config_.population_size);
    if (best_measured_.size() > keep)
      best_measured_.erase(best_measured_.begin() + keep, best_measured_.end());
  }

  // One batch: up to n new candidates (empty when nothing new turned up).
  std::vector<Schedule> OneRound(int n) {
    // Step 1. The best measured schedules seed the population.
    std::vector<Schedule> population;
    size_t from_measured =
        std::min(best_measured_.size(),
                 static_cast<size_t>(config_.population_size * config_.init_measured_ratio));
    for (size_t i = 0; i < from_measured; ++i) population.push_back(best_measured_[i].first);

    // Step 2. Fresh samples fill the rest.
    std::vector<Schedule> fresh = SampleFresh(config_.population_size - population.size());
    for (const Schedule& s : fresh) population.push_back(s);
    if (population.empty()) return {};

    // Step 3. Evolve: score, remember the best unmeasured, breed the next generation.
    std::map<std::string, std::pair<double, Schedule>> best_unmeasured;
    // The model does not change within a round: a schedule seen before keeps its score.
    std::unordered_map<std::string, double> score_of;
    for (int iter = 0; iter <= config_.genetic_num_iters; ++iter) {
      std::vector<std::string> keys = Keys(population);
      std::vector<Schedule> unscored;
      std::vector<const std::string*> unscored_keys;
      for (size_t i = 0; i < population.size(); ++i) {
        if (score_of.emplace(keys[i], 0.0).second) {
          unscored.push_back(population[i]);
          unscored_keys.push_back(&keys[i]);
        }
      }
      std::vector<double> fresh_scores = Score(unscored);
      for (size_t j = 0; j < unscored.size(); ++j) score_of[*unscored_keys[j]] = fresh_scores[j];
      std::vector<double> scores;
      for (const std::string& key : keys) scores.push_back(score_of.at(key));
      for (size_t i = 0; i < population.size(); ++i) {
        const std::string& key = keys[i];
        if (seen_.count(key)) continue;
        auto it = best_unmeasured.find(key);
        if (it == best_unmeasured.end()) {
          best_unmeasured.emplace(key, std::make_pair(scores[i], population[i]));
        } else {
          it->second.first = std::max(it->second.first, scores[i]);
        }
      }
      if (iter == config_.genetic_num_iters) break;
      population = Evolve(population, scores);
    }

    // Step 4. Epsilon-greedy: a few random fresh samples, the rest best predicted first.
    std::vector<Schedule> picked;
    auto take = [&](const std::string& key, const Schedule& s) {
      if (seen_.insert(key).second) picked.push_back(s);
    };
    int num_random = static_cast<int>(n * config_.eps_greedy);
    std::vector<std::string> fresh_keys = Keys(fresh);
    std::vector<size_t> order(fresh.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[rng_.UniformInt(0, static_cast<int64_t>(i))]);
    }
    for (size_t i = 0; i < order.size() && static_cast<int>(picked.size()) < num_random; ++i) {
      take(fresh_keys[order[i]], fresh[order[i]]);
    }
    std::vector<std::tuple<double, const std::string*, const Schedule*>> ranked;
    for (const auto& [key, entry] : best_unmeasured) {
      ranked.emplace_back(entry.first, &key, &entry.second);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
    for (const auto& [score, key, sch] : ranked) {
      if (static_cast<int>(picked.size()) >= n) break;
      take(*key, *sch);
    }
    return picked;
  }

  // `count` valid fresh samples, in rounds; more rounds while fewer than init_min_unmeasured of
  // them are unmeasured, until max_fail_count rounds in a row bring nothing new.
  std::vector<Schedule> SampleFresh(size_t count) {
    std::vector<Schedule> out;
    if (spaces_.empty() || count == 0) return out;
    size_t unmeasured = 0;
    int failures = 0;
    auto enough = [&] {
      return out.size() >= count &&
             unmeasured >= std::min<size_t>(count, config_.init_min_unmeasured);
    };
    while (!enough() && failures < config_.max_fail_count) {
      size_t batch = count - std::min(count, out.size());
      if (batch == 0) batch = count;
      std::vector<uint64_t> seeds(batch);
      std::vector<size_t> which(batch);
      for (size_t i = 0; i < batch; ++i) {
        which[i] = static_cast<size_t>(rng_.UniformInt(0, static_cast<int64_t>(spaces_.size())));
        seeds[i] = rng_.Next();
      }
      std::vector<std::optional<Schedule>> samples(batch);
      std::vector<std::string> keys(batch);
      arena_.execute([&] {
        tbb::parallel_for(size_t{0}, batch, [&](size_t i) {
          samples[i] = space_->ReplayAndPostprocess(func_, spaces_[which[i]], seeds[i]);
          if (samples[i]) keys[i] = CandidateKey(*samples[i]);
        });
      });
      size_t before = unmeasured;
      for (size_t i = 0; i < batch; ++i) {
        if (!samples[i]) continue;
        if (!seen_.count(keys[i])) ++unmeasured;
        if (out.size() < count) out.push_back(std::move(*samples[i]));
      }
      if (unmeasured == before) ++failures;
    }
    return out;
  }

  // The CandidateKey of each schedule, computed in parallel (each prints its function).
  std::vector<std::string> Keys(const std::vector<Schedule>& schedules) {
    std::vector<std::string> keys(schedules.size());
    arena_.execute([&] {
      tbb::parallel_for(size_t{0}, schedules.size(),
                        [&](size_t i) { keys[i] = CandidateKey(schedules[i]); });
    });
    return keys;
  }

  // Cost-model scores (only their order matters); a candidate without features, or with a score
  // that is not finite, scores -infinity.
  std::vector<double> Score(const std::vector<Schedule>& population) {
    if (population.empty()) return {};
    std::vector<FeatureMatrix> features = features_(population);
    std::vector<const FeatureMatrix*> ptrs;
    for (const FeatureMatrix& f : features) ptrs.push_back(&f);
    std::vector<double> scores = model_->Predict(ptrs);
    TT_ICHECK(features.size() == population.size() && scores.size() == population.size(),
              "{} candidates, {} feature matrices, {} scores from cost model '{}'",
              population.size(), features.size(), scores.size(), model_->name());
    for (size_t i = 0; i < scores.size(); ++i) {
      if (!std::isfinite(scores[i]) || features[i].rows == 0) {
        scores[i] = -std::numeric_limits<double>::infinity();
      }
    }
    return scores;
  }

  // The next generation: parents drawn by linear ranking (the best predicted twice as likely as
  // the median, the worst never; scale-free, so any cost model's scores will do); most children
  // mutate.
  std::vector<Schedule> Evolve(const std::vector<Schedule>& population,
                               const std::vector<double>& scores) {
    std::vector<double> weights = RankWeights(scores);
    size_t size = static_cast<size_t>(config_.population_size);
    std::vector<size_t> parents(size);
    std::vector<uint64_t> seeds(size);
    for (size_t i = 0; i < size; ++i) {
      parents[i] = static_cast<size_t>(rng_.Categorical(weights));
      seeds[i] = rng_.Next();
    }
    // Mutators see traces without their postprocessing steps.
    std::vector<Trace> parent_traces(population.size());
    arena_.execute([&] {
      tbb::parallel_for(size_t{0}, population.size(), [&](size_t i) {
        parent_traces[i] = population[i].trace().Simplified(/*remove_postproc=*/true);
      });
    });
    std::vector<Schedule> next(size, population.front());
    arena_.execute([&] {
      tbb::parallel_for(size_t{0}, size, [&](size_t i) {
        RandomEngine rng(seeds[i]);
        const Schedule& parent = population[parents[i]];
        next[i] = parent;
        if (rng.UniformReal() >= config_.genetic_mutate_prob || mutator_probs_.empty()) return;
        for (int attempt = 0; attempt < config_.genetic_max_fail_count; ++attempt) {
          const MutatorWithProb& m = space_->mutators()[rng.Categorical(mutator_probs_)];
          std::optional<Trace> mutated = m.mutator->Apply(func_, parent_traces[parents[i]], rng);
          if (!mutated) continue;
          std::optional<Schedule> child = space_->ReplayAndPostprocess(func_, *mutated, rng.Next());
          if (child) {
            next[i] = std::move(*child);
            return;
          }
        }
      });
    });
    return next;
  }

  // Weight 2 (n - 1 - rank) / (n - 1) by descending score, 0 for -infinity; equal scores share
  // the mean of their ranks' weights, so all-equal scores weigh the same.
  static std::vector<double> RankWeights(const std::vector<double>& scores) {
    const size_t n = scores.size();
    std::vector<double> weights(n, 1.0);
    if (n < 2) return weights;
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    for (size_t begin = 0; begin < n;) {
      size_t end = begin;
      while (end < n && scores[order[end]] == scores[order[begin]]) ++end;
      // Ranks begin..end-1 tie: each gets the mean weight of those ranks.
      double mean_rank = (static_cast<double>(begin) + static_cast<double>(end - 1)) / 2;
      double w = 2 * (static_cast<double>(n - 1) - mean_rank) / static_cast<double>(n - 1);
      for (size_t k = begin; k < end; ++k) {
        weights[order[k]] = std::isinf(scores[order[k]]) && scores[order[k]] < 0 ? 0 : w;
      }
      begin = end;
    }
    double total = 0;
    for (double w : weights) total += w;
    if (total <= 0) std::fill(weights.begin(), weights.end(), 1.0);
    return weights;
  }

  const SpaceGenerator* space_;
  CostModel* model_;
  FeatureFn features_;
  EvolutionaryConfig config_;
  RandomEngine rng_;
  tbb::task_arena arena_;
  std::vector<double> mutator_probs_;

  PrimFunc func_;
  std::vector<Trace> spaces_;
  std::unordered_set<std::string> seen_;
  std::vector<std::pair<Schedule, double>> best_measured_;
  int empty_iters_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeEvolutionarySearch(const SpaceGenerator* space,
                                                       CostModel* model, FeatureFn features,
                                                       const EvolutionaryConfig& config,
                                                       uint64_t seed) {
  return std::make_unique<EvolutionarySearch>(space, model, std::move(features), config, seed);
}

}  // namespace tirtune
