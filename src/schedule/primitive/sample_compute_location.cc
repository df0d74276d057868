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
  std::vector<const ForNode*> enclosing = EnclosingLoops(state_, realize);
  auto can_compute_at = [&](const ForNode* loop) {
    const VarNode* loop_var = loop->loop_var.get();
    return CanApply([&](Schedule& s) { s.ComputeAt(block, s.NewLoopRV(loop_var)); });
  };
  auto can_inline = [&] { return CanApply([&](Schedule& s) { s.ComputeInline(block); }); };
  int64_t choice;
  const ForNode* chosen = nullptr;
  if (decision.has_value()) {
    // Step 1a. Check only what the decision needs (replay is the search's hot path): nothing for
    // the root, inlining for -2, and the candidate loops up to the chosen one for an index.
    choice = *decision;
    bool valid = choice == -1 || (choice == -2 && can_inline());
    for (int64_t seen = 0; choice >= 0 && !valid && !enclosing.empty();) {
      const ForNode* loop = enclosing.front();
      enclosing.erase(enclosing.begin());
      if (!can_compute_at(loop)) continue;
      if (seen++ == choice) {
        chosen = loop;
        valid = true;
      }
    }
    if (!valid) {
      throw SimpleScheduleError("InvalidDecisionError",
                                fmt::format("compute location {} is not available for block '{}'",
                                            choice, realize->block->name),
                                {realize});
    }
  } else {
    // Step 1b. Sample among the root, inlining (when it succeeds) and every loop where compute_at
    // succeeds.
    std::vector<const ForNode*> loops;
    for (const ForNode* loop : enclosing) {
      if (can_compute_at(loop)) loops.push_back(loop);
    }
    std::vector<int64_t> options{-1};
    if (can_inline()) options.push_back(-2);
    for (size_t i = 0; i < loops.size(); ++i) options.push_back(static_cast<int64_t>(i));
    choice = options[rng_.UniformInt(0, static_cast<int64_t>(options.size()))];
    if (choice >= 0) chosen = loops[choice];
  }
  LoopRV out = chosen != nullptr ? NewLoopRV(chosen->loop_var.get()) : NewLocationRV(choice);
  Record("SampleComputeLocation", {block.ref()}, nlohmann::json::object(), {out.ref()}, choice);
  return out;
}

}  // namespace tirtune
