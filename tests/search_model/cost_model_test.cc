// Cost models: XGBoost learns a synthetic pack-sum target, predicts random scores until warm-up,
// ranks a new task with a prior trained on other tasks and trains on top of it, saves and loads
// (format version 1 too) without changing a prediction and rejects bad files with the file's name;
// the random model and the ranking accuracy.
#include "tirtune/search/cost_model.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// Candidates of 1 to 4 rows of random features whose time is 1 / (sum over rows of a function of
// three columns), so a pack-sum model can learn the throughput exactly.
std::vector<CostSample> SyntheticSamples(const std::string& task, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<CostSample> samples;
  for (size_t c = 0; c < count; ++c) {
    CostSample s;
    s.task = task;
    s.features.rows = 1 + c % 4;
    s.features.data.resize(s.features.rows * FeatureMatrix::kNumFeatures);
    double throughput = 0;
    for (size_t r = 0; r < s.features.rows; ++r) {
      float* row = s.features.data.data() + r * FeatureMatrix::kNumFeatures;
      for (size_t k = 0; k < FeatureMatrix::kNumFeatures; ++k) row[k] = uniform(rng);
      throughput += 0.2 + row[3] * row[3] + 0.5 * row[20] + (row[60] > 0.5 ? 0.3 : 0.0);
    }
    s.seconds = 1.0 / throughput;
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<const FeatureMatrix*> Features(const std::vector<CostSample>& samples) {
  std::vector<const FeatureMatrix*> out;
  for (const CostSample& s : samples) out.push_back(&s.features);
  return out;
}

// A small, fast configuration.
XGBoostConfig TestConfig() {
  XGBoostConfig config;
  config.max_rounds = 300;
  config.early_stopping_rounds = 20;
  config.nthread = 1;
  return config;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(::getpid()) + ".model"))
      .string();
}

TEST(XGBoostModel, BothObjectivesLearnAPackSumTarget) {
  for (XGBoostObjective objective :
       {XGBoostObjective::kPairwiseRank, XGBoostObjective::kRegression}) {
    XGBoostConfig config = TestConfig();
    config.objective = objective;
    std::unique_ptr<CostModel> model = MakeXGBoostModel(config);
    model->Update(SyntheticSamples("t", 400, /*seed=*/1));
    std::vector<CostSample> held_out = SyntheticSamples("t", 200, /*seed=*/2);
    double accuracy = PairwiseRankingAccuracy(held_out, model->Predict(Features(held_out)));
    EXPECT_GT(accuracy, 0.85) << "objective " << static_cast<int>(objective);
  }
}

TEST(XGBoostModel, TheRankObjectiveRanksATaskWhateverItsTimeScale) {
  // Two tasks with the same candidates, one 1000x slower: the labels are normalized per task and
  // pairs are drawn within a task, so the slow task's candidates rank as well as the fast one's.
  std::vector<CostSample> samples = SyntheticSamples("a", 200, /*seed=*/11);
  for (CostSample& s : SyntheticSamples("b", 200, /*seed=*/12)) {
    s.seconds *= 1000;
    samples.push_back(std::move(s));
  }
  XGBoostConfig config = TestConfig();
  config.objective = XGBoostObjective::kPairwiseRank;
  std::unique_ptr<CostModel> model = MakeXGBoostModel(config);
  model->Update(samples);
  std::vector<CostSample> held_out = SyntheticSamples("b", 200, /*seed=*/13);
  EXPECT_GT(PairwiseRankingAccuracy(held_out, model->Predict(Features(held_out))), 0.85);
}

TEST(XGBoostModel, SubsamplingAndUnweightedPairsStillRank) {
  XGBoostConfig config = TestConfig();
  config.subsample = 0.8;
  config.colsample_bytree = 0.5;
  config.gap_weight_power = 0;
  std::unique_ptr<CostModel> model = MakeXGBoostModel(config);
  model->Update(SyntheticSamples("t", 400, /*seed=*/1));
  std::vector<CostSample> held_out = SyntheticSamples("t", 200, /*seed=*/2);
  EXPECT_GT(PairwiseRankingAccuracy(held_out, model->Predict(Features(held_out))), 0.8);
}

TEST(XGBoostModel, PredictsRandomScoresBeforeWarmUp) {
  XGBoostConfig config = TestConfig();
  config.num_warmup_samples = 100;
  std::unique_ptr<CostModel> model = MakeXGBoostModel(config);
  std::vector<CostSample> samples = SyntheticSamples("t", 50, /*seed=*/3);
  model->Update(samples);
  EXPECT_EQ(model->num_samples(), 50u);
  std::vector<double> scores = model->Predict(Features(samples));
  ASSERT_EQ(scores.size(), samples.size());
  for (double s : scores) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(s, 1.0);
  }
  EXPECT_NE(scores, model->Predict(Features(samples)));
}

TEST(XGBoostModel, RetrainsOnlyWhenTheDataGrewByAFifth) {
  std::unique_ptr<CostModel> model = MakeXGBoostModel(TestConfig());
  model->Update(SyntheticSamples("t", 100, /*seed=*/4));
  std::vector<CostSample> probe = SyntheticSamples("t", 20, /*seed=*/5);
  std::vector<double> trained = model->Predict(Features(probe));
  model->Update(SyntheticSamples("t", 10, /*seed=*/6));
  EXPECT_EQ(model->Predict(Features(probe)), trained);
  model->Update(SyntheticSamples("t", 10, /*seed=*/7));
  EXPECT_NE(model->Predict(Features(probe)), trained);
}

TEST(XGBoostModel, LabelsAreNormalizedPerTask) {
  // The same candidates in a task 1000 times slower rank the same way.
  std::vector<CostSample> fast = SyntheticSamples("fast", 150, /*seed=*/8);
  std::vector<CostSample> slow = fast;
  for (CostSample& s : slow) {
    s.task = "slow";
    s.seconds *= 1000;
  }
  std::unique_ptr<CostModel> model = MakeXGBoostModel(TestConfig());
  model->Update(fast);
  model->Update(slow);
  std::vector<CostSample> held_out = SyntheticSamples("fast", 100, /*seed=*/9);
  EXPECT_GT(PairwiseRankingAccuracy(held_out, model->Predict(Features(held_out))), 0.8);
}

TEST(XGBoostModel, FailedRunsAndRowlessCandidatesDoNotBreakTraining) {
  std::vector<CostSample> samples = SyntheticSamples("t", 120, /*seed=*/10);
  samples[0].seconds = std::numeric_limits<double>::infinity();
  samples[1].features = FeatureMatrix{};
  std::unique_ptr<CostModel> model = MakeXGBoostModel(TestConfig());
  model->Update(samples);
  std::vector<double> scores = model->Predict(Features(samples));
  EXPECT_EQ(scores[1], 0.0);
  for (double s : scores) EXPECT_TRUE(std::isfinite(s));
}

TEST(XGBoostModel, SaveAndLoadKeepEveryPrediction) {
  std::unique_ptr<CostModel> model = MakeXGBoostModel(TestConfig());
  model->Update(SyntheticSamples("t", 150, /*seed=*/11));
  std::string path = TempPath("xgb_round_trip");
  model->Save(path);
  std::unique_ptr<CostModel> loaded = MakeXGBoostModel(TestConfig());
  loaded->Load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(loaded->num_samples(), 150u);
  std::vector<CostSample> probe = SyntheticSamples("t", 50, /*seed=*/12);
  EXPECT_EQ(loaded->Predict(Features(probe)), model->Predict(Features(probe)));
}

TEST(XGBoostModel, SaveBeforeTrainingLoadsAsUntrained) {
  std::unique_ptr<CostModel> model = MakeXGBoostModel(TestConfig());
  model->Update(SyntheticSamples("t", 10, /*seed=*/13));
  std::string path = TempPath("xgb_untrained");
  model->Save(path);
  std::unique_ptr<CostModel> loaded = MakeXGBoostModel(TestConfig());
  loaded->Load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(loaded->num_samples(), 10u);
}

// Load must throw a UserError whose message names the file.
void ExpectLoadFails(CostModel& model, const std::string& path, const std::string& reason) {
  try {
    model.Load(path);
    ADD_FAILURE() << "Load of " << path << " succeeded";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
  }
}

TEST(XGBoostModel, LoadOfABadFileIsAUserErrorNamingTheFile) {
  std::unique_ptr<CostModel> model = MakeXGBoostModel(TestConfig());
  model->Update(SyntheticSamples("t", 120, /*seed=*/14));
  std::string good = TempPath("xgb_good");
  model->Save(good);
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  std::unique_ptr<CostModel> fresh = MakeXGBoostModel(TestConfig());
  ExpectLoadFails(*fresh, TempPath("xgb_missing"), "cannot open");
  std::string bad = TempPath("xgb_bad");
  auto write = [&](const std::string& content) {
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << content;
  };
  write("not a model at all");
  ExpectLoadFails(*fresh, bad, "not a tirtune cost model file");
  for (size_t cut : {size_t{4}, size_t{30}, bytes.size() / 2, bytes.size() - 1}) {
    write(bytes.substr(0, cut));
    ExpectLoadFails(*fresh, bad, "truncated");
  }
  write(bytes + "x");
  ExpectLoadFails(*fresh, bad, "unexpected bytes");
  // A file of a build with other feature columns (the count follows the model's name).
  const uint64_t columns = FeatureMatrix::kNumFeatures, other = 164;
  size_t at = bytes.find(std::string(reinterpret_cast<const char*>(&columns), sizeof columns));
  ASSERT_LT(at, 64u);
  write(bytes.substr(0, at) + std::string(reinterpret_cast<const char*>(&other), sizeof other) +
        bytes.substr(at + sizeof columns));
  ExpectLoadFails(*fresh, bad,
                  fmt::format("features have 164 columns, this build uses {}", columns));
  // A corrupt booster: flip bytes near its end (the file ends with the empty prior's two integers).
  std::string corrupt = bytes;
  for (size_t i = corrupt.size() - 56; i < corrupt.size() - 16; ++i) corrupt[i] = '\x7f';
  write(corrupt);
  ExpectLoadFails(*fresh, bad, "booster");
  MakeRandomModel()->Save(bad);
  ExpectLoadFails(*fresh, bad, "holds a 'random' model");
  EXPECT_EQ(fresh->num_samples(), 0u);
  std::filesystem::remove(bad);
  std::filesystem::remove(good);
}

TEST(XGBoostModel, APriorRanksANewTaskBeforeItsOwnSamplesAndTrainingsAddToIt) {
  // Other tasks' samples of the same law make the prior; a new task is ranked by it at once
  // (deterministically, not at random), and still after its own samples are trained on top.
  std::vector<CostSample> others = SyntheticSamples("a", 150, /*seed=*/20);
  for (CostSample& s : SyntheticSamples("b", 150, /*seed=*/21)) {
    s.seconds *= 50;
    others.push_back(std::move(s));
  }
  XGBoostConfig config = TestConfig();
  config.max_rounds = 100;
  std::unique_ptr<CostModel> model = MakeXGBoostModel(config);
  model->Pretrain(others);
  EXPECT_EQ(model->num_samples(), 0u);
  std::vector<CostSample> held_out = SyntheticSamples("c", 150, /*seed=*/22);
  std::vector<double> prior_scores = model->Predict(Features(held_out));
  EXPECT_EQ(model->Predict(Features(held_out)), prior_scores);
  EXPECT_GT(PairwiseRankingAccuracy(held_out, prior_scores), 0.85);

  model->Update(SyntheticSamples("c", 80, /*seed=*/23));
  std::vector<double> tuned_scores = model->Predict(Features(held_out));
  EXPECT_NE(tuned_scores, prior_scores);
  EXPECT_GT(PairwiseRankingAccuracy(held_out, tuned_scores), 0.85);

  // Saved and loaded, with its prior: the same predictions; without the own samples' trees the
  // loaded model falls back to the prior.
  std::string path = TempPath("xgb_prior");
  model->Save(path);
  std::unique_ptr<CostModel> loaded = MakeXGBoostModel(config);
  loaded->Load(path);
  EXPECT_EQ(loaded->Predict(Features(held_out)), tuned_scores);
  std::unique_ptr<CostModel> prior_only = MakeXGBoostModel(config);
  prior_only->Pretrain(others);
  prior_only->Save(path);
  loaded->Load(path);
  EXPECT_EQ(loaded->Predict(Features(held_out)), prior_scores);
  std::filesystem::remove(path);

  // An empty prior removes it: random scores until warm-up again.
  prior_only->Pretrain({});
  EXPECT_NE(prior_only->Predict(Features(held_out)), prior_only->Predict(Features(held_out)));
}

TEST(XGBoostModel, ThePriorsTreesHavePriorMaxDepthAndTheOwnTreesMaxDepth) {
  std::vector<CostSample> samples = SyntheticSamples("t", 300, /*seed=*/30);
  std::vector<CostSample> probe = SyntheticSamples("t", 50, /*seed=*/31);
  auto prior_scores = [&](int prior_max_depth, int max_depth) {
    XGBoostConfig config = TestConfig();
    config.prior_max_depth = prior_max_depth;
    config.max_depth = max_depth;
    std::unique_ptr<CostModel> model = MakeXGBoostModel(config);
    model->Pretrain(samples);
    return model->Predict(Features(probe));
  };
  // A prior alone: max_depth plays no part, prior_max_depth does.
  EXPECT_EQ(prior_scores(1, 6), prior_scores(1, 2));
  EXPECT_NE(prior_scores(1, 6), prior_scores(6, 6));
  // Trees on top of the prior: max_depth plays its part.
  auto own_scores = [&](int max_depth) {
    XGBoostConfig config = TestConfig();
    config.prior_max_depth = 1;
    config.max_depth = max_depth;
    std::unique_ptr<CostModel> model = MakeXGBoostModel(config);
    model->Pretrain(samples);
    model->Update(SyntheticSamples("u", 200, /*seed=*/32));
    return model->Predict(Features(probe));
  };
  EXPECT_NE(own_scores(1), own_scores(6));
}

TEST(XGBoostModel, AFileOfFormatVersion1LoadsWithoutAPrior) {
  std::unique_ptr<CostModel> model = MakeXGBoostModel(TestConfig());
  model->Update(SyntheticSamples("t", 120, /*seed=*/24));
  std::string path = TempPath("xgb_v1");
  model->Save(path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Version 1: the same fields without the prior's two integers at the end.
  const uint64_t v1 = 1;
  bytes.replace(8, sizeof v1, reinterpret_cast<const char*>(&v1), sizeof v1);
  bytes.resize(bytes.size() - 16);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::unique_ptr<CostModel> loaded = MakeXGBoostModel(TestConfig());
  loaded->Load(path);
  std::filesystem::remove(path);
  std::vector<CostSample> probe = SyntheticSamples("t", 50, /*seed=*/25);
  EXPECT_EQ(loaded->Predict(Features(probe)), model->Predict(Features(probe)));
}

TEST(XGBoostModel, FactoryRejectsABadConfig) {
  const std::vector<std::function<void(XGBoostConfig&)>> breakers = {
      [](XGBoostConfig& c) { c.eta = 0; },
      [](XGBoostConfig& c) { c.max_depth = 0; },
      [](XGBoostConfig& c) { c.prior_max_depth = 0; },
      [](XGBoostConfig& c) { c.early_stopping_rounds = 0; },
      [](XGBoostConfig& c) { c.subsample = 0; },
      [](XGBoostConfig& c) { c.colsample_bytree = 1.5; },
      [](XGBoostConfig& c) { c.gap_weight_power = -1; },
  };
  for (size_t i = 0; i < breakers.size(); ++i) {
    XGBoostConfig config;
    breakers[i](config);
    EXPECT_THROW(MakeXGBoostModel(config), UserError) << "bad setting " << i;
  }
}

TEST(RandomModel, ScoresAreUniformAndItRoundTrips) {
  std::unique_ptr<CostModel> model = MakeRandomModel(/*seed=*/5);
  std::vector<CostSample> samples = SyntheticSamples("t", 20, /*seed=*/15);
  model->Update(samples);
  std::string path = TempPath("random_round_trip");
  model->Save(path);
  std::unique_ptr<CostModel> loaded = MakeRandomModel(/*seed=*/99);
  loaded->Load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(loaded->num_samples(), 20u);
  std::vector<double> scores = loaded->Predict(Features(samples));
  EXPECT_EQ(scores, MakeRandomModel(/*seed=*/5)->Predict(Features(samples)));
  for (double s : scores) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(s, 1.0);
  }
}

CostSample Timed(const std::string& task, double seconds) {
  CostSample s;
  s.task = task;
  s.seconds = seconds;
  return s;
}

TEST(PairwiseRankingAccuracy, CountsPairsOfOneTaskOrderedAsTheirTimes) {
  std::vector<CostSample> samples = {Timed("a", 1), Timed("a", 2), Timed("a", 3), Timed("b", 1),
                                     Timed("b", 9)};
  EXPECT_DOUBLE_EQ(PairwiseRankingAccuracy(samples, {3, 2, 1, 0, -1}), 1.0);
  EXPECT_DOUBLE_EQ(PairwiseRankingAccuracy(samples, {1, 2, 3, 1, 0}), 1.0 / 4);
  // Scores across tasks are never compared; a tie counts half.
  EXPECT_DOUBLE_EQ(PairwiseRankingAccuracy(samples, {3, 2, 1, 100, 100}), 3.5 / 4);
}

TEST(PairwiseRankingAccuracy, FailedRunsAreTheSlowestAndEqualTimesAreSkipped) {
  double inf = std::numeric_limits<double>::infinity();
  std::vector<CostSample> samples = {Timed("a", inf), Timed("a", 1), Timed("a", 1)};
  EXPECT_DOUBLE_EQ(PairwiseRankingAccuracy(samples, {0, 1, 2}), 1.0);
  EXPECT_DOUBLE_EQ(PairwiseRankingAccuracy({Timed("a", 1)}, {0}), 0.5);
}

}  // namespace
}  // namespace tirtune
