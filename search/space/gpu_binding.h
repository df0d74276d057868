// What the CUDA rules and postprocessors share about thread bindings: whether a block already
// runs on threads, and binding a block's leading spatial loops to blockIdx.x x threadIdx.x.
#pragma once

#include <optional>
#include <variant>

#include "tirtune/schedule/schedule.h"

namespace tirtune {

/// A loop above `block` (up to its scope) is bound to a thread axis.
bool IsBoundToThreads(Schedule& sch, BlockRV block);

/// The block's leading loops that only spatial iterators use, fused into one loop (a unit loop
/// added when there is none); nullopt when that loop's extent is not constant.
std::optional<LoopRV> FuseLeadingSpatialLoops(Schedule& sch, BlockRV block);

/// Splits `loop` into (blocks, `threads` threads) and binds them to blockIdx.x and threadIdx.x.
/// Throws ScheduleError as the primitives do.
void BindBlocksAndThreads(Schedule& sch, LoopRV loop, SplitFactor threads);

/// The thread counts among `candidates` worth sampling for a loop of `extent` iterations: those
/// within `max_threads` and below twice the extent; the extent itself (within `max_threads`)
/// when none is.
std::vector<int64_t> UsefulThreadCounts(const std::vector<int64_t>& candidates, int64_t extent,
                                        int64_t max_threads);

}  // namespace tirtune
