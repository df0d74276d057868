// Experiments of bench_cost_model_heldout (NORMALIZE=1|2): feature rows with their size-dependent
// columns expressed as shares of the candidate's total float operations, so that two shapes of
// one operator look alike. Not used by the product.
#pragma once

#include "tirtune/search/feature.h"

namespace tirtune {

/// NORMALIZE=1: the columns that grow with the problem's size (operation counts, bytes and cache
/// lines touched, outer products) are replaced by log2(x / total) + 64 (0 stays 0).
void NormalizeBySize(FeatureMatrix* f);

/// NORMALIZE=2: eight of those columns (outer_prod, float_mad, float_addsub, select, B0_bytes,
/// B0_lines, B1_lines, B2_lines) are also copied, as log2(x / total) + 64 (0 stays 0), into the
/// eight GPU columns, which are zero on CPU targets; the columns themselves stay.
void AddSizeShares(FeatureMatrix* f);

}  // namespace tirtune
