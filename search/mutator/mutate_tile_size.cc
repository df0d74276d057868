// MutateTileSize: picks one SamplePerfectTile or SampleGuardedTile decision (with at least two
// factors and something to move) and moves a divisor d of one factor to another factor:
// tiles[x] /= d, tiles[y] *= d. A perfect tiling's product stays the loop's extent; a guarded
// tiling's outermost factor is recomputed when the trace is replayed. A move into the innermost
// factor keeps it within the instruction's max_innermost_factor.
//
// Before: SamplePerfectTile(l, n=4, max_innermost_factor=64)  # decision [4, 2, 8, 8]
// After:                                                      # decision [2, 2, 8, 16]
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

// Divisors of n greater than 1, ascending.
std::vector<int64_t> DivisorsAboveOne(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 2; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

class MutateTileSize : public Mutator {
 public:
  std::string name() const override { return "MutateTileSize"; }

  std::optional<Trace> Apply(const PrimFunc&, const Trace& input, RandomEngine& rng) override {
    Trace trace = input.Simplified(/*remove_postproc=*/true);
    // Step 1. The tile decisions that can change.
    std::vector<size_t> candidates;
    for (size_t i = 0; i < trace.insts().size(); ++i) {
      const Instruction& inst = trace.insts()[i];
      const std::string& kind = inst.kind->name;
      if ((kind != "SamplePerfectTile" && kind != "SampleGuardedTile") ||
          !inst.decision.is_array() || inst.decision.size() < 2) {
        continue;
      }
      for (const nlohmann::json& f : inst.decision) {
        if (f.get<int64_t>() > 1) {
          candidates.push_back(i);
          break;
        }
      }
    }
    if (candidates.empty()) return std::nullopt;
    // Step 2. A source factor, a target factor and a divisor to move; a few tries, since a move
    // into the innermost factor may exceed its limit.
    const size_t index = candidates[rng.UniformInt(0, static_cast<int64_t>(candidates.size()))];
    const Instruction& inst = trace.insts()[index];
    std::vector<int64_t> tiles = inst.decision.get<std::vector<int64_t>>();
    const int64_t max_innermost = inst.attrs.at("max_innermost_factor").get<int64_t>();
    const int64_t n = static_cast<int64_t>(tiles.size());
    for (int attempt = 0; attempt < 16; ++attempt) {
      int64_t x = rng.UniformInt(0, n);
      if (tiles[x] <= 1) continue;
      int64_t y = rng.UniformInt(0, n - 1);
      if (y >= x) ++y;
      std::vector<int64_t> divisors = DivisorsAboveOne(tiles[x]);
      if (y == n - 1 && max_innermost > 0) {
        std::erase_if(divisors, [&](int64_t d) { return tiles[y] * d > max_innermost; });
      }
      if (divisors.empty()) continue;
      int64_t d = divisors[rng.UniformInt(0, static_cast<int64_t>(divisors.size()))];
      tiles[x] /= d;
      tiles[y] *= d;
      return trace.WithDecision(index, tiles);
    }
    return std::nullopt;
  }
};

}  // namespace

std::shared_ptr<Mutator> MakeMutateTileSize() { return std::make_shared<MutateTileSize>(); }

}  // namespace tirtune
