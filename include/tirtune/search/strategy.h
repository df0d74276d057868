// Search strategies: where the next batch of candidates of one task comes from. Evolutionary
// search samples the design spaces, evolves the population with the mutators guided by the cost
// model, and picks the best predicted plus a few random ones (epsilon-greedy); ReplayTrace samples
// the design spaces at random (the baseline). Neither ever proposes a candidate already measured.
// Strategies only propose: compiling, measuring and storing belong to the tuning loop (tune.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "tirtune/search/cost_model.h"
#include "tirtune/search/feature.h"
#include "tirtune/search/space.h"

namespace tirtune {

/// Identifies a candidate by what it computes: the structural hash of its scheduled function (64
/// bits, compared without an equality check: a collision would drop a candidate, never store a
/// wrong one).
std::string CandidateKey(const Schedule& sch);

/// Features of scheduled (not yet lowered) candidates, one matrix per candidate.
using FeatureFn = std::function<std::vector<FeatureMatrix>(const std::vector<Schedule>&)>;
/// LowerForFeatures + ExtractFeatures, in parallel over `num_threads` (0: hardware threads); a
/// candidate that does not lower gets zero rows.
FeatureFn LoweredFeatures(int num_threads = 0);

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  /// Starts a task. `warm_start`: schedules of the task's best records so far, best first, with
  /// their median seconds. `measured`: keys of every candidate already measured (any status).
  virtual void PreTuning(const PrimFunc& func, const std::vector<Schedule>& design_spaces,
                         const std::vector<std::pair<Schedule, double>>& warm_start,
                         const std::unordered_set<std::string>& measured) = 0;
  /// Up to `n` candidates never measured nor proposed before; empty once the strategy finds
  /// nothing new (the task's space is exhausted as far as it can tell).
  virtual std::vector<Schedule> GenerateMeasureCandidates(int n) = 0;
  /// The results of the last batch, in order: median seconds, +infinity for a failure. The batch
  /// may hold candidates the strategy did not propose (a library's, transferred ones): they are
  /// measured now and never proposed later.
  virtual void NotifyRunnerResults(const std::vector<Schedule>& candidates,
                                   const std::vector<double>& seconds) = 0;
};

struct EvolutionaryConfig {
  /// Schedules per generation. Default 256 (MetaSchedule: 512, halved for small machines).
  int population_size = 256;
  /// Share of the population taken from the best measured schedules. Default 0.2.
  double init_measured_ratio = 0.2;
  /// Fresh samples wanted before evolving. Default 50.
  int init_min_unmeasured = 50;
  /// Sampling rounds without a new valid sample before giving up. Default 5.
  int max_fail_count = 5;
  /// Generations per batch. Default 4.
  int genetic_num_iters = 4;
  /// Chance that a child is a mutation (else a copy of its parent). Default 0.85.
  double genetic_mutate_prob = 0.85;
  /// Mutation attempts per child before keeping the parent. Default 10.
  int genetic_max_fail_count = 10;
  /// Share of each batch picked at random among fresh samples. Default 0.05.
  double eps_greedy = 0.05;
  /// Consecutive empty batches before the strategy reports exhaustion. Default 5.
  int num_empty_iters_before_early_stop = 5;
  /// Threads for sampling and mutation (0: hardware threads).
  int num_threads = 0;
};

/// `space` and `model` must outlive the strategy; `model` is read (Predict), never updated here.
std::unique_ptr<SearchStrategy> MakeEvolutionarySearch(const SpaceGenerator* space,
                                                       CostModel* model, FeatureFn features,
                                                       const EvolutionaryConfig& config,
                                                       uint64_t seed);

/// Random search: each candidate replays a random design space with fresh decisions.
/// `max_fail_count` attempts per wanted candidate before giving up on the batch.
std::unique_ptr<SearchStrategy> MakeReplayTrace(const SpaceGenerator* space, uint64_t seed,
                                                int max_fail_count = 100);

}  // namespace tirtune
