// Cost models rank candidates of a task by predicted throughput (higher is better) from their
// per-store features. XGBoostModel follows MetaSchedule's recipe (labels = best cost of the task /
// cost, a candidate's score the sum of its rows' outputs, early stopping, retraining only when the
// data grew by a fifth) with a choice of loss: MetaSchedule's label-weighted squared error, or
// (the default) a pairwise logistic rank loss, and an optional prior trained on other workloads'
// records that its trainings add trees to; RandomModel gives uniform scores (the baseline of
// ReplayTrace-like runs).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tirtune/search/feature.h"

namespace tirtune {

/// One measured candidate as the cost model learns from it.
struct CostSample {
  /// Identifies the task (workload) the candidate belongs to: labels are normalized per task.
  std::string task;
  FeatureMatrix features;
  /// Median run time in seconds; a failed run (any kind but a build error) is +infinity and
  /// gets label 0.
  double seconds = 0;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  /// Adds measured samples; may retrain.
  virtual void Update(const std::vector<CostSample>& samples) = 0;
  /// Learns from samples of other workloads (records of earlier runs) what carries over to the
  /// workloads being tuned: the model ranks with it before Update brings their own samples, and
  /// later trainings start from it and fit only the samples of Update, so they cost no more than
  /// without it. Replaces an earlier prior; empty `samples` remove it.
  virtual void Pretrain(const std::vector<CostSample>& samples) = 0;
  /// One score per candidate, higher meaning faster; comparable only within one task.
  virtual std::vector<double> Predict(const std::vector<const FeatureMatrix*>& candidates) = 0;
  /// Writes the model and its training data to `path` (a file); UserError when it cannot.
  virtual void Save(const std::string& path) const = 0;
  /// Reads what Save wrote; UserError naming the file for anything else.
  virtual void Load(const std::string& path) = 0;
  /// The number of samples learned from.
  virtual size_t num_samples() const = 0;
};

/// What the booster is trained to do with a candidate's pack-sum score.
enum class XGBoostObjective {
  /// MetaSchedule's: squared error against the normalized throughput, weighted by it.
  kRegression,
  /// Order the candidates of a task: the logistic loss of the score difference over pairs of
  /// candidates of one task with different times, each pair weighted by how far apart their
  /// normalized throughputs are (so pairs among fast candidates are not drowned by slow ones).
  kPairwiseRank,
};

struct XGBoostConfig {
  /// Default kPairwiseRank: on real records of GEMM and convolutions it ranks the candidates of
  /// a task better than the regression, within the task (0.83-0.86 against 0.69-0.78 pairwise
  /// accuracy, bench_cost_model_heldout IN_TASK=1) and across tasks.
  XGBoostObjective objective = XGBoostObjective::kPairwiseRank;
  /// kPairwiseRank: pairs drawn per candidate and boosting round.
  int rank_pairs_per_sample = 16;
  /// The depth of the trees trained on the tasks' own samples, and of the prior's trees (trained
  /// on thousands of other workloads' records). Deeper trees make a better prior: with the size
  /// shares in the features, depth 8 ranks twelve held-out workloads at 0.854 pairwise accuracy
  /// against 0.843 at depth 6 (bench_cost_model_heldout). Searches on a fresh database, where
  /// only the own trees rank, ended 7-17% slower with own trees 8 deep (four of four, 400 trials,
  /// before the shares). Defaults 6 and 8.
  int max_depth = 6;
  int prior_max_depth = 8;
  double eta = 0.2;
  double gamma = 0.001;
  double min_child_weight = 0;
  /// Shares of the rows and of the columns each tree sees, in (0, 1]. Default 1: on held-out
  /// tasks 0.8 / 0.5 ranked no better (bench_cost_model_heldout, docs/BENCHMARKS.md).
  double subsample = 1.0;
  double colsample_bytree = 1.0;
  /// kPairwiseRank: a pair's weight is the gap of the two normalized throughputs raised to this
  /// power (0: every pair alike). Default 1; 0.5 ranked held-out tasks about a point better,
  /// within what one training seed moves, and 0 about as well as 1.
  double gap_weight_power = 1.0;
  /// Boosting rounds at most, and rounds without improvement of the training loss before stopping.
  /// The logistic rank loss keeps falling on the training pairs long after the ranking of new
  /// candidates stops improving (100 and 300 rounds rank held-out records alike), so training
  /// stops at max_rounds. Default 200.
  int max_rounds = 200;
  int early_stopping_rounds = 50;
  /// When set and it becomes true (a signal handler's flag), boosting stops after the current
  /// round once one round has improved the loss, keeping the trees so far: Ctrl-C during a long
  /// pre-training returns within a round or two.
  const std::atomic<bool>* stop = nullptr;
  /// Until this many samples exist, Predict returns random scores (the prior's, with one). Default
  /// 64: one batch of random candidates is enough to rank the next (a second random batch cost GEMM
  /// 1024³ 64 trials of its budget).
  size_t num_warmup_samples = 64;
  /// Retrain only after the data grew by at least this fraction since the last training.
  double retrain_growth = 0.2;
  /// XGBoost threads (0: hardware threads). Default 1: its OpenMP threads spin, and on a small
  /// shared machine two of them took 6-12x longer to train than one.
  int nthread = 1;
  uint64_t seed = 43;
};

std::unique_ptr<CostModel> MakeXGBoostModel(const XGBoostConfig& config = {});
std::unique_ptr<CostModel> MakeRandomModel(uint64_t seed = 1);

/// The fraction of pairs (i, j) of the same task with different measured times that `scores`
/// orders as `seconds` does (faster = higher score; a failed run is the slowest; a tie in the
/// scores counts half). 1 is perfect, 0.5 random, and 0.5 when there is no such pair.
double PairwiseRankingAccuracy(const std::vector<CostSample>& samples,
                               const std::vector<double>& scores);

}  // namespace tirtune
