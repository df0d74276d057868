// MutateParallel: changes the value of the meta_schedule.parallel annotation (a constant, not a
// decision) so that RewriteParallelVectorizeUnroll fuses a different number of outer loops into
// the parallel loop of some block. The trace is replayed to learn the loop extents; every
// product of outer loops within num_cores * max_jobs_per_core is a candidate value, and one
// giving a different plan than the current value is picked uniformly among the distinct plans.
//
// Before: Annotate(b0, key="meta_schedule.parallel", value=32)   # fuses i0, j0, i1 (64)
// After:  Annotate(b0, key="meta_schedule.parallel", value=8)    # fuses i0, j0 (8)
#include <iterator>
#include <map>

#include "../space/block_analysis.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class MutateParallel : public Mutator {
 public:
  explicit MutateParallel(const CpuSpaceConfig& config)
      : max_parallel_extent_(int64_t{config.num_cores} * config.max_jobs_per_core) {}

  std::string name() const override { return "MutateParallel"; }

  std::optional<Trace> Apply(const PrimFunc& func, const Trace& input, RandomEngine& rng) override {
    Trace trace = input.Simplified(/*remove_postproc=*/true);
    // Step 1. The parallel annotation.
    std::optional<size_t> index;
    for (size_t i = 0; i < trace.insts().size(); ++i) {
      const Instruction& inst = trace.insts()[i];
      if (inst.kind->name == "Annotate" && inst.attrs.value("key", "") == kAnnParallel &&
          inst.attrs.contains("value") && inst.attrs["value"].is_number_integer()) {
        index = i;
      }
    }
    if (!index) return std::nullopt;
    const int64_t current = trace.insts()[*index].attrs["value"].get<int64_t>();
    // Step 2. Replay to find the outer loop extents of every block under the root.
    Schedule sch(func);
    try {
      trace.ApplyTo(sch);
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
    std::vector<std::vector<int64_t>> prefixes;
    const ScheduleState& state = sch.state();
    for (const BlockRealizeNode* realize : state.ChildBlocks(state.func()->body.get())) {
      prefixes.push_back(ParallelizablePrefixExtents(state.LoopsAbove(realize)));
    }
    // Step 3. The distinct plans (loops fused per block) of the candidate values.
    auto plan_of = [&](int64_t limit) {
      std::vector<size_t> plan;
      for (const std::vector<int64_t>& p : prefixes) plan.push_back(NumParallelLoops(p, limit));
      return plan;
    };
    std::map<std::vector<size_t>, int64_t> plans;
    for (const std::vector<int64_t>& p : prefixes) {
      for (int64_t limit : p) {
        if (limit <= max_parallel_extent_) plans.emplace(plan_of(limit), limit);
      }
    }
    plans.erase(plan_of(current));
    if (plans.empty()) return std::nullopt;
    // Step 4. One of them, as a new annotation value.
    auto it = plans.begin();
    std::advance(it, rng.UniformInt(0, static_cast<int64_t>(plans.size())));
    Trace out;
    for (size_t i = 0; i < trace.insts().size(); ++i) {
      Instruction inst = trace.insts()[i];
      if (i == *index) inst.attrs["value"] = it->second;
      out.Append(std::move(inst));
    }
    return out;
  }

 private:
  int64_t max_parallel_extent_;
};

}  // namespace

std::shared_ptr<Mutator> MakeMutateParallel(const CpuSpaceConfig& config) {
  return std::make_shared<MutateParallel>(config);
}

}  // namespace tirtune
