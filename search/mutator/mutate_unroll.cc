// MutateUnroll: resamples a SampleCategorical whose value the auto-unroll annotation
// (meta_schedule.unroll_explicit) or a sampled vectorized extent (meta_schedule.vectorize) takes,
// picking another candidate with non-zero probability, in proportion to the probabilities
// (ResampleCategorical, shared with MutateThreadBinding).
//
// Before: e3 = SampleCategorical(candidates=[0, 16, 64, 512], ...)  # decision 1 (16 steps)
//         Annotate(b0, e3, key="meta_schedule.unroll_explicit")
// After:                                                            # decision 3 (512 steps)
#include "categorical.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class MutateUnroll : public Mutator {
 public:
  std::string name() const override { return "MutateUnroll"; }

  std::optional<Trace> Apply(const PrimFunc&, const Trace& input, RandomEngine& rng) override {
    Trace trace = input.Simplified(/*remove_postproc=*/true);
    // Step 1. The categorical samples that feed an unroll or vectorize annotation.
    std::vector<size_t> candidates;
    const std::vector<Instruction>& insts = trace.insts();
    for (size_t i = 0; i < insts.size(); ++i) {
      const std::string key = insts[i].attrs.value("key", "");
      if (insts[i].kind->name != "Annotate" || insts[i].inputs.size() < 2 ||
          (key != kAnnUnrollExplicit && key != kAnnVectorize)) {
        continue;
      }
      const RVRef& value = std::get<RVRef>(insts[i].inputs[1]);
      for (size_t j = 0; j < i; ++j) {
        if (insts[j].kind->name == "SampleCategorical" && insts[j].outputs.size() == 1 &&
            insts[j].outputs[0] == value) {
          candidates.push_back(j);
        }
      }
    }
    if (candidates.empty()) return std::nullopt;
    // Step 2. Another candidate value, by the remaining probabilities.
    const size_t index = candidates[rng.UniformInt(0, static_cast<int64_t>(candidates.size()))];
    return ResampleCategorical(trace, index, rng);
  }
};

}  // namespace

std::optional<Trace> ResampleCategorical(const Trace& trace, size_t index, RandomEngine& rng) {
  const Instruction& inst = trace.insts()[index];
  std::vector<double> probs = inst.attrs.at("probs").get<std::vector<double>>();
  if (inst.decision.is_number_integer()) {
    int64_t current = inst.decision.get<int64_t>();
    if (current >= 0 && current < static_cast<int64_t>(probs.size())) probs[current] = 0;
  }
  double total = 0;
  for (double p : probs) total += p;
  if (total <= 0) return std::nullopt;
  return trace.WithDecision(index, int64_t{rng.Categorical(probs)});
}

std::shared_ptr<Mutator> MakeMutateUnroll() { return std::make_shared<MutateUnroll>(); }

}  // namespace tirtune
