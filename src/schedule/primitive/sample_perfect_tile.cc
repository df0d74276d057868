// sample_perfect_tile: samples n factors whose product is exactly a loop's extent, with the
// innermost factor at most `max_innermost_factor` (≤ 0: no limit). The decision is the list of
// factors. Each prime power of the extent is spread over the n slots by a uniformly drawn
// composition of its exponent (stars and bars).
//
// sample_guarded_tile: the same for extents that do not factor well (1023 = 3·11·31, 197 prime):
// the factors tile the extent rounded up to a multiple of 1 (a perfect tiling), 4, 8, 16, 32 or
// 64 (one of the distinct roundings that add at most 15%, uniformly), and the outermost factor is
// then ceil(extent / product of the others), so a split by them guards at most one partial tile per
// outer iteration (Split's predicate; UnswitchTileGuards gives the full tiles a copy without it).
// A given decision's outermost factor is recomputed the same way: mutators and transfer change
// the inner factors only, and the recorded decision holds the recomputed one.
//
// Preconditions (both): 1. n ≥ 1; 2. the loop's extent is constant; 3. a decision has n
// positive factors, the innermost within the limit; 4. (perfect) their product is the extent;
// (guarded) the iterations the guard masks are at most the extent or 65,536, as for Split.
#include <fmt/format.h>

#include <algorithm>

#include "loop_checks.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {

bool GuardedRoundingIsSmall(int64_t extent, int64_t padded) {
  return padded >= extent && padded - extent <= extent * 3 / 20;
}

namespace {

std::vector<std::pair<int64_t, int>> PrimeFactors(int64_t n) {
  std::vector<std::pair<int64_t, int>> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    int e = 0;
    while (n % p == 0) {
      n /= p;
      ++e;
    }
    if (e > 0) out.emplace_back(p, e);
  }
  if (n > 1) out.emplace_back(n, 1);
  return out;
}

// A uniformly drawn composition of `total` into `parts` non-negative parts.
std::vector<int> SampleComposition(RandomEngine& rng, int total, int parts) {
  // Choose parts-1 bar positions among total+parts-1 slots.
  int slots = total + parts - 1;
  std::vector<int> positions(slots);
  for (int i = 0; i < slots; ++i) positions[i] = i;
  for (int i = 0; i < parts - 1; ++i) {
    int j = static_cast<int>(rng.UniformInt(i, slots));
    std::swap(positions[i], positions[j]);
  }
  std::vector<int> bars(positions.begin(), positions.begin() + (parts - 1));
  std::sort(bars.begin(), bars.end());
  std::vector<int> out;
  int prev = -1;
  for (int b : bars) {
    out.push_back(b - prev - 1);
    prev = b;
  }
  out.push_back(slots - prev - 1);
  return out;
}

std::vector<int64_t> SampleTile(RandomEngine& rng, int64_t extent, int n, int max_innermost) {
  auto primes = PrimeFactors(extent);
  for (int attempt = 0;; ++attempt) {
    std::vector<int64_t> factors(n, 1);
    for (const auto& [p, e] : primes) {
      std::vector<int> parts = SampleComposition(rng, e, n);
      for (int k = 0; k < n; ++k) {
        for (int r = 0; r < parts[k]; ++r) factors[k] *= p;
      }
    }
    if (max_innermost <= 0 || factors.back() <= max_innermost) return factors;
    if (attempt >= 64) {
      // Rare after many rejections (e.g. a large prime extent): move the innermost factor out.
      factors[0] *= factors.back();
      factors.back() = 1;
      return factors;
    }
  }
}

// The extents a guarded tiling may tile: the extent and its distinct roundings up to multiples
// of 4 to 64 that GuardedRoundingIsSmall allows (1023 -> 1024); a partial tile has no full-tile
// copy.
std::vector<int64_t> PaddedExtents(int64_t extent) {
  std::vector<int64_t> out{extent};
  for (int64_t m : {4, 8, 16, 32, 64}) {
    int64_t padded = (extent + m - 1) / m * m;
    if (!GuardedRoundingIsSmall(extent, padded)) continue;
    if (std::find(out.begin(), out.end(), padded) == out.end()) out.push_back(padded);
  }
  return out;
}

void CheckTileCount(const ForNode* loop, int n, const char* primitive) {
  if (n < 1) {
    throw SimpleScheduleError("InvalidTileCountError",
                              fmt::format("{} of loop '{}' into {} parts: at least 1", primitive,
                                          loop->loop_var->name, n),
                              {loop});
  }
}

// The factors as expression variables, recorded as the instruction's decision.
std::vector<ExprRV> RecordTiles(Schedule& sch, const char* kind, LoopRV loop, int n,
                                int max_innermost_factor, const std::vector<int64_t>& factors) {
  std::vector<ExprRV> out;
  std::vector<RVRef> outputs;
  for (int64_t f : factors) {
    out.push_back(sch.NewExprRV(f));
    outputs.push_back(out.back().ref());
  }
  sch.Record(kind, {loop.ref()}, {{"n", n}, {"max_innermost_factor", max_innermost_factor}},
             outputs, factors);
  return out;
}

}  // namespace

std::vector<ExprRV> Schedule::SamplePerfectTile(LoopRV loop_rv, int n, int max_innermost_factor,
                                                std::optional<std::vector<int64_t>> decision) {
  const ForNode* loop = Get(loop_rv);
  CheckTileCount(loop, n, "sample_perfect_tile");
  int64_t extent = ConstExtentOf(loop, "sample_perfect_tile");
  std::vector<int64_t> factors;
  if (decision.has_value()) {
    factors = *decision;
    // The product is checked for overflow: [2^62 + 1, 128] must not pass as a tiling of 128.
    int64_t product = 1;
    bool positive = true;
    for (int64_t f : factors) {
      positive &= f >= 1;
      if (__builtin_mul_overflow(product, std::max<int64_t>(f, 1), &product)) positive = false;
    }
    bool innermost_ok = max_innermost_factor <= 0 || factors.empty() ||
                        factors.back() <= max_innermost_factor;
    if (static_cast<int>(factors.size()) != n || !positive || product != extent || !innermost_ok) {
      throw SimpleScheduleError(
          "InvalidDecisionError",
          fmt::format("decision {} is not a perfect {}-way tiling of loop '{}' (extent {}, "
                      "innermost at most {})",
                      nlohmann::json(factors).dump(), n, loop->loop_var->name, extent,
                      max_innermost_factor),
          {loop});
    }
  } else {
    factors = SampleTile(rng_, extent, n, max_innermost_factor);
  }
  return RecordTiles(*this, "SamplePerfectTile", loop_rv, n, max_innermost_factor, factors);
}

std::vector<ExprRV> Schedule::SampleGuardedTile(LoopRV loop_rv, int n, int max_innermost_factor,
                                                std::optional<std::vector<int64_t>> decision) {
  const ForNode* loop = Get(loop_rv);
  CheckTileCount(loop, n, "sample_guarded_tile");
  int64_t extent = ConstExtentOf(loop, "sample_guarded_tile");
  std::vector<int64_t> factors;
  if (decision.has_value()) {
    factors = *decision;
  } else {
    std::vector<int64_t> padded = PaddedExtents(std::max<int64_t>(extent, 1));
    int64_t tiled = padded[rng_.UniformInt(0, static_cast<int64_t>(padded.size()))];
    factors = SampleTile(rng_, tiled, n, max_innermost_factor);
  }
  // The outermost factor covers the extent; the inner ones are as given.
  int64_t inner = 1;
  bool valid = static_cast<int>(factors.size()) == n;
  for (size_t k = 1; valid && k < factors.size(); ++k) {
    valid = factors[k] >= 1 && !__builtin_mul_overflow(inner, factors[k], &inner);
  }
  valid = valid && (max_innermost_factor <= 0 || n == 1 || factors.back() <= max_innermost_factor);
  if (valid) {
    factors[0] = std::max<int64_t>((extent + inner - 1) / inner, 1);
    int64_t covered = 0;
    valid = !__builtin_mul_overflow(factors[0], inner, &covered) &&
            covered - extent <= std::max<int64_t>(extent, kMaxMaskedIterations);
  }
  if (!valid) {
    throw SimpleScheduleError(
        "InvalidDecisionError",
        fmt::format("decision {} is not a guarded {}-way tiling of loop '{}' (extent {}, "
                    "innermost at most {}, at most {} masked iterations)",
                    nlohmann::json(factors).dump(), n, loop->loop_var->name, extent,
                    max_innermost_factor, std::max<int64_t>(extent, kMaxMaskedIterations)),
        {loop});
  }
  return RecordTiles(*this, "SampleGuardedTile", loop_rv, n, max_innermost_factor, factors);
}

}  // namespace tirtune
