// AutoBind: a block that no rule put on threads (an elementwise stage, a reduction left serial)
// gets its leading spatial loops fused and split into blockIdx.x x threadIdx.x, the thread count
// sampled among config.thread_extents (those within the device's limit and below twice the
// extent). Blocks under a thread-bound loop (placed there by compute_at) are left alone.
//
// Before:                          After (threads sampled 128):
//   for i, j:  B[i, j] = ...          for i_j_0 in blockIdx.x(ceil(i*j / 128)):
//                                       for i_j_1 in threadIdx.x(128):  B[...] = ...
#include "block_analysis.h"
#include "gpu_binding.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class AutoBind : public ScheduleRule {
 public:
  explicit AutoBind(const GpuSpaceConfig& config)
      : thread_extents_(config.thread_extents),
        max_threads_(config.limits.max_threads_per_block) {}

  std::string name() const override { return "AutoBind"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) override {
    if (IsRootBlock(sch.state(), sch.Get(block))) return {sch};
    Schedule s = sch.Copy();
    try {
      if (IsBoundToThreads(s, block)) return {sch};
      std::optional<LoopRV> outer = FuseLeadingSpatialLoops(s, block);
      if (!outer) return {sch};
      int64_t extent = *AsConstInt(s.Get(*outer)->extent);
      std::vector<int64_t> counts = UsefulThreadCounts(thread_extents_, extent, max_threads_);
      std::vector<double> probs(counts.size(), 1.0 / counts.size());
      ExprRV threads = s.SampleCategorical(counts, std::move(probs));
      BindBlocksAndThreads(s, *outer, threads);
    } catch (const ScheduleError&) {
      return {sch};
    }
    return {std::move(s)};
  }

 private:
  std::vector<int64_t> thread_extents_;
  int64_t max_threads_;
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeAutoBind(const GpuSpaceConfig& config) {
  return std::make_shared<AutoBind>(config);
}

}  // namespace tirtune
