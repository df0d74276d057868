// Cost models rank candidates of a task by predicted throughput (higher is better) from their
// per-store features. XGBoostModel follows MetaSchedule's recipe (labels = best cost of the task /
// cost, pack-sum squared error weighted by the label, early stopping, retraining only when the
// data grew by a fifth); RandomModel gives uniform scores (the baseline of ReplayTrace-like runs).
#pragma once

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
  /// One score per candidate, higher meaning faster; comparable only within one task.
  virtual std::vector<double> Predict(const std::vector<const FeatureMatrix*>& candidates) = 0;
  /// Writes the model and its training data to `path` (a file); UserError when it cannot.
  virtual void Save(const std::string& path) const = 0;
  /// Reads what Save wrote; UserError naming the file for anything else.
  virtual void Load(const std::string& path) = 0;
  /// The number of samples learned from.
  virtual size_t num_samples() const = 0;
};

struct XGBoostConfig {
  int max_depth = 10;
  double eta = 0.2;
  double gamma = 0.001;
  double min_child_weight = 0;
  /// Boosting rounds at most, and rounds without improvement of the training loss before stopping.
  int max_rounds = 10000;
  int early_stopping_rounds = 50;
  /// Until this many samples exist, Predict returns random scores. Default 100.
  size_t num_warmup_samples = 100;
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
