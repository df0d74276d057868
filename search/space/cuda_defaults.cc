// The CUDA recipe: the design-space configuration of a cuda target, and the default lists of
// rules, postprocessors and mutators (MetaSchedule's CUDA defaults, metaschedule-notes.md):
// MultiLevelTiling first (so that its write-back stage exists when AutoInline folds an epilogue
// into it), then AutoInline, CrossThreadReduction, the unroll annotation and AutoBind.
#include "tirtune/search/space.h"

namespace tirtune {

GpuSpaceConfig GpuSpaceConfig::For(const Target& target) {
  GpuSpaceConfig config;
  config.limits = target.gpu;
  return config;
}

std::shared_ptr<ScheduleRule> MakeUnrollGpu(const GpuSpaceConfig& config) {
  CpuSpaceConfig unroll_only;
  unroll_only.num_cores = 0;  // no parallel annotation
  unroll_only.max_vectorize_extent = 0;
  unroll_only.unroll_max_steps = config.unroll_max_steps;
  return MakeParallelizeVectorizeUnroll(unroll_only);
}

std::vector<std::shared_ptr<ScheduleRule>> DefaultCudaRules(const GpuSpaceConfig& config) {
  return {MakeMultiLevelTilingGpu(config), MakeAutoInlineGpu(), MakeCrossThreadReduction(config),
          MakeUnrollGpu(config), MakeAutoBind(config)};
}

std::vector<std::shared_ptr<Postproc>> DefaultCudaPostprocs(const GpuSpaceConfig& config) {
  return {MakeDisallowDynamicLoop(),          MakeRewriteCooperativeFetch(config),
          MakeRewriteUnboundBlock(config),    MakeRewriteParallelVectorizeUnroll(),
          MakeRewriteReductionBlockGpu(),     MakeVerifyGpuCode(config)};
}

std::vector<MutatorWithProb> DefaultCudaMutators() {
  return {{MakeMutateTileSize(), 0.90},
          {MakeMutateUnroll(), 0.08},
          {MakeMutateThreadBinding(), 0.02}};
}

}  // namespace tirtune
