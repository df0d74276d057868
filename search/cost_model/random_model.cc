// RandomModel: uniform scores in [0, 1), the baseline a learned model must beat. It learns
// nothing but keeps its samples, so Save/Load behave like every other model's.
#include <random>

#include "model_file.h"
#include "tirtune/search/cost_model.h"

namespace tirtune {
namespace {

constexpr const char* kModelName = "random";

class RandomModel : public CostModel {
 public:
  explicit RandomModel(uint64_t seed) : seed_(seed), rng_(seed) {}

  std::string name() const override { return kModelName; }
  size_t num_samples() const override { return samples_.size(); }

  void Update(const std::vector<CostSample>& samples) override {
    samples_.insert(samples_.end(), samples.begin(), samples.end());
  }

  void Pretrain(const std::vector<CostSample>&) override {}

  std::vector<double> Predict(const std::vector<const FeatureMatrix*>& candidates) override {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<double> scores(candidates.size());
    for (double& s : scores) s = uniform(rng_);
    return scores;
  }

  void Save(const std::string& path) const override {
    cost_model_file::Writer file(kModelName);
    file.U64(seed_);
    file.Samples(samples_);
    file.Commit(path);
  }

  void Load(const std::string& path) override {
    cost_model_file::Reader file(path, kModelName);
    uint64_t seed = file.U64();
    std::vector<CostSample> samples = file.Samples();
    file.ExpectEnd();
    seed_ = seed;
    rng_.seed(seed);
    samples_ = std::move(samples);
  }

 private:
  uint64_t seed_;
  std::mt19937_64 rng_;
  std::vector<CostSample> samples_;
};

}  // namespace

std::unique_ptr<CostModel> MakeRandomModel(uint64_t seed) {
  return std::make_unique<RandomModel>(seed);
}

}  // namespace tirtune
