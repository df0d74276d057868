// The deterministic random engine of schedules: splitmix64 seeding a xoshiro256** generator, so a
// seed gives the same samples on every platform. Fork() derives an independent stream (used to
// give each search thread or each candidate its own generator).
#pragma once

#include <cstdint>
#include <vector>

namespace tirtune {

class RandomEngine {
 public:
  explicit RandomEngine(uint64_t seed = 1) { Seed(seed); }

  void Seed(uint64_t seed);
  uint64_t Next();
  /// Uniform integer in [lo, hi).
  int64_t UniformInt(int64_t lo, int64_t hi);
  /// Uniform double in [0, 1).
  double UniformReal();
  /// An index drawn with probability proportional to `weights` (non-negative, not all zero).
  int Categorical(const std::vector<double>& weights);
  /// A new engine whose stream is independent of this one's continuation.
  RandomEngine Fork();

 private:
  uint64_t s_[4];
};

}  // namespace tirtune
