// MutateThreadBinding: resamples a SampleCategorical whose value a Split takes as a factor — the
// thread count AutoBind or CrossThreadReduction sampled — picking another candidate in
// proportion to the probabilities.
//
// Before: e2 = SampleCategorical(candidates=[32, 64, 128, 256], ...)  # decision 2 (128)
//         l3, l4 = Split(l1, factors=[None, e2])
// After:                                                             # decision 0 (32)
#include <algorithm>

#include "categorical.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class MutateThreadBinding : public Mutator {
 public:
  std::string name() const override { return "MutateThreadBinding"; }

  std::optional<Trace> Apply(const PrimFunc&, const Trace& input, RandomEngine& rng) override {
    Trace trace = input.Simplified(/*remove_postproc=*/true);
    const std::vector<Instruction>& insts = trace.insts();
    std::vector<size_t> candidates;
    for (size_t j = 0; j < insts.size(); ++j) {
      if (insts[j].kind->name != "SampleCategorical" || insts[j].outputs.size() != 1) continue;
      const RVRef& value = insts[j].outputs[0];
      bool splits = false;
      for (size_t i = j + 1; i < insts.size() && !splits; ++i) {
        if (insts[i].kind->name != "Split") continue;
        for (const InstInput& in : insts[i].inputs) {
          if (const RVRef* ref = std::get_if<RVRef>(&in); ref != nullptr && *ref == value) {
            splits = true;
          }
        }
      }
      if (splits) candidates.push_back(j);
    }
    if (candidates.empty()) return std::nullopt;
    const size_t index = candidates[rng.UniformInt(0, static_cast<int64_t>(candidates.size()))];
    return ResampleCategorical(trace, index, rng);
  }
};

}  // namespace

std::shared_ptr<Mutator> MakeMutateThreadBinding() {
  return std::make_shared<MutateThreadBinding>();
}

}  // namespace tirtune
