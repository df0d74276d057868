// SpaceGenerator: PostOrderApply (every rule over every block, consumers first, forking the
// schedules a rule returns), the replay of a candidate trace with its postprocessing, and
// WithoutDecisions.
#include <fmt/format.h>

#include <string>
#include <utility>

#include "tirtune/search/space.h"

namespace tirtune {
namespace {

// Block names in reverse program order: consumers before their producers, the root last.
std::vector<std::string> BlocksConsumersFirst(const ScheduleState& state) {
  std::vector<std::string> names;
  std::vector<const BlockRealizeNode*> blocks = state.AllBlocks();
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) names.push_back((*it)->block->name);
  return names;
}

// One rule over every block of `sch`, depth first: each schedule a rule returns for a block
// continues with the next block.
void ApplyRuleToAllBlocks(ScheduleRule& rule, Schedule sch, std::vector<Schedule>* out) {
  const std::vector<std::string> names = BlocksConsumersFirst(sch.state());
  std::vector<std::pair<Schedule, size_t>> stack;
  stack.emplace_back(std::move(sch), 0);
  while (!stack.empty()) {
    auto [current, next] = std::move(stack.back());
    stack.pop_back();
    // Skip blocks that an earlier application removed (inlined, fused).
    while (next < names.size() && current.state().FindBlock(names[next]) == nullptr) ++next;
    if (next == names.size()) {
      out->push_back(std::move(current));
      continue;
    }
    BlockRV block = current.GetBlock(names[next]);
    std::vector<Schedule> applied = rule.Apply(current, block);
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
      stack.emplace_back(std::move(*it), next + 1);
    }
  }
}

}  // namespace

SpaceGenerator::SpaceGenerator(std::vector<std::shared_ptr<ScheduleRule>> rules,
                               std::vector<std::shared_ptr<Postproc>> postprocs,
                               std::vector<MutatorWithProb> mutators)
    : rules_(std::move(rules)), postprocs_(std::move(postprocs)), mutators_(std::move(mutators)) {}

SpaceGenerator SpaceGenerator::DefaultCpu(const CpuSpaceConfig& config) {
  return SpaceGenerator(DefaultCpuRules(config), DefaultCpuPostprocs(), DefaultCpuMutators(config));
}

SpaceGenerator SpaceGenerator::DefaultCuda(const GpuSpaceConfig& config) {
  return SpaceGenerator(DefaultCudaRules(config), DefaultCudaPostprocs(config),
                        DefaultCudaMutators());
}

SpaceGenerator SpaceGenerator::For(const Target& target) {
  if (target.is_cuda()) return DefaultCuda(GpuSpaceConfig::For(target));
  return DefaultCpu(CpuSpaceConfig::For(target));
}

std::vector<Schedule> SpaceGenerator::GenerateDesignSpaces(const PrimFunc& func,
                                                           uint64_t seed) const {
  std::vector<Schedule> spaces;
  spaces.emplace_back(func, seed);
  for (const std::shared_ptr<ScheduleRule>& rule : rules_) {
    std::vector<Schedule> next;
    for (Schedule& sch : spaces) ApplyRuleToAllBlocks(*rule, std::move(sch), &next);
    spaces = std::move(next);
  }
  return spaces;
}

std::optional<Schedule> SpaceGenerator::ReplayAndPostprocess(const PrimFunc& func,
                                                             const Trace& trace,
                                                             uint64_t seed) const {
  return Replay(func, trace, seed, nullptr);
}

std::string SpaceGenerator::WhyRejected(const PrimFunc& func, const Trace& trace,
                                        uint64_t seed) const {
  std::string why;
  Replay(func, trace, seed, &why);
  return why;
}

std::string SpaceGenerator::WhyNoSample(const PrimFunc& func, const std::vector<Trace>& spaces,
                                        uint64_t seed) const {
  if (spaces.empty()) return "the schedule rules made no design space";
  std::string first;
  for (uint64_t k = 0; k < 4; ++k) {
    for (size_t i = 0; i < spaces.size(); ++i) {
      std::string why = WhyRejected(func, spaces[i], seed + k);
      if (why.empty()) return "";
      if (first.empty())
        first = fmt::format("design space {} of {}: {}", i + 1, spaces.size(), why);
    }
  }
  return first;
}

std::optional<Schedule> SpaceGenerator::Replay(const PrimFunc& func, const Trace& trace,
                                               uint64_t seed, std::string* why) const {
  Schedule sch(func, seed);
  try {
    trace.ApplyTo(sch, /*decisions=*/{}, /*remove_postproc=*/true);
  } catch (const ScheduleError& e) {
    if (why != nullptr) *why = fmt::format("replaying the design space failed: {}", e.what());
    return std::nullopt;
  }
  sch.EnterPostproc();
  for (const std::shared_ptr<Postproc>& postproc : postprocs_) {
    if (!postproc->Apply(sch)) {
      if (why != nullptr) *why = fmt::format("the postprocessor {} rejected it", postproc->name());
      return std::nullopt;
    }
  }
  return sch;
}

Trace WithoutDecisions(const Trace& trace) {
  // Lookups whose results nothing uses (PostOrderApply looks up every block for every rule) are
  // dropped too: they cost time on every replay.
  Trace simplified = trace.Simplified(/*remove_postproc=*/true);
  Trace out;
  for (Instruction inst : simplified.insts()) {
    inst.decision = nullptr;
    out.Append(std::move(inst));
  }
  return out;
}

}  // namespace tirtune
