// The CPU recipe: the design-space configuration of a target, and the default lists of rules,
// postprocessors and mutators (MetaSchedule's LLVM defaults, metaschedule-notes.md §1.3–1.5).
#include <algorithm>
#include <string>
#include <string_view>

#include "tirtune/search/space.h"

namespace tirtune {
namespace {

// Whether the feature list (LLVM's "+avx2,-avx512f" form) switches `feature` on or off;
// nullopt when it does not mention it.
std::optional<bool> FeatureSetting(std::string_view mattr, std::string_view feature) {
  std::optional<bool> setting;
  size_t start = 0;
  while (start <= mattr.size()) {
    size_t end = mattr.find(',', start);
    if (end == std::string_view::npos) end = mattr.size();
    std::string_view item = mattr.substr(start, end - start);
    if (item.size() > 1 && item.substr(1) == feature) setting = item[0] == '+';
    start = end + 1;
  }
  return setting;
}

// LLVM CPU names whose feature set includes AVX-512F.
bool CpuHasAvx512(std::string_view cpu) {
  for (std::string_view name :
       {"skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
        "icelake-server", "tigerlake", "sapphirerapids", "emeraldrapids", "graniterapids",
        "graniterapids-d", "rocketlake", "znver4", "znver5", "x86-64-v4", "knl", "knm"}) {
    if (cpu == name) return true;
  }
  return false;
}

bool HostHasAvx512() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

}  // namespace

CpuSpaceConfig CpuSpaceConfig::For(const Target& target) {
  CpuSpaceConfig config;
  config.num_cores = std::max(1, target.num_cores);
  // The vector width: an explicit feature switch wins, then the CPU's own features (the host's
  // detected ones when the target is the host).
  std::optional<bool> avx512 = FeatureSetting(target.mattr, "avx512f");
  std::optional<bool> avx2 = FeatureSetting(target.mattr, "avx2");
  bool host = target.mcpu.empty() || target.mcpu == HostCpuName();
  bool wide = avx512.value_or(host ? HostHasAvx512() : CpuHasAvx512(target.mcpu));
  config.vector_bytes = wide ? 64 : (avx2.value_or(true) ? 32 : 16);
  return config;
}

std::vector<std::shared_ptr<ScheduleRule>> DefaultCpuRules(const CpuSpaceConfig& config) {
  return {MakeAutoInline(), MakeAddRFactor(config), MakeMultiLevelTiling(config),
          MakeParallelizeVectorizeUnroll(config), MakeRandomComputeLocation()};
}

std::vector<std::shared_ptr<Postproc>> DefaultCpuPostprocs() {
  return {MakeDisallowDynamicLoop(), MakeRewriteParallelVectorizeUnroll(),
          MakeRewriteReductionBlock(), MakeRewriteLayout(), MakeVerifyLowers()};
}

std::vector<MutatorWithProb> DefaultCpuMutators(const CpuSpaceConfig& config) {
  return {{MakeMutateTileSize(), 0.90},
          {MakeMutateComputeLocation(), 0.05},
          {MakeMutateUnroll(), 0.03},
          {MakeMutateParallel(config), 0.02}};
}

}  // namespace tirtune
