// xoshiro256** seeded through splitmix64 (both public-domain algorithms by Vigna and Blackman).
#include "tirtune/schedule/random.h"

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

uint64_t SplitMix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

void RandomEngine::Seed(uint64_t seed) {
  for (uint64_t& s : s_) s = SplitMix64(&seed);
}

uint64_t RandomEngine::Next() {
  uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

int64_t RandomEngine::UniformInt(int64_t lo, int64_t hi) {
  TT_ICHECK(lo < hi, "empty range [{}, {})", lo, hi);
  uint64_t span = static_cast<uint64_t>(hi - lo);
  // Rejection sampling removes the modulo bias.
  uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return lo + static_cast<int64_t>(x % span);
}

double RandomEngine::UniformReal() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

int RandomEngine::Categorical(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) {
    TT_ICHECK(w >= 0, "negative weight {}", w);
    total += w;
  }
  TT_ICHECK(total > 0, "all weights are zero");
  double r = UniformReal() * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (r < weights[i]) return static_cast<int>(i);
    r -= weights[i];
  }
  // Rounding left r at the top edge: return the last index with positive weight.
  for (size_t i = weights.size(); i-- > 0;) {
    if (weights[i] > 0) return static_cast<int>(i);
  }
  TT_UNREACHABLE();
}

RandomEngine RandomEngine::Fork() { return RandomEngine(Next() ^ 0x5851f42d4c957f2dULL); }

}  // namespace tirtune
