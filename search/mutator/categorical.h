// What the mutators that change a SampleCategorical decision share.
#pragma once

#include <optional>

#include "tirtune/schedule/trace.h"
#include "tirtune/schedule/random.h"

namespace tirtune {

/// `trace` with instruction `index` (a SampleCategorical) given another candidate, picked in
/// proportion to the probabilities of the others; nullopt when no other has a chance.
std::optional<Trace> ResampleCategorical(const Trace& trace, size_t index, RandomEngine& rng);

}  // namespace tirtune
