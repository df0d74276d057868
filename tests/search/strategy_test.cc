// The search strategies with test doubles (search_doubles.h): nothing is compiled or measured.
// Checked: no candidate is proposed twice or after it was measured (dedup, warm start), the
// strategies stop when the space is exhausted, and epsilon-greedy picks the best predicted
// candidates plus the configured share of random ones.
#include "tirtune/search/strategy.h"

#include <gtest/gtest.h>

#include <set>

#include "search_doubles.h"

namespace tirtune {
namespace {

using testing::OuterFactors;
using testing::ScoreByFactors;
using testing::SmallGemm;
using testing::SplitFeatures;
using testing::TwoSplitsSpace;

EvolutionaryConfig SmallConfig() {
  EvolutionaryConfig c;
  c.population_size = 32;
  c.init_min_unmeasured = 8;
  c.num_threads = 1;
  return c;
}

std::set<std::pair<int64_t, int64_t>> DrainAll(SearchStrategy& s, int batch, int* batches) {
  std::set<std::pair<int64_t, int64_t>> seen;
  std::set<std::string> keys;
  for (*batches = 0; *batches < 100; ++*batches) {
    std::vector<Schedule> c = s.GenerateMeasureCandidates(batch);
    if (c.empty()) break;
    std::vector<double> secs;
    for (const Schedule& sch : c) {
      EXPECT_TRUE(keys.insert(CandidateKey(sch)).second) << "proposed twice";
      EXPECT_TRUE(seen.insert(OuterFactors(sch)).second);
      secs.push_back(1.0);
    }
    s.NotifyRunnerResults(c, secs);
  }
  return seen;
}

TEST(EvolutionarySearch, ProposesEveryCandidateOnceThenReportsExhaustion) {
  SpaceGenerator space = TwoSplitsSpace();
  ScoreByFactors model([](int64_t i, int64_t j) { return static_cast<double>(i * 10 + j); });
  auto search = MakeEvolutionarySearch(&space, &model, SplitFeatures(), SmallConfig(), 5);
  PrimFunc f = SmallGemm();
  search->PreTuning(f, space.GenerateDesignSpaces(f, 1), {}, {});
  int batches = 0;
  std::set<std::pair<int64_t, int64_t>> seen = DrainAll(*search, 5, &batches);
  EXPECT_EQ(seen.size(), 16u);  // the whole space, each once
  EXPECT_LT(batches, 100);
  EXPECT_TRUE(search->GenerateMeasureCandidates(5).empty());
}

TEST(EvolutionarySearch, NeverProposesWhatTheDatabaseAlreadyMeasured) {
  SpaceGenerator space = TwoSplitsSpace();
  ScoreByFactors model([](int64_t i, int64_t j) { return static_cast<double>(i + j); });
  PrimFunc f = SmallGemm();
  std::vector<Schedule> spaces = space.GenerateDesignSpaces(f, 1);
  // "Measured" earlier: every tiling but (2, 4).
  std::unordered_set<std::string> measured;
  std::vector<std::pair<Schedule, double>> warm;
  for (const auto& si : testing::SplitsOf8()) {
    for (const auto& sj : testing::SplitsOf8()) {
      if (si[0] == 2 && sj[0] == 4) continue;
      Schedule sch(f);
      Trace t = spaces[0].trace();
      std::map<size_t, nlohmann::json> decisions;
      int n = 0;
      for (size_t k = 0; k < t.insts().size(); ++k) {
        if (t.insts()[k].kind->name == "SamplePerfectTile") decisions[k] = n++ == 0 ? si : sj;
      }
      t.ApplyTo(sch, decisions);
      measured.insert(CandidateKey(sch));
      if (si[0] == 8) warm.emplace_back(sch, 1e-3 * static_cast<double>(sj[0]));
    }
  }
  ASSERT_EQ(measured.size(), 15u);
  auto search = MakeEvolutionarySearch(&space, &model, SplitFeatures(), SmallConfig(), 9);
  search->PreTuning(f, spaces, warm, measured);
  std::vector<Schedule> batch = search->GenerateMeasureCandidates(8);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(OuterFactors(batch[0]), std::make_pair(int64_t{2}, int64_t{4}));
  EXPECT_TRUE(search->GenerateMeasureCandidates(8).empty());
}

TEST(EvolutionarySearch, GreedyPicksAreTheBestPredicted) {
  SpaceGenerator space = TwoSplitsSpace();
  // Distinct scores 10 * i + j: the best three are (8,8), (8,4) and (8,2).
  ScoreByFactors model([](int64_t i, int64_t j) { return static_cast<double>(i * 10 + j); });
  EvolutionaryConfig config = SmallConfig();
  config.eps_greedy = 0;
  auto search = MakeEvolutionarySearch(&space, &model, SplitFeatures(), config, 3);
  PrimFunc f = SmallGemm();
  search->PreTuning(f, space.GenerateDesignSpaces(f, 1), {}, {});
  std::vector<Schedule> batch = search->GenerateMeasureCandidates(3);
  ASSERT_EQ(batch.size(), 3u);
  std::set<std::pair<int64_t, int64_t>> got;
  for (const Schedule& s : batch) got.insert(OuterFactors(s));
  EXPECT_EQ(got, (std::set<std::pair<int64_t, int64_t>>{{8, 8}, {8, 4}, {8, 2}}));
}

TEST(EvolutionarySearch, EpsilonGreedyMixesInRandomFreshSamples) {
  SpaceGenerator space = TwoSplitsSpace();
  ScoreByFactors model([](int64_t i, int64_t j) { return static_cast<double>(i * 10 + j); });
  EvolutionaryConfig config = SmallConfig();
  config.eps_greedy = 0.5;
  const std::set<std::pair<int64_t, int64_t>> top4 = {{8, 8}, {8, 4}, {8, 2}, {8, 1}};
  int outside_top = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    auto search = MakeEvolutionarySearch(&space, &model, SplitFeatures(), config, seed);
    PrimFunc f = SmallGemm();
    search->PreTuning(f, space.GenerateDesignSpaces(f, seed), {}, {});
    std::vector<Schedule> batch = search->GenerateMeasureCandidates(4);
    ASSERT_EQ(batch.size(), 4u);
    std::set<std::pair<int64_t, int64_t>> got;
    for (const Schedule& s : batch) got.insert(OuterFactors(s));
    EXPECT_EQ(got.size(), 4u);
    // The greedy half is always there: the best predicted (8,8) is picked unless a random
    // pick took it first.
    EXPECT_TRUE(got.count({8, 8})) << "seed " << seed;
    for (const auto& g : got) outside_top += top4.count(g) ? 0 : 1;
  }
  // Two of every four are random among 16: most batches hold something a greedy pick never would.
  EXPECT_GT(outside_top, 5);
}

TEST(ReplayTrace, ProposesEveryCandidateOnceThenReportsExhaustion) {
  SpaceGenerator space = TwoSplitsSpace();
  auto search = MakeReplayTrace(&space, 4);
  PrimFunc f = SmallGemm();
  search->PreTuning(f, space.GenerateDesignSpaces(f, 1), {}, {});
  int batches = 0;
  std::set<std::pair<int64_t, int64_t>> seen = DrainAll(*search, 6, &batches);
  EXPECT_EQ(seen.size(), 16u);
  EXPECT_TRUE(search->GenerateMeasureCandidates(6).empty());
}

}  // namespace
}  // namespace tirtune
