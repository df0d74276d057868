// The rules TuneOptions must follow, and the batch size when none is given (see tune.h).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "tirtune/search/tune.h"
#include "tirtune/support/error.h"

namespace tirtune {

void CheckTuneOptions(const TuneOptions& o) {
  if (o.max_trials < 1)
    throw UserError(fmt::format("--trials must be positive, got {}", o.max_trials));
  if (o.trials_per_round < 0) {
    throw UserError(fmt::format("trials per round must be positive (or 0 for the default), got {}",
                                o.trials_per_round));
  }
  const EvolutionaryConfig& e = o.evolutionary;
  if (e.population_size < 1) {
    throw UserError(fmt::format("the population must be positive, got {}", e.population_size));
  }
  if (!(e.init_measured_ratio >= 0 && e.init_measured_ratio <= 1) ||
      !(e.eps_greedy >= 0 && e.eps_greedy <= 1) ||
      !(e.genetic_mutate_prob >= 0 && e.genetic_mutate_prob <= 1)) {
    throw UserError("init_measured_ratio, eps_greedy and genetic_mutate_prob must be in [0, 1]");
  }
  if (!std::isfinite(o.runner.timeout_s) || o.runner.timeout_s <= 0) {
    throw UserError(
        fmt::format("--timeout must be a positive number of seconds, got {}", o.runner.timeout_s));
  }
  if (o.library_retimes < 0 || o.library_retimes > 100) {
    throw UserError(
        fmt::format("--library-retimes must be from 0 to 100, got {}", o.library_retimes));
  }
  if (!(o.slow_cutoff_factor == 0 || o.slow_cutoff_factor > 1)) {
    throw UserError(
        fmt::format("the slow-candidate cutoff factor must be 0 (off) or above 1, got {}",
                    o.slow_cutoff_factor));
  }
  if (o.strategy != "evolutionary" && o.strategy != "replay") {
    throw UserError(fmt::format("unknown strategy '{}' (evolutionary or replay)", o.strategy));
  }
  if (o.cost_model != "xgb" && o.cost_model != "random") {
    throw UserError(fmt::format("unknown cost model '{}' (xgb or random)", o.cost_model));
  }
  if (o.pretrain != "all" && o.pretrain != "tasks" && o.pretrain != "none") {
    throw UserError(fmt::format("unknown pre-training '{}' (all, tasks or none)", o.pretrain));
  }
  if (o.task_scheduler != "gradient" && o.task_scheduler != "round-robin") {
    throw UserError(
        fmt::format("unknown task scheduler '{}' (gradient or round-robin)", o.task_scheduler));
  }
}

int DefaultTrialsPerRound(int budget, size_t num_tasks) {
  constexpr int kMax = 64, kMin = 8;
  if (num_tasks <= 1) return kMax;
  int half_share = static_cast<int>(budget / (2 * static_cast<int64_t>(num_tasks)));
  return std::clamp(half_share / kMin * kMin, kMin, kMax);
}

}  // namespace tirtune
