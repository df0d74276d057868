// One random schedule step: a random primitive with random arguments on a random block or loop of
// the current function. Shared by the property tests that drive schedules at random.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tirtune/schedule/schedule.h"

namespace tirtune::testing {

template <typename T>
const T& Pick(RandomEngine& rng, const std::vector<T>& v) {
  return v[rng.UniformInt(0, static_cast<int64_t>(v.size()))];
}

/// One random primitive call on a random block/loop of the current function.
inline void RandomStep(Schedule& sch, RandomEngine& rng) {
  std::vector<const BlockRealizeNode*> all = sch.state().AllBlocks();
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : all) {
    if (b->block->name != "root") names.push_back(b->block->name);
  }
  if (names.empty()) return;
  BlockRV block = sch.GetBlock(Pick(rng, names));
  std::vector<LoopRV> loops = sch.GetLoops(block);
  auto any_loop = [&]() -> std::optional<LoopRV> {
    // A loop of any block, so that compute_at and friends also see invalid targets.
    BlockRV other = sch.GetBlock(Pick(rng, names));
    std::vector<LoopRV> l = sch.GetLoops(other);
    if (l.empty()) return std::nullopt;
    return Pick(rng, l);
  };
  StorageScope scopes[] = {StorageScope::kGlobal, StorageScope::kLocal, StorageScope::kShared};
  int op = static_cast<int>(rng.UniformInt(0, 20));
  switch (op) {
    case 0:
    case 1: {  // split: perfect tiles, guarded tiles, or a guarded split in two
      if (loops.empty()) return;
      LoopRV loop = Pick(rng, loops);
      int64_t how = rng.UniformInt(0, 3);
      if (how < 2) {
        int n = static_cast<int>(rng.UniformInt(2, 4));
        auto tiles =
            how == 0 ? sch.SamplePerfectTile(loop, n, 16) : sch.SampleGuardedTile(loop, n, 16);
        std::vector<SplitFactor> f(tiles.begin(), tiles.end());
        sch.Split(loop, f);
      } else {
        sch.Split(loop, {std::monostate{}, rng.UniformInt(1, 6)});
      }
      return;
    }
    case 2: {  // fuse a run of consecutive loops
      if (loops.size() < 2) return;
      int64_t a = rng.UniformInt(0, static_cast<int64_t>(loops.size()) - 1);
      int64_t b = rng.UniformInt(a + 1, static_cast<int64_t>(loops.size()) + 1);
      sch.Fuse(std::vector<LoopRV>(loops.begin() + a, loops.begin() + b));
      return;
    }
    case 3: {  // reorder a random subset
      if (loops.size() < 2) return;
      std::vector<LoopRV> subset;
      for (LoopRV l : loops) {
        if (rng.UniformInt(0, 2)) subset.push_back(l);
      }
      for (size_t i = subset.size(); i > 1; --i) {
        std::swap(subset[i - 1], subset[rng.UniformInt(0, static_cast<int64_t>(i))]);
      }
      sch.Reorder(subset);
      return;
    }
    case 4:
      if (!loops.empty()) sch.Parallel(Pick(rng, loops));
      return;
    case 5:
      if (!loops.empty()) sch.Vectorize(Pick(rng, loops));
      return;
    case 6:
      if (!loops.empty()) sch.Unroll(Pick(rng, loops));
      return;
    case 7:
      if (auto l = any_loop()) sch.ComputeAt(block, *l, rng.UniformInt(0, 2) == 0);
      return;
    case 8:
      if (auto l = any_loop()) sch.ReverseComputeAt(block, *l, rng.UniformInt(0, 2) == 0);
      return;
    case 9: {
      LoopRV where = sch.SampleComputeLocation(block);
      sch.ComputeAt(block, where);
      return;
    }
    case 10:
      sch.ComputeInline(block);
      return;
    case 11:
      sch.ReverseComputeInline(block);
      return;
    case 12: {
      size_t n = sch.Get(block)->block->reads.size();
      if (n > 0) {
        sch.CacheRead(block, static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(n))),
                      scopes[rng.UniformInt(0, 3)]);
      }
      return;
    }
    case 13: {
      size_t n = sch.Get(block)->block->writes.size();
      if (n > 0) {
        sch.CacheWrite(block, static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(n))),
                       scopes[rng.UniformInt(0, 3)]);
      }
      return;
    }
    case 14:
      if (!loops.empty()) sch.DecomposeReduction(block, Pick(rng, loops));
      return;
    case 15:
      if (!loops.empty()) sch.RFactor(Pick(rng, loops), 0);
      return;
    case 16:
      sch.AddUnitLoop(block);
      return;
    case 17: {
      BlockRV other = sch.GetBlock(Pick(rng, names));
      sch.FuseReductionEpilogue(block, other);
      return;
    }
    case 18:
      if (!loops.empty()) sch.Annotate(Pick(rng, loops), "pragma_auto_unroll_max_step", 16);
      return;
    case 19: {  // pad every iterator to a multiple of 1 to 8
      std::vector<int64_t> padding(sch.Get(block)->block->iter_vars.size());
      for (int64_t& p : padding) p = rng.UniformInt(1, 9);
      sch.PadEinsum(block, padding);
      return;
    }
  }
}

}  // namespace tirtune::testing
