// RewriteUnboundBlock: a block that the rules left off the threads (one a rule created late, or
// one whose binding failed) gets its leading spatial loops fused and split into blockIdx.x x
// config.default_threads threads (fewer when the loop is shorter), as AutoBind does with a fixed
// thread count: no kernel reaches the GPU unbound.
#include "../space/block_analysis.h"
#include "../space/gpu_binding.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class RewriteUnboundBlock : public Postproc {
 public:
  explicit RewriteUnboundBlock(const GpuSpaceConfig& config)
      : threads_(std::min(config.default_threads, config.limits.max_threads_per_block)) {}

  std::string name() const override { return "RewriteUnboundBlock"; }

  bool Apply(Schedule& sch) override {
    std::vector<std::string> names;
    for (const BlockRealizeNode* realize : sch.state().AllBlocks()) {
      if (!IsRootBlock(sch.state(), realize)) names.push_back(realize->block->name);
    }
    try {
      for (const std::string& name : names) {
        BlockRV block = sch.GetBlock(name);
        if (IsBoundToThreads(sch, block)) continue;
        std::optional<LoopRV> outer = FuseLeadingSpatialLoops(sch, block);
        if (!outer) return false;
        int64_t extent = *AsConstInt(sch.Get(*outer)->extent);
        BindBlocksAndThreads(sch, *outer, SplitFactor(std::min(threads_, extent)));
      }
    } catch (const ScheduleError&) {
      return false;
    }
    return true;
  }

 private:
  int64_t threads_;
};

}  // namespace

std::shared_ptr<Postproc> MakeRewriteUnboundBlock(const GpuSpaceConfig& config) {
  return std::make_shared<RewriteUnboundBlock>(config);
}

}  // namespace tirtune
