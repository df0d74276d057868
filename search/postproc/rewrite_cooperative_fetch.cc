// RewriteCooperativeFetch: a shared read cache annotated by the CUDA MultiLevelTiling
// (meta_schedule.cooperative_fetch = lanes) is filled by all threads of the block: the copy's own
// loops (those it does not share with the block that reads the cache) are fused, and split into
// (serial, threadIdx.x as many as the reader's thread loop, lanes), the lanes vectorized so that
// each thread moves `lanes` adjacent elements per access. Lanes that do not divide the innermost
// copy loop fall back to 1. The annotation is removed.
//
// Before (annotated lanes = 4; C's loops bound to threadIdx.x(64)):
//   for k0:  for ax0, ax1:  A_shared[ax0, ax1] = A[...]        (ax0 * ax1 = 2048)
// After:
//   for k0:  for f_0 in range(8): for f_1 in threadIdx.x(64): for f_2 in vectorized(4): ...
#include <algorithm>
#include <optional>

#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class RewriteCooperativeFetch : public Postproc {
 public:
  std::string name() const override { return "RewriteCooperativeFetch"; }

  bool Apply(Schedule& sch) override {
    std::vector<std::pair<std::string, int64_t>> caches;
    for (const BlockRealizeNode* realize : sch.state().AllBlocks()) {
      auto it = realize->block->annotations.find(kAnnCooperativeFetch);
      if (it == realize->block->annotations.end()) continue;
      const int64_t* lanes = AsConstInt(it->second);
      caches.emplace_back(realize->block->name, lanes != nullptr ? *lanes : 1);
    }
    try {
      for (const auto& [name, lanes] : caches) Rewrite(sch, sch.GetBlock(name), lanes);
    } catch (const ScheduleError&) {
      return false;
    }
    return true;
  }

 private:
  static void Rewrite(Schedule& sch, BlockRV cache, int64_t lanes) {
    sch.Unannotate(cache, kAnnCooperativeFetch);
    std::vector<BlockRV> readers = sch.GetConsumers(cache);
    if (readers.empty()) return;
    // Step 1. The reader's thread count, and the copy's own loops.
    int64_t threads = 0;
    std::vector<LoopRV> reader_loops = sch.GetLoops(readers[0]);
    std::vector<const ForNode*> shared;
    for (LoopRV loop : reader_loops) {
      const ForNode* f = sch.Get(loop);
      shared.push_back(f);
      if (f->thread_tag == "threadIdx.x" && AsConstInt(f->extent) != nullptr) {
        threads = *AsConstInt(f->extent);
      }
    }
    std::vector<LoopRV> own;
    for (LoopRV loop : sch.GetLoops(cache)) {
      if (std::find(shared.begin(), shared.end(), sch.Get(loop)) == shared.end()) {
        own.push_back(loop);
      }
    }
    if (own.empty() || threads == 0) return;
    // Step 2. Lanes off the innermost copy loop, the rest over the threads.
    std::optional<LoopRV> vector;
    const int64_t* inner = AsConstInt(sch.Get(own.back())->extent);
    if (lanes > 1 && inner != nullptr && *inner % lanes == 0) {
      std::vector<LoopRV> v = sch.Split(own.back(), {std::monostate{}, SplitFactor(lanes)});
      own.back() = v[0];
      vector = v[1];
    }
    LoopRV fused = own.size() == 1 ? own[0] : sch.Fuse(own);
    std::vector<LoopRV> parts = sch.Split(fused, {std::monostate{}, SplitFactor(threads)});
    sch.Bind(parts[1], "threadIdx.x");
    if (vector) sch.Vectorize(*vector);
  }
};

}  // namespace

std::shared_ptr<Postproc> MakeRewriteCooperativeFetch(const GpuSpaceConfig&) {
  return std::make_shared<RewriteCooperativeFetch>();
}

}  // namespace tirtune
