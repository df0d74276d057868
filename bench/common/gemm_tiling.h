// The hand-written GEMM schedule the benchmarks share: parallel column panels, an
// tile_i x tile_j register tile written back through a local cache, the reduction init hoisted
// out, rows unrolled and columns vectorized (loop order j0 / i0 / k / i1 / j1).
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "tirtune/schedule/schedule.h"

namespace tirtune::bench {

inline PrimFunc ScheduleGemm(const PrimFunc& func, int64_t tile_i, int64_t tile_j) {
  Schedule sch(func);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, tile_i});
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, tile_j});
  sch.Reorder({j[0], i[0], loops[2], i[1], j[1]});
  BlockRV write_back = sch.CacheWrite(c, 0, StorageScope::kLocal);
  sch.ReverseComputeAt(write_back, i[0]);
  sch.DecomposeReduction(c, loops[2]);
  sch.Parallel(j[0]);
  sch.Unroll(i[1]);
  sch.Vectorize(j[1]);
  return sch.func();
}

}  // namespace tirtune::bench
