// AddRFactor: for a reduction with little spatial parallelism (a row sum, a norm, a softmax
// maximum), forks the space with rfactor variants, MetaSchedule's rule: the reduction loops are
// moved innermost and fused, split in two by a sampled perfect tile, and either part becomes the
// spatial dimension of a partial-result block `<name>_rf` (so it can be parallelized or
// vectorized). The original block is annotated so that RandomComputeLocation also places the
// rfactor block. The unchanged schedule is always one of the results.
//
// Before:                        After (rfactor of the inner part k1):
//   for b, i, j:                   for b, k0, k1:  C_rf[k1, b] += A[b, (k0*f + k1) / J, ...]
//     C[b] += A[b, i, j]           for b, k1:      C[b] += C_rf[k1, b]
#include "block_analysis.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class AddRFactor : public ScheduleRule {
 public:
  explicit AddRFactor(const CpuSpaceConfig& config)
      : max_parallel_extent_(int64_t{config.num_cores} * config.max_jobs_per_core),
        max_parallel_basic_(config.num_cores),
        max_innermost_factor_(config.max_innermost_factor) {}

  std::string name() const override { return "AddRFactor"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block_rv) override {
    if (!NeedsRFactor(sch.state(), sch.Get(block_rv))) return {sch};
    std::vector<Schedule> out;
    try {
      // Step 1. Spatial loops outermost, the reduction loops fused into one innermost loop.
      Schedule base = sch.Copy();
      std::vector<LoopRV> loops = base.GetLoops(block_rv);
      std::vector<LoopRV> spatial;
      std::vector<LoopRV> reduce;
      for (const LoopRV& loop : loops) {
        (IterKindOfLoop(base.Get(loop)) == LoopIterKind::kReduce ? reduce : spatial)
            .push_back(loop);
      }
      std::vector<LoopRV> order = spatial;
      order.insert(order.end(), reduce.begin(), reduce.end());
      if (!SameLoops(base, order, loops)) base.Reorder(order);
      LoopRV fused = reduce.size() == 1 ? reduce[0] : base.Fuse(reduce);
      // Step 2. Split it in two by a sampled tile.
      std::vector<ExprRV> factors = base.SamplePerfectTile(fused, /*n=*/2, max_innermost_factor_);
      std::vector<LoopRV> parts = base.Split(fused, {factors[0], factors[1]});
      // Step 3. One variant per part that rfactor accepts.
      const int factor_axis = static_cast<int>(spatial.size());
      for (const LoopRV& part : parts) {
        Schedule variant = base.Copy();
        try {
          variant.RFactor(part, factor_axis);
          variant.Annotate(block_rv, kAnnRandomComputeProducer, 1);
          out.push_back(std::move(variant));
        } catch (const ScheduleError&) {
          // this part does not factor (e.g. the written buffer has fewer dimensions)
        }
      }
    } catch (const ScheduleError&) {
      out.clear();
    }
    out.push_back(sch);
    return out;
  }

 private:
  static bool SameLoops(const Schedule& sch, const std::vector<LoopRV>& a,
                        const std::vector<LoopRV>& b) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (sch.Get(a[i]) != sch.Get(b[i])) return false;
    }
    return true;
  }

  // MetaSchedule's NeedsRFactorOrCrossThreadReduction.
  bool NeedsRFactor(const ScheduleState& state, const BlockRealizeNode* realize) const {
    const BlockNode* block = realize->block.get();
    // Step 1. An untiled reduction block with trivial bindings.
    if (block->writes.empty() || !IsReductionBlock(block) || IsTiled(block) ||
        !HasTrivialBinding(state, realize)) {
      return false;
    }
    // Step 2. A chain of loops, each spatial or reduction, directly holding the block, with
    // constant extents; multiply up the spatial and the reduction extents.
    std::vector<const ForNode*> loops = state.LoopsAbove(realize);
    int64_t spatial_extent = 1;
    int64_t reduce_extent = 1;
    bool has_reduce_loop = false;
    for (size_t i = 0; i < loops.size(); ++i) {
      const StmtNode* inner = i + 1 < loops.size() ? static_cast<const StmtNode*>(loops[i + 1])
                                                   : static_cast<const StmtNode*>(realize);
      if (loops[i]->body.get() != inner) return false;
      const int64_t* extent = AsConstInt(loops[i]->extent);
      if (extent == nullptr) return false;
      switch (IterKindOfLoop(loops[i])) {
        case LoopIterKind::kSpatial:
          spatial_extent *= *extent;
          break;
        case LoopIterKind::kReduce:
          reduce_extent *= *extent;
          has_reduce_loop = true;
          break;
        case LoopIterKind::kMixed:
          return false;
      }
    }
    if (!has_reduce_loop) return false;
    // Step 3. Worth it when the spatial loops alone cannot keep the cores busy.
    if (NeedsMultiLevelTiling(state, realize)) {
      return spatial_extent < reduce_extent && spatial_extent <= max_parallel_extent_;
    }
    return reduce_extent > max_parallel_basic_;
  }

  int64_t max_parallel_extent_;
  int64_t max_parallel_basic_;
  int max_innermost_factor_;
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeAddRFactor(const CpuSpaceConfig& config) {
  return std::make_shared<AddRFactor>(config);
}

}  // namespace tirtune
