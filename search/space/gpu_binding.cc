#include "gpu_binding.h"

#include <algorithm>

#include "block_analysis.h"

namespace tirtune {

bool IsBoundToThreads(Schedule& sch, BlockRV block) {
  for (LoopRV loop : sch.GetLoops(block)) {
    if (sch.Get(loop)->for_kind == ForKind::kThreadBinding) return true;
  }
  return false;
}

std::optional<LoopRV> FuseLeadingSpatialLoops(Schedule& sch, BlockRV block) {
  std::vector<LoopRV> loops = sch.GetLoops(block);
  size_t spatial = 0;
  while (spatial < loops.size() &&
         IterKindOfLoop(sch.Get(loops[spatial])) == LoopIterKind::kSpatial &&
         AsConstInt(sch.Get(loops[spatial])->extent) != nullptr) {
    ++spatial;
  }
  LoopRV outer;
  if (spatial == 0) {
    outer = loops.empty() ? sch.AddUnitLoop(block) : sch.AddUnitLoop(loops[0]);
  } else if (spatial == 1) {
    outer = loops[0];
  } else {
    outer = sch.Fuse(std::vector<LoopRV>(loops.begin(), loops.begin() + spatial));
  }
  if (AsConstInt(sch.Get(outer)->extent) == nullptr) return std::nullopt;
  return outer;
}

void BindBlocksAndThreads(Schedule& sch, LoopRV loop, SplitFactor threads) {
  std::vector<LoopRV> parts = sch.Split(loop, {std::monostate{}, threads});
  sch.Bind(parts[0], "blockIdx.x");
  sch.Bind(parts[1], "threadIdx.x");
}

std::vector<int64_t> UsefulThreadCounts(const std::vector<int64_t>& candidates, int64_t extent,
                                        int64_t max_threads) {
  std::vector<int64_t> out;
  for (int64_t c : candidates) {
    if (c <= max_threads && c < 2 * extent) out.push_back(c);
  }
  if (out.empty()) out.push_back(std::max<int64_t>(1, std::min(extent, max_threads)));
  return out;
}

}  // namespace tirtune
