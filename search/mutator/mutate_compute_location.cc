// MutateComputeLocation: picks one SampleComputeLocation decision and changes it to another
// location available at that point of the trace (root, inline, or a loop of the consumers). The
// available locations depend on everything before the instruction, so the trace is replayed up
// to it first.
//
// A zero-padding stage goes inline half the time when it can: inlined, lowering skips the taps on
// the padding, and among a dozen locations a uniform pick would seldom try it.
//
// Before: l5 = SampleComputeLocation(b1)  # decision -1 (root)
// After:  l5 = SampleComputeLocation(b1)  # decision 2 (the third enclosing loop)
#include <algorithm>

#include "../space/block_analysis.h"
#include "tirtune/ir/functor.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class MutateComputeLocation : public Mutator {
 public:
  std::string name() const override { return "MutateComputeLocation"; }

  std::optional<Trace> Apply(const PrimFunc& func, const Trace& input, RandomEngine& rng) override {
    Trace trace = input.Simplified(/*remove_postproc=*/true);
    // Step 1. The location decisions, in random order.
    std::vector<size_t> candidates;
    for (size_t i = 0; i < trace.insts().size(); ++i) {
      if (trace.insts()[i].kind->name == "SampleComputeLocation") candidates.push_back(i);
    }
    for (size_t k = candidates.size(); k > 1; --k) {
      std::swap(candidates[k - 1], candidates[rng.UniformInt(0, static_cast<int64_t>(k))]);
    }
    // Step 2. The first whose block has another location available.
    for (size_t index : candidates) {
      bool padding = false;
      std::vector<int64_t> options = AvailableLocations(func, trace, index, &padding);
      const nlohmann::json& current = trace.insts()[index].decision;
      if (current.is_number_integer()) std::erase(options, current.get<int64_t>());
      if (options.empty()) continue;
      bool can_inline = std::find(options.begin(), options.end(), -2) != options.end();
      if (padding && can_inline && options.size() > 1 && rng.UniformInt(0, 2) == 0) {
        return trace.WithDecision(index, -2);
      }
      int64_t choice = options[rng.UniformInt(0, static_cast<int64_t>(options.size()))];
      return trace.WithDecision(index, choice);
    }
    return std::nullopt;
  }

 private:
  // The decisions SampleComputeLocation would accept at instruction `index` of `trace`: -1 (root),
  // -2 (inline) and the indices of the candidate loops. Empty when the prefix does not replay.
  // `padding` tells whether the block is a zero-padding stage.
  static std::vector<int64_t> AvailableLocations(const PrimFunc& func, const Trace& trace,
                                                 size_t index, bool* padding) {
    Trace prefix;
    for (size_t i = 0; i <= index; ++i) prefix.Append(trace.insts()[i]);
    Schedule sch(func);
    try {
      prefix.ApplyTo(sch);
    } catch (const ScheduleError&) {
      return {};
    }
    const Instruction& sample = sch.trace().insts().back();
    BlockRV block{std::get<RVRef>(sample.inputs[0]).id};
    *padding = IsZeroPadding(sch.Get(block)->block.get());
    auto accepts = [&](int64_t decision) {
      return sch.CanApply([&](Schedule& s) { s.SampleComputeLocation(block, decision); });
    };
    std::vector<int64_t> options{-1};
    if (accepts(-2)) options.push_back(-2);
    // Loop decisions are valid exactly below the number of candidate loops, which is at most the
    // number of loops in the function: a binary search asks the primitive O(log n) times (each
    // question checks every candidate loop).
    int64_t valid = 0;  // decisions below are valid
    int64_t invalid = 0;
    PreOrderVisit(sch.func()->body, [&](const Object* node) {
      invalid += node->kind() == NodeKind::kFor ? 1 : 0;
      return node->kind() >= NodeKind::kFor;
    });
    while (valid < invalid) {
      int64_t mid = valid + (invalid - valid) / 2;
      if (accepts(mid)) {
        valid = mid + 1;
      } else {
        invalid = mid;
      }
    }
    for (int64_t loop = 0; loop < valid; ++loop) options.push_back(loop);
    return options;
  }
};

}  // namespace

std::shared_ptr<Mutator> MakeMutateComputeLocation() {
  return std::make_shared<MutateComputeLocation>();
}

}  // namespace tirtune
