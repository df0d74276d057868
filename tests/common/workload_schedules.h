// A handful of typical schedules (tiling, parallel, vectorized, unrolled, compute_at fusion,
// cache stages, fuse_reduction_epilogue, a GEMM-like CPU schedule) that apply to any workload of
// the operator library as far as their steps allow: a step that does not apply is skipped. Shared
// by the lowering and code generation tests.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tirtune/schedule/schedule.h"

namespace tirtune::testing {

// Runs one schedule step; a step that does not apply to this workload is skipped.
template <typename Fn>
inline void Try(Fn&& step) {
  try {
    step();
  } catch (const ScheduleError&) {
  }
}

// The block doing the main work: the non-root block with the most loops (the last such).
inline std::optional<BlockRV> MainBlock(Schedule& sch) {
  std::optional<BlockRV> best;
  size_t best_loops = 0;
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) {
    if (b->block->name == "root") continue;
    BlockRV rv = sch.GetBlock(b->block->name);
    size_t n = sch.GetLoops(rv).size();
    if (!best || n >= best_loops) {
      best = rv;
      best_loops = n;
    }
  }
  return best;
}

// Splits the innermost loop that accepts it by `factor` (0: the largest of 8, 4, 2 that divides
// its extent), moves the inner part innermost and vectorizes it. The primitive rejects
// reduction loops; the next loop outwards is tried then.
inline void VectorizeInnermost(Schedule& sch, BlockRV block, int64_t factor) {
  std::vector<LoopRV> loops = sch.GetLoops(block);
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    try {
      int64_t f = factor;
      if (f == 0) {
        const int64_t* extent = AsConstInt(sch.Get(*it)->extent);
        if (extent == nullptr) continue;
        for (int64_t candidate : {8, 4, 2}) {
          if (f == 0 && *extent % candidate == 0) f = candidate;
        }
        if (f == 0) continue;
      }
      std::vector<LoopRV> parts = sch.Split(*it, {std::monostate{}, f});
      LoopRV innermost = sch.GetLoops(block).back();
      if (sch.Get(innermost) != sch.Get(parts[1])) sch.Reorder({innermost, parts[1]});
      sch.Vectorize(parts[1]);
      return;
    } catch (const ScheduleError&) {
    }
  }
}

// Tiles the two outermost loops by 4 and 2: i0, j0, i1, j1.
inline void Tile(Schedule& sch, BlockRV block) {
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (loops.size() < 2) return;
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, int64_t{2}});
  sch.Reorder({i[0], j[0], i[1], j[1]});
}

struct NamedSchedule {
  const char* name;
  std::function<void(Schedule&)> apply;
};

inline const std::vector<NamedSchedule>& Schedules() {
  static const std::vector<NamedSchedule> all = {
      {"unscheduled", [](Schedule&) {}},
      {"tiled",
       [](Schedule& sch) {
         if (auto b = MainBlock(sch)) Try([&] { Tile(sch, *b); });
       }},
      {"parallel_outer",
       [](Schedule& sch) {
         for (const BlockRealizeNode* r : sch.state().AllBlocks()) {
           if (r->block->name == "root") continue;
           BlockRV b = sch.GetBlock(r->block->name);
           std::vector<LoopRV> loops = sch.GetLoops(b);
           if (!loops.empty()) Try([&] { sch.Parallel(loops[0]); });
         }
       }},
      {"vectorized_by_4",
       [](Schedule& sch) {
         if (auto b = MainBlock(sch)) VectorizeInnermost(sch, *b, 4);
       }},
      {"vectorized_by_8_every_block",
       [](Schedule& sch) {
         for (const BlockRealizeNode* r : sch.state().AllBlocks()) {
           if (r->block->name != "root") VectorizeInnermost(sch, sch.GetBlock(r->block->name), 8);
         }
       }},
      {"vectorized_dividing_every_block",
       [](Schedule& sch) {
         for (const BlockRealizeNode* r : sch.state().AllBlocks()) {
           if (r->block->name != "root") VectorizeInnermost(sch, sch.GetBlock(r->block->name), 0);
         }
       }},
      {"unrolled_inner",
       [](Schedule& sch) {
         if (auto b = MainBlock(sch)) {
           std::vector<LoopRV> loops = sch.GetLoops(*b);
           if (!loops.empty()) Try([&] { sch.Unroll(loops.back()); });
           if (loops.size() >= 2) Try([&] { sch.Unroll(loops[loops.size() - 2]); });
         }
       }},
      {"auto_unroll",
       [](Schedule& sch) {
         if (auto b = MainBlock(sch)) {
           std::vector<LoopRV> loops = sch.GetLoops(*b);
           if (!loops.empty()) {
             Try([&] { sch.Annotate(loops[0], "pragma_auto_unroll_max_step", 16); });
           }
         }
       }},
      {"compute_at_producer",
       [](Schedule& sch) {
         auto b = MainBlock(sch);
         if (!b) return;
         std::vector<LoopRV> loops = sch.GetLoops(*b);
         for (BlockRV producer : sch.GetProducers(*b)) {
           for (size_t k = std::min<size_t>(loops.size(), 2); k-- > 0;) {
             bool done = false;
             Try([&] {
               sch.ComputeAt(producer, loops[k]);
               done = true;
             });
             if (done) break;
           }
         }
       }},
      {"cache_write_reverse_compute_at",
       [](Schedule& sch) {
         auto b = MainBlock(sch);
         if (!b) return;
         Try([&] {
           BlockRV copy = sch.CacheWrite(*b, 0, StorageScope::kLocal);
           Tile(sch, *b);
           std::vector<LoopRV> loops = sch.GetLoops(*b);
           sch.ReverseComputeAt(copy, loops[1]);
         });
       }},
      {"cache_read_compute_at_storage_align",
       [](Schedule& sch) {
         auto b = MainBlock(sch);
         if (!b) return;
         Try([&] {
           BlockRV copy = sch.CacheRead(*b, 0, StorageScope::kShared);
           Tile(sch, *b);
           std::vector<LoopRV> loops = sch.GetLoops(*b);
           sch.ComputeAt(copy, loops[1]);
           sch.StorageAlign(copy, 0, /*axis=*/0, /*factor=*/8, /*offset=*/3);
         });
       }},
      {"fuse_reduction_epilogue",
       [](Schedule& sch) {
         std::vector<const BlockRealizeNode*> blocks = sch.state().AllBlocks();
         for (const BlockRealizeNode* r : blocks) {
           if (r->block->name == "root" || sch.state().FindBlock(r->block->name) == nullptr) {
             continue;
           }
           BlockRV b = sch.GetBlock(r->block->name);
           for (BlockRV consumer : sch.GetConsumers(b)) {
             Try([&] { sch.FuseReductionEpilogue(b, consumer); });
           }
         }
       }},
      {"gemm_like_cpu",
       [](Schedule& sch) {
         auto b = MainBlock(sch);
         if (!b) return;
         Try([&] {
           BlockRV copy = sch.CacheWrite(*b, 0, StorageScope::kLocal);
           Tile(sch, *b);
           std::vector<LoopRV> loops = sch.GetLoops(*b);
           sch.ReverseComputeAt(copy, loops[1]);
           sch.Parallel(loops[0]);
           sch.Unroll(loops[2]);
           VectorizeInnermost(sch, copy, 2);
         });
       }},
  };
  return all;
}

inline const NamedSchedule& ScheduleNamed(const std::string& name) {
  for (const NamedSchedule& s : Schedules()) {
    if (s.name == name) return s;
  }
  throw std::out_of_range(name);
}

}  // namespace tirtune::testing
