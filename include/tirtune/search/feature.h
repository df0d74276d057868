// Per-store features of a candidate, in the spirit of Ansor's 164: one row per buffer store in
// the lowered candidate (compute counts weighted by loop extents, loop-kind features, per-buffer
// access features, the arithmetic-intensity curve, allocation and outer-loop features, the
// register block: the loops inside the innermost loop that does not move the stored element, and
// size shares: some size-dependent columns again, relative to the candidate's float operations),
// values mostly log2(1 + x) scaled. The copies that an expanded unrolled loop leaves (sibling
// statements differing only in constants) count once, as if inside an unrolled loop. The cost model
// sums its per-row scores over a candidate's rows. Column names: FeatureNames().
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tirtune/ir/function.h"

namespace tirtune {

/// Features of one candidate: `rows` rows of kNumFeatures floats, row-major.
struct FeatureMatrix {
  size_t rows = 0;
  std::vector<float> data;
  const float* row(size_t r) const { return data.data() + r * kNumFeatures; }

  static constexpr size_t kNumFeatures = 186;
};

/// Features of `lowered` (a function in the lowered form, see tirtune/lower/lower.h). Never
/// throws for a valid lowered function; a function without stores gives zero rows. Fast: about
/// 0.02 ms for a lowered GEMM candidate (release build).
FeatureMatrix ExtractFeatures(const PrimFunc& lowered);

/// ExtractFeatures of each function, in parallel over `num_threads` (0: hardware threads).
std::vector<FeatureMatrix> ExtractFeaturesParallel(const std::vector<PrimFunc>& lowered,
                                                   int num_threads = 0);

/// The name of each of the kNumFeatures columns (for debugging and the docs).
const std::vector<std::string>& FeatureNames();

}  // namespace tirtune
