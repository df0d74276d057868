// An experiment of bench_cost_model_heldout (NORMALIZE=1): feature rows with all their
// size-dependent columns replaced by shares of the candidate's total float operations, so that two
// shapes of one operator look alike. (Eight such shares are product columns too, share_*, at the
// end of the row.)
#pragma once

#include "tirtune/search/feature.h"

namespace tirtune {

/// NORMALIZE=1: the columns that grow with the problem's size (operation counts, bytes and cache
/// lines touched, outer products) are replaced by log2(x / total) + 64 (0 stays 0).
void NormalizeBySize(FeatureMatrix* f);

}  // namespace tirtune
