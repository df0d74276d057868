// sample_compute_location: picks where a producer block could be computed — a loop that encloses
// all its consumers, the root (leave it where it is), or inlining — among the locations where
// compute_at (or compute_inline) actually succeeds. The decision is the index of the loop among
// those candidates (outermost first), -1 for root, -2 for inline.
#include <fmt/format.h>

#include <algorithm>

#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

// Loops of the block's scope that enclose every consumer of the block and not the block itself,
// outermost first.
std::vector<const ForNode*> EnclosingLoops(const ScheduleState& state,
                                           const BlockRealizeNode* realize) {
  const BlockRealizeNode* scope = state.ScopeBlock(realize);
  std::vector<const BlockRealizeNode*> consumers;
  for (const BlockRealizeNode* other : state.ChildBlocks(scope)) {
    if (other == realize) continue;
    bool reads_output = false;
    for (const BufferRegion& w : realize->block->writes) {
      for (const BufferRegion& r : other->block->reads) reads_output |= r.buffer.same_as(w.buffer);
    }
    if (reads_output) consumers.push_back(other);
  }
  if (consumers.empty()) return {};
  std::vector<const ForNode*> common = state.LoopsAbove(consumers[0]);
  for (size_t c = 1; c < consumers.size(); ++c) {
    std::vector<const ForNode*> mine = state.LoopsAbove(consumers[c]);
    size_t n = 0;
    while (n < common.size() && n < mine.size() && common[n] == mine[n]) ++n;
    common.resize(n);
  }
  std::vector<const ForNode*> own = state.LoopsAbove(realize);
  std::vector<const ForNode*> out;
  for (const ForNode* l : common) {
    if (std::find(own.begin(), own.end(), l) == own.end()) out.push_back(l);
  }
  return out;
}

}  // namespace

LoopRV Schedule::SampleComputeLocation(BlockRV block, std::optional<int64_t> decision) {
  const BlockRealizeNode* realize = Get(block);
  // Step 1: keep the candidate loops where compute_at succeeds, and see whether inlining does.
  std::vector<const ForNode*> loops;
  for (const ForNode* loop : EnclosingLoops(state_, realize)) {
    const VarNode* loop_var = loop->loop_var.get();
    if (CanApply([&](Schedule& s) { s.ComputeAt(block, s.NewLoopRV(loop_var)); })) {
      loops.push_back(loop);
    }
  }
  bool can_inline = CanApply([&](Schedule& s) { s.ComputeInline(block); });
  // Step 2: take or check the decision.
  int64_t choice;
  if (decision.has_value()) {
    choice = *decision;
    bool valid = choice == -1 || (choice == -2 && can_inline) ||
                 (choice >= 0 && choice < static_cast<int64_t>(loops.size()));
    if (!valid) {
      throw SimpleScheduleError(
          "InvalidDecisionError",
          fmt::format("compute location {} is not available for block '{}' ({} loops{})", choice,
                      realize->block->name, loops.size(), can_inline ? ", inline" : ""),
          {realize});
    }
  } else {
    std::vector<int64_t> options{-1};
    if (can_inline) options.push_back(-2);
    for (size_t i = 0; i < loops.size(); ++i) options.push_back(static_cast<int64_t>(i));
    choice = options[rng_.UniformInt(0, static_cast<int64_t>(options.size()))];
  }
  LoopRV out = choice >= 0 ? NewLoopRV(loops[choice]->loop_var.get()) : NewLocationRV(choice);
  Record("SampleComputeLocation", {block.ref()}, nlohmann::json::object(), {out.ref()}, choice);
  return out;
}

}  // namespace tirtune
