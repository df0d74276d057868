// Test doubles for the search loop: a design space of 16 GEMM tilings (two sampled 2-way splits
// of an 8×8×8 GEMM), a mutator that changes one split, features that expose the split decisions,
// and a cost model that scores what the test tells it to. Nothing is compiled or measured.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/search/cost_model.h"
#include "tirtune/search/space.h"
#include "tirtune/search/strategy.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::testing {

inline const std::vector<std::vector<int64_t>>& SplitsOf8() {
  static const std::vector<std::vector<int64_t>> all = {{1, 8}, {2, 4}, {4, 2}, {8, 1}};
  return all;
}

// Splits loops i and j of block C, each with a sampled perfect tile of 2 factors.
class TwoSplitsRule : public ScheduleRule {
 public:
  std::string name() const override { return "two_splits"; }
  std::vector<Schedule> Apply(const Schedule& input, BlockRV block) override {
    Schedule sch = input;
    if (sch.BlockName(block) != "C") return {sch};
    std::vector<LoopRV> loops = sch.GetLoops(block);
    for (int axis = 0; axis < 2; ++axis) {
      std::vector<ExprRV> f = sch.SamplePerfectTile(loops[axis], 2, 8);
      sch.Split(loops[axis], {f[0], f[1]});
    }
    return {sch};
  }
};

// Replaces the decision of one SamplePerfectTile by another split of 8.
class ChangeOneSplit : public Mutator {
 public:
  std::string name() const override { return "change_one_split"; }
  std::optional<Trace> Apply(const PrimFunc&, const Trace& trace, RandomEngine& rng) override {
    std::vector<size_t> samples;
    for (size_t i = 0; i < trace.insts().size(); ++i) {
      if (trace.insts()[i].kind->name == "SamplePerfectTile") samples.push_back(i);
    }
    if (samples.empty()) return std::nullopt;
    size_t at = samples[rng.UniformInt(0, static_cast<int64_t>(samples.size()))];
    const auto& splits = SplitsOf8();
    return trace.WithDecision(at, splits[rng.UniformInt(0, static_cast<int64_t>(splits.size()))]);
  }
};

inline SpaceGenerator TwoSplitsSpace() {
  return SpaceGenerator({std::make_shared<TwoSplitsRule>()}, {},
                        {MutatorWithProb{std::make_shared<ChangeOneSplit>(), 1.0}});
}

inline PrimFunc SmallGemm() { return MakeWorkload("gemm:8,8,8").func; }

// The outer factors of the two splits, read from the schedule's trace.
inline std::pair<int64_t, int64_t> OuterFactors(const Schedule& sch) {
  std::vector<int64_t> outer;
  for (const Instruction& inst : sch.trace().insts()) {
    if (inst.kind->name == "SamplePerfectTile") outer.push_back(inst.decision[0].get<int64_t>());
  }
  return {outer.at(0), outer.at(1)};
}

// One row per candidate: [outer_i, outer_j, 0, ...].
inline FeatureFn SplitFeatures() {
  return [](const std::vector<Schedule>& candidates) {
    std::vector<FeatureMatrix> out;
    for (const Schedule& s : candidates) {
      FeatureMatrix m;
      m.rows = 1;
      m.data.assign(FeatureMatrix::kNumFeatures, 0.0f);
      auto [i, j] = OuterFactors(s);
      m.data[0] = static_cast<float>(i);
      m.data[1] = static_cast<float>(j);
      out.push_back(std::move(m));
    }
    return out;
  };
}

// Scores a candidate by a function of its outer factors.
class ScoreByFactors : public CostModel {
 public:
  explicit ScoreByFactors(std::function<double(int64_t, int64_t)> score)
      : score_(std::move(score)) {}
  std::string name() const override { return "score_by_factors"; }
  void Update(const std::vector<CostSample>& samples) override { updates_ += samples.size(); }
  void Pretrain(const std::vector<CostSample>&) override {}
  std::vector<double> Predict(const std::vector<const FeatureMatrix*>& candidates) override {
    std::vector<double> scores;
    for (const FeatureMatrix* f : candidates) {
      scores.push_back(f->rows == 0 ? 0
                                    : score_(static_cast<int64_t>(f->data[0]),
                                             static_cast<int64_t>(f->data[1])));
    }
    return scores;
  }
  void Save(const std::string&) const override {}
  void Load(const std::string&) override {}
  size_t num_samples() const override { return updates_; }

 private:
  std::function<double(int64_t, int64_t)> score_;
  size_t updates_ = 0;
};

}  // namespace tirtune::testing
