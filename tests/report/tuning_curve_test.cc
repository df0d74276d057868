// Tuning curves: best so far with failures in between, and the trials and seconds to 90% / 95%
// of the final best.
#include "tirtune/report/tuning_curve.h"

#include <gtest/gtest.h>

#include "../database/test_records.h"

namespace tirtune::report {
namespace {

constexpr const char* kCpu = "llvm -mcpu=znver4 -num-cores=2";
constexpr const char* kOtherCpu = "llvm -mcpu=znver5";

Trial Ok(double elapsed, double throughput) { return Trial{elapsed, throughput}; }
Trial Failed(double elapsed) { return Trial{elapsed, std::nullopt}; }

TEST(BestSoFar, FailuresCountAsTrialsButNeverImproveTheBest) {
  std::vector<Trial> trials = {Failed(0), Ok(1, 10), Failed(2), Ok(3, 5), Ok(4, 20), Failed(5)};
  std::vector<std::optional<double>> best = BestSoFar(trials);
  EXPECT_EQ(best, (std::vector<std::optional<double>>{std::nullopt, 10, 10, 10, 20, 20}));
  EXPECT_EQ(FinalBest(trials), 20);
}

TEST(BestSoFar, NoSuccessfulTrialHasNoBest) {
  std::vector<Trial> trials = {Failed(0), Failed(1)};
  EXPECT_EQ(BestSoFar(trials), (std::vector<std::optional<double>>{std::nullopt, std::nullopt}));
  EXPECT_EQ(FinalBest(trials), std::nullopt);
  EXPECT_EQ(TrialsToReach(trials, 0.9), std::nullopt);
  EXPECT_EQ(SecondsToReach(trials, 0.9), std::nullopt);
  EXPECT_EQ(FinalBest({}), std::nullopt);
  EXPECT_EQ(TrialsToReach({}, 0.9), std::nullopt);
}

TEST(TrialsToReach, CountsTrialsUntilTheBestReachesTheShareOfTheFinalBest) {
  // Final best 100: 90 is reached by trial 4 (91), 95 by trial 5 (95), 100 by trial 7.
  std::vector<Trial> trials = {Ok(0, 10),  Failed(2),  Ok(5, 50),  Ok(9, 91),
                               Ok(14, 95), Failed(20), Ok(30, 100)};
  EXPECT_EQ(TrialsToReach(trials, 0.9), 4u);
  EXPECT_EQ(SecondsToReach(trials, 0.9), 9);
  EXPECT_EQ(TrialsToReach(trials, 0.95), 5u);
  EXPECT_EQ(SecondsToReach(trials, 0.95), 14);
  EXPECT_EQ(TrialsToReach(trials, 1.0), 7u);
  EXPECT_EQ(SecondsToReach(trials, 1.0), 30);
  EXPECT_EQ(TrialsToReach(trials, 0.0), 1u);
}

TEST(TrialsToReach, ASingleTrialReachesEverythingAtOnce) {
  std::vector<Trial> trials = {Ok(0, 3)};
  EXPECT_EQ(TrialsToReach(trials, 0.9), 1u);
  EXPECT_EQ(SecondsToReach(trials, 0.95), 0);
}

TEST(TrialsOnTarget, TakesTheTargetsRecordsInOrderWithThroughputAndElapsedTime) {
  using tirtune::testing::MakeRecord;
  std::vector<TuningRecord> records = {
      MakeRecord(1, kCpu, 1, {2.0}),                              // 1 GFLOP / 2 s
      MakeRecord(1, kOtherCpu, 2, {1.0}),                         // another target
      MakeRecord(1, kCpu, 3, {}, RecordStatus::kBuildError),      // failed
      MakeRecord(1, kCpu, 4, {0.5}, RecordStatus::kWrongResult),  // failed despite a time
      MakeRecord(1, kCpu, 5, {0.25}),
      MakeRecord(1, kCpu, 6, {0.0}),  // cannot be timed: no throughput
  };
  for (TuningRecord& r : records) r.median_secs = MedianOf(r.run_secs);
  records[0].created_at = 1000;
  records[2].created_at = 1004;
  records[3].created_at = 1002;  // the clock went back: time holds
  records[4].created_at = 1010;
  records[5].created_at = 1011;
  std::vector<Trial> trials = TrialsOnTarget(records, kCpu, /*work=*/1.0);
  ASSERT_EQ(trials.size(), 5u);
  EXPECT_EQ(trials[0].elapsed_s, 0);
  EXPECT_EQ(trials[0].throughput, 0.5);
  EXPECT_EQ(trials[1].elapsed_s, 4);
  EXPECT_EQ(trials[1].throughput, std::nullopt);
  EXPECT_EQ(trials[2].elapsed_s, 4);
  EXPECT_EQ(trials[2].throughput, std::nullopt);
  EXPECT_EQ(trials[3].elapsed_s, 10);
  EXPECT_EQ(trials[3].throughput, 4.0);
  EXPECT_EQ(trials[4].throughput, std::nullopt);
  EXPECT_EQ(TrialsToReach(trials, 0.9), 4u);
  EXPECT_TRUE(TrialsOnTarget(records, "llvm -mcpu=none", 1.0).empty());
}

}  // namespace
}  // namespace tirtune::report
