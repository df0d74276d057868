// XGBoostModel: MetaSchedule's cost model through XGBoost's C API. A candidate's score is the sum
// of the booster's outputs over its feature rows ("pack-sum"); labels are normalized per task
// (the task's best time / the candidate's time, failures 0). Two losses on the sums:
//  - regression (MetaSchedule's): the squared error of the sum weighted by the label, so fast
//    candidates matter most: grad = (sum - y) * y, hess = y (for every row of the candidate);
//  - pairwise rank: for pairs (a, b) of one task with y_a > y_b, (y_a - y_b)^p log(1 + e^-(s_a -
//    s_b)) (p = gap_weight_power, default 1), with pairs drawn at random once per training.
// Training starts from scratch on all samples once there are num_warmup_samples and again each
// time the data grew by retrain_growth, stopping early when the training loss stops improving.
// With a prior (Pretrain: a booster fitted to other workloads' samples), every training starts
// from the prior's trees and adds trees fitted to the model's own samples only.
#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "model_file.h"
#include "tirtune/search/cost_model.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

constexpr const char* kModelName = "xgboost";
// A round improves the training loss only by more than this (labels are at most 1). Without a
// threshold, boosting goes on for thousands of rounds that each gain 1e-9.
constexpr double kMinImprovement = 1e-6;

// A failed XGBoost call is our bug (bad parameters or shapes), except where Load says otherwise.
void CheckXGB(int rc, const char* call) {
  if (rc != 0) throw InternalError(fmt::format("XGBoost {} failed: {}", call, XGBGetLastError()));
}
#define TT_XGB(call) CheckXGB((call), #call)

struct DMatrixFree {
  void operator()(void* handle) const { XGDMatrixFree(handle); }
};
struct BoosterFree {
  void operator()(void* handle) const { XGBoosterFree(handle); }
};
using DMatrixPtr = std::unique_ptr<void, DMatrixFree>;
using BoosterPtr = std::unique_ptr<void, BoosterFree>;

// The feature rows of several candidates, stacked, with the candidate of each row.
struct PackedRows {
  std::vector<float> data;
  std::vector<uint32_t> candidate;
  size_t num_candidates = 0;

  size_t rows() const { return candidate.size(); }
  DMatrixPtr ToDMatrix() const {
    DMatrixHandle handle = nullptr;
    TT_XGB(XGDMatrixCreateFromMat(data.data(), rows(), FeatureMatrix::kNumFeatures,
                                  std::numeric_limits<float>::quiet_NaN(), &handle));
    return DMatrixPtr(handle);
  }
  // Sums per-row outputs into one score per candidate.
  std::vector<double> PackSum(const float* row_outputs) const {
    std::vector<double> sum(num_candidates, 0.0);
    for (size_t r = 0; r < rows(); ++r) sum[candidate[r]] += row_outputs[r];
    return sum;
  }
};

PackedRows Pack(const std::vector<const FeatureMatrix*>& candidates) {
  PackedRows packed;
  packed.num_candidates = candidates.size();
  for (size_t c = 0; c < candidates.size(); ++c) {
    const FeatureMatrix& f = *candidates[c];
    TT_ICHECK(f.data.size() == f.rows * FeatureMatrix::kNumFeatures,
              "candidate {} has {} feature values for {} rows", c, f.data.size(), f.rows);
    packed.data.insert(packed.data.end(), f.data.begin(), f.data.end());
    packed.candidate.insert(packed.candidate.end(), f.rows, static_cast<uint32_t>(c));
  }
  return packed;
}

// y = (best time of the task) / time; 0 for failures (a time that is not finite and positive).
std::vector<double> NormalizedThroughput(const std::vector<CostSample>& samples) {
  auto ok = [](double s) { return std::isfinite(s) && s > 0; };
  std::map<std::string, double> best;
  for (const CostSample& s : samples) {
    if (!ok(s.seconds)) continue;
    auto [it, inserted] = best.emplace(s.task, s.seconds);
    if (!inserted) it->second = std::min(it->second, s.seconds);
  }
  std::vector<double> y(samples.size(), 0.0);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (ok(samples[i].seconds)) y[i] = best[samples[i].task] / samples[i].seconds;
  }
  return y;
}

// The p-rmse of the pack sums against the labels; grad = (sum - y) * y, hess = y.
double RegressionLoss(const std::vector<double>& labels, const std::vector<double>& sum,
                      std::vector<double>* grad, std::vector<double>* hess) {
  double squared = 0;
  for (size_t c = 0; c < sum.size(); ++c) {
    const double w = labels[c];
    squared += (sum[c] - w) * (sum[c] - w);
    (*grad)[c] = (sum[c] - w) * w;
    (*hess)[c] = w;
  }
  return std::sqrt(squared / static_cast<double>(sum.size()));
}

// Candidate `faster` should score above `slower`; the pair counts `weight` times.
struct RankPair {
  uint32_t faster, slower;
  double weight;
};

// The weighted mean logistic loss log(1 + exp(-(s_faster - s_slower))) over the pairs, and its
// derivatives per candidate.
double RankLoss(const std::vector<RankPair>& pairs, const std::vector<double>& sum,
                std::vector<double>* grad, std::vector<double>* hess) {
  double loss = 0, weights = 0;
  for (const RankPair& p : pairs) {
    const double d = sum[p.faster] - sum[p.slower];
    // sigmoid(-d), computed without overflow for either sign of d.
    const double q = d >= 0 ? std::exp(-d) / (1 + std::exp(-d)) : 1 / (1 + std::exp(d));
    loss += p.weight * (d >= 0 ? std::log1p(std::exp(-d)) : -d + std::log1p(std::exp(d)));
    weights += p.weight;
    (*grad)[p.faster] -= p.weight * q;
    (*grad)[p.slower] += p.weight * q;
    (*hess)[p.faster] += p.weight * q * (1 - q);
    (*hess)[p.slower] += p.weight * q * (1 - q);
  }
  return weights > 0 ? loss / weights : 0;
}

class XGBoostModel : public CostModel {
 public:
  explicit XGBoostModel(const XGBoostConfig& config)
      : config_(config),
        nthread_(config.nthread > 0 ? config.nthread
                                    : std::max(1u, std::thread::hardware_concurrency())),
        rng_(config.seed) {}

  std::string name() const override { return kModelName; }
  size_t num_samples() const override { return samples_.size(); }

  void Update(const std::vector<CostSample>& samples) override {
    samples_.insert(samples_.end(), samples.begin(), samples.end());
    if (samples_.size() < config_.num_warmup_samples) return;
    const double grown = static_cast<double>(samples_.size() - last_train_size_);
    if (last_train_size_ > 0 &&
        grown < config_.retrain_growth * static_cast<double>(last_train_size_)) {
      return;
    }
    Train();
  }

  void Pretrain(const std::vector<CostSample>& samples) override {
    prior_.clear();
    prior_rounds_ = 0;
    int rounds = 0;
    if (BoosterPtr fitted = Fit(samples, config_.prior_max_depth, &rounds)) {
      prior_ = BoosterBytes(fitted.get());
      prior_rounds_ = rounds;
    }
    // What was trained on top of an earlier prior is stale: the new prior alone, until the own
    // samples are enough to train on top of it.
    booster_ = prior_.empty() ? nullptr : BoosterFromBytes(prior_);
    last_train_size_ = 0;
    if (!samples_.empty() && samples_.size() >= config_.num_warmup_samples) Train();
  }

  std::vector<double> Predict(const std::vector<const FeatureMatrix*>& candidates) override {
    if (!booster_) {
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      std::vector<double> scores(candidates.size());
      for (double& s : scores) s = uniform(rng_);
      return scores;
    }
    PackedRows packed = Pack(candidates);
    if (packed.rows() == 0) return std::vector<double>(candidates.size(), 0.0);
    DMatrixPtr matrix = packed.ToDMatrix();
    bst_ulong len = 0;
    const float* margins = nullptr;
    TT_XGB(XGBoosterPredict(booster_.get(), matrix.get(), /*option_mask=margin*/ 1,
                            /*ntree_limit=*/0, /*training=*/0, &len, &margins));
    TT_ICHECK(len == packed.rows(), "XGBoost predicted {} rows for {}", len, packed.rows());
    return packed.PackSum(margins);
  }

  void Save(const std::string& path) const override {
    cost_model_file::Writer file(kModelName);
    file.U64(last_train_size_);
    file.Samples(samples_);
    std::string booster = booster_ ? BoosterBytes(booster_.get()) : std::string();
    file.U64(booster.size());
    file.Bytes(booster.data(), booster.size());
    file.U64(prior_rounds_);
    file.U64(prior_.size());
    file.Bytes(prior_.data(), prior_.size());
    file.Commit(path);
  }

  void Load(const std::string& path) override {
    // Step 1. Read everything before changing anything.
    cost_model_file::Reader file(path, kModelName);
    uint64_t last_train_size = file.U64();
    std::vector<CostSample> samples = file.Samples();
    std::string model = file.Bytes(file.U64());
    uint64_t prior_rounds = 0;
    std::string prior;
    if (file.version() >= 2) {
      prior_rounds = file.U64();
      prior = file.Bytes(file.U64());
    }
    file.ExpectEnd();
    if (last_train_size > samples.size()) {
      file.Fail(fmt::format("trained on {} of {} samples", last_train_size, samples.size()));
    }
    if (prior.empty() != (prior_rounds == 0)) {
      file.Fail(fmt::format("a prior of {} rounds in {} bytes", prior_rounds, prior.size()));
    }
    // Step 2. The boosters that were saved (both checked); the model ranks with the trained one,
    // else with the prior, else at random.
    BoosterPtr booster;
    for (const std::string* bytes : {&prior, &model}) {
      if (bytes->empty()) continue;
      booster = BoosterFromBytes(*bytes);
      if (!booster) file.Fail(fmt::format("the booster does not load: {}", XGBGetLastError()));
    }
    samples_ = std::move(samples);
    last_train_size_ = last_train_size;
    prior_ = std::move(prior);
    prior_rounds_ = static_cast<int>(prior_rounds);
    booster_ = std::move(booster);
  }

 private:
  static void SetParam(BoosterHandle booster, const char* key, const std::string& value) {
    TT_XGB(XGBoosterSetParam(booster, key, value.c_str()));
  }

  // The booster saved in `bytes`, null when they do not load.
  BoosterPtr BoosterFromBytes(const std::string& bytes) const {
    BoosterHandle handle = nullptr;
    TT_XGB(XGBoosterCreate(nullptr, 0, &handle));
    BoosterPtr booster(handle);
    if (XGBoosterLoadModelFromBuffer(handle, bytes.data(), bytes.size()) != 0) return nullptr;
    SetParam(handle, "nthread", std::to_string(nthread_));
    return booster;
  }

  static std::string BoosterBytes(BoosterHandle booster) {
    bst_ulong len = 0;
    const char* bytes = nullptr;
    TT_XGB(XGBoosterSaveModelToBuffer(booster, R"({"format": "ubj"})", &len, &bytes));
    return std::string(bytes, len);
  }

  // Trains on the model's own samples (on top of the prior, if any); a training that improves
  // nothing keeps the previous booster.
  void Train() {
    last_train_size_ = samples_.size();
    int rounds = 0;
    if (BoosterPtr fitted = Fit(samples_, config_.max_depth, &rounds)) booster_ = std::move(fitted);
  }

  // A booster fitted to `samples` (the candidates without feature rows take no part): the prior's
  // trees, if there is a prior, and the new trees up to the round with the lowest training loss;
  // its number of trees in `*rounds`. The new trees are at most `max_depth` deep. Null when no new
  // tree lowers the loss.
  BoosterPtr Fit(const std::vector<CostSample>& samples, int max_depth, int* rounds) {
    // Step 1. Rows and labels.
    std::vector<double> y = NormalizedThroughput(samples);
    std::vector<const FeatureMatrix*> candidates;
    std::vector<double> labels;
    std::vector<const std::string*> tasks;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (samples[i].features.rows == 0) continue;
      candidates.push_back(&samples[i].features);
      labels.push_back(y[i]);
      tasks.push_back(&samples[i].task);
    }
    if (candidates.empty()) return nullptr;
    const bool rank = config_.objective == XGBoostObjective::kPairwiseRank;
    std::vector<RankPair> pairs;
    if (rank) pairs = DrawPairs(tasks, labels);
    PackedRows packed = Pack(candidates);
    DMatrixPtr matrix = packed.ToDMatrix();
    std::vector<float> row_labels(packed.rows());
    for (size_t r = 0; r < packed.rows(); ++r) {
      row_labels[r] = static_cast<float>(labels[packed.candidate[r]]);
    }
    TT_XGB(XGDMatrixSetFloatInfo(matrix.get(), "label", row_labels.data(), packed.rows()));

    // Step 2. The booster, from the prior's trees if there is one. base_score 0: every row would
    // otherwise add it to the pack sum.
    BoosterHandle handle = nullptr;
    DMatrixHandle matrices[] = {matrix.get()};
    TT_XGB(XGBoosterCreate(matrices, 1, &handle));
    BoosterPtr booster(handle);
    if (!prior_.empty()) {
      TT_XGB(XGBoosterLoadModelFromBuffer(handle, prior_.data(), prior_.size()));
    }
    const std::pair<const char*, std::string> params[] = {
        {"max_depth", std::to_string(max_depth)},
        {"eta", fmt::format("{}", config_.eta)},
        {"gamma", fmt::format("{}", config_.gamma)},
        {"min_child_weight", fmt::format("{}", config_.min_child_weight)},
        {"subsample", fmt::format("{}", config_.subsample)},
        {"colsample_bytree", fmt::format("{}", config_.colsample_bytree)},
        {"seed", std::to_string(config_.seed)},
        {"nthread", std::to_string(nthread_)},
        {"base_score", "0"},
        {"disable_default_eval_metric", "1"},
        {"verbosity", "0"},
    };
    for (const auto& [key, value] : params) SetParam(handle, key, value);

    // Step 3. Boost until the training loss stops improving, or for max_rounds.
    std::vector<float> grad(packed.rows()), hess(packed.rows());
    double best_loss = std::numeric_limits<double>::infinity();
    int best_rounds = 0;
    for (int round = 0; round <= config_.max_rounds; ++round) {
      bst_ulong len = 0;
      const float* margins = nullptr;
      TT_XGB(XGBoosterPredict(handle, matrix.get(), /*option_mask=margin*/ 1, /*ntree_limit=*/0,
                              /*training=*/1, &len, &margins));
      TT_ICHECK(len == packed.rows(), "XGBoost predicted {} rows for {}", len, packed.rows());
      std::vector<double> sum = packed.PackSum(margins);
      // The loss of the booster with `round` trees, and its derivatives per candidate.
      std::vector<double> cand_grad(sum.size(), 0.0), cand_hess(sum.size(), 0.0);
      double loss = rank ? RankLoss(pairs, sum, &cand_grad, &cand_hess)
                         : RegressionLoss(labels, sum, &cand_grad, &cand_hess);
      if (loss < best_loss - kMinImprovement) {
        best_loss = loss;
        best_rounds = round;
      } else if (round - best_rounds >= config_.early_stopping_rounds) {
        break;
      }
      if (round == config_.max_rounds) break;
      // Stopped: keep the trees so far, once there is at least one (an empty fit would drop
      // the prior, and the model saved at the end of the run would lose what it knew).
      if (config_.stop != nullptr && config_.stop->load() && best_rounds > 0) break;
      for (size_t r = 0; r < packed.rows(); ++r) {
        grad[r] = static_cast<float>(cand_grad[packed.candidate[r]]);
        hess[r] = static_cast<float>(cand_hess[packed.candidate[r]]);
      }
      TT_XGB(XGBoosterBoostOneIter(handle, matrix.get(), grad.data(), hess.data(), packed.rows()));
    }

    // Step 4. The trees up to the best round.
    if (best_rounds == 0) return nullptr;
    *rounds = prior_rounds_ + best_rounds;
    BoosterHandle sliced = nullptr;
    TT_XGB(XGBoosterSlice(handle, 0, *rounds, 1, &sliced));
    SetParam(sliced, "nthread", std::to_string(nthread_));
    return BoosterPtr(sliced);
  }

  // Up to rank_pairs_per_sample pairs per candidate, each with a random other candidate of the
  // same task whose label differs; weight = the difference of the labels.
  std::vector<RankPair> DrawPairs(const std::vector<const std::string*>& tasks,
                                  const std::vector<double>& labels) {
    std::map<std::string, std::vector<uint32_t>> by_task;
    for (size_t c = 0; c < tasks.size(); ++c) by_task[*tasks[c]].push_back(uint32_t(c));
    std::vector<RankPair> pairs;
    for (size_t c = 0; c < tasks.size(); ++c) {
      const std::vector<uint32_t>& group = by_task[*tasks[c]];
      std::uniform_int_distribution<size_t> pick(0, group.size() - 1);
      for (int k = 0; k < config_.rank_pairs_per_sample; ++k) {
        uint32_t other = group[pick(rng_)];
        double gap = labels[c] - labels[other];
        double weight = std::pow(std::fabs(gap), config_.gap_weight_power);
        if (gap > 0) pairs.push_back(RankPair{uint32_t(c), other, weight});
        if (gap < 0) pairs.push_back(RankPair{other, uint32_t(c), weight});
      }
    }
    return pairs;
  }

  XGBoostConfig config_;
  int nthread_;
  std::mt19937_64 rng_;
  std::vector<CostSample> samples_;
  // Samples at the last training (the retraining threshold grows from it).
  size_t last_train_size_ = 0;
  BoosterPtr booster_;
  // The prior, serialized (empty for none), and its number of trees.
  std::string prior_;
  int prior_rounds_ = 0;
};

}  // namespace

std::unique_ptr<CostModel> MakeXGBoostModel(const XGBoostConfig& config) {
  for (auto [name, depth] :
       {std::pair{"max_depth", config.max_depth}, {"prior_max_depth", config.prior_max_depth}}) {
    if (depth < 1) TT_USER_ERROR("XGBoostConfig.{} {} < 1", name, depth);
  }
  if (!(config.eta > 0)) TT_USER_ERROR("XGBoostConfig.eta {} is not positive", config.eta);
  if (config.max_rounds < 1) TT_USER_ERROR("XGBoostConfig.max_rounds {} < 1", config.max_rounds);
  if (config.early_stopping_rounds < 1) {
    TT_USER_ERROR("XGBoostConfig.early_stopping_rounds {} < 1", config.early_stopping_rounds);
  }
  if (!(config.retrain_growth >= 0)) {
    TT_USER_ERROR("XGBoostConfig.retrain_growth {} is negative", config.retrain_growth);
  }
  for (auto [name, share] :
       {std::pair{"subsample", config.subsample}, {"colsample_bytree", config.colsample_bytree}}) {
    if (!(share > 0 && share <= 1))
      TT_USER_ERROR("XGBoostConfig.{} {} is not in (0, 1]", name, share);
  }
  if (!(config.gap_weight_power >= 0)) {
    TT_USER_ERROR("XGBoostConfig.gap_weight_power {} is negative", config.gap_weight_power);
  }
  if (config.nthread < 0) TT_USER_ERROR("XGBoostConfig.nthread {} is negative", config.nthread);
  return std::make_unique<XGBoostModel>(config);
}

}  // namespace tirtune
