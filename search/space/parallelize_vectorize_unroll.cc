// ParallelizeVectorizeUnroll: annotates the root block with what RewriteParallelVectorizeUnroll
// later turns into loop kinds — the parallel extent to aim at (num_cores * max_jobs_per_core),
// the largest vectorized extent, and a sampled auto-unroll step count (one of unroll_max_steps,
// uniformly; not for purely spatial functions, which have no inner loop nests worth unrolling).
// The unroll annotation takes the sampled value itself, so a changed decision changes it. Where a
// block reads with a stride or a gather along the axis it writes contiguously (a strided stencil,
// a transpose, a stride-2 convolution), the vectorized extent is sampled too: none (left to LLVM),
// half a vector of floats, or the largest (MutateUnroll resamples either).
//
// After (on "root"):
//   e = SampleCategorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25])
//   Annotate(root, "meta_schedule.parallel", 32)
//   Annotate(root, "meta_schedule.vectorize", 64)
//   Annotate(root, "meta_schedule.unroll_explicit", e)
#include <algorithm>

#include "block_analysis.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class ParallelizeVectorizeUnroll : public ScheduleRule {
 public:
  explicit ParallelizeVectorizeUnroll(const CpuSpaceConfig& config)
      : max_parallel_extent_(int64_t{config.num_cores} * config.max_jobs_per_core),
        max_vectorize_extent_(config.max_vectorize_extent),
        half_vector_(std::max(1, config.vector_bytes / 8)),
        unroll_max_steps_(config.unroll_max_steps) {}

  std::string name() const override { return "ParallelizeVectorizeUnroll"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) override {
    if (!IsRootBlock(sch.state(), sch.Get(block))) return {sch};
    Schedule out = sch.Copy();
    if (max_parallel_extent_ > 0) out.Annotate(block, kAnnParallel, max_parallel_extent_);
    if (max_vectorize_extent_ > 0) {
      if (HasStridedReads(out.state())) {
        ExprRV extent =
            out.SampleCategorical({0, half_vector_, max_vectorize_extent_}, {0.25, 0.25, 0.5});
        out.Annotate(block, kAnnVectorize, extent);
      } else {
        out.Annotate(block, kAnnVectorize, max_vectorize_extent_);
      }
    }
    if (!unroll_max_steps_.empty() && !IsSpatialFunc(out.state())) {
      std::vector<double> probs(unroll_max_steps_.size(), 1.0 / unroll_max_steps_.size());
      ExprRV steps = out.SampleCategorical(unroll_max_steps_, std::move(probs));
      out.Annotate(block, kAnnUnrollExplicit, steps);
    }
    return {std::move(out)};
  }

 private:
  static bool HasStridedReads(const ScheduleState& state) {
    for (const BlockRealizeNode* realize : state.AllBlocks()) {
      if (HasStridedRead(realize->block.get())) return true;
    }
    return false;
  }

  int64_t max_parallel_extent_;
  int64_t max_vectorize_extent_;
  int64_t half_vector_;  // lanes of half a vector of float32
  std::vector<int64_t> unroll_max_steps_;
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeParallelizeVectorizeUnroll(const CpuSpaceConfig& config) {
  return std::make_shared<ParallelizeVectorizeUnroll>(config);
}

}  // namespace tirtune
