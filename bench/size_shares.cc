// Size shares of feature rows for bench_cost_model_heldout's NORMALIZE=1 experiment.
#include "size_shares.h"

#include <cmath>
#include <string>
#include <vector>

namespace tirtune {
namespace {

// The candidate's float operations: the sum of its float_* columns (each log2(1 + count)).
double TotalFloatOps(const FeatureMatrix& f) {
  double total = 0;
  for (size_t r = 0; r < f.rows; ++r) {
    for (size_t c = 0; c < FeatureMatrix::kNumFeatures; ++c) {
      if (FeatureNames()[c].rfind("float_", 0) == 0) total += std::exp2(double(f.row(r)[c])) - 1;
    }
  }
  return total;
}

}  // namespace

void NormalizeBySize(FeatureMatrix* f) {
  static const std::vector<bool> extensive = [] {
    std::vector<bool> e(FeatureMatrix::kNumFeatures, false);
    const std::vector<std::string>& names = FeatureNames();
    auto ends_with = [](const std::string& s, const std::string& t) {
      return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
    };
    for (size_t c = 0; c < names.size(); ++c) {
      const std::string& n = names[c];
      bool buffer = n.size() > 2 && n[0] == 'B' && n[2] == '_';
      e[c] = n.rfind("float_", 0) == 0 || n.rfind("int_", 0) == 0 || n == "bool_op" ||
             n == "select" || n == "outer_prod" || n == "alloc_outer_prod" ||
             (buffer &&
              (ends_with(n, "_bytes") || ends_with(n, "_lines") || ends_with(n, "_reuse_ct")) &&
              n.find("_d_") == std::string::npos);
    }
    return e;
  }();
  double scale = std::log2(1 + TotalFloatOps(*f));
  for (float& value : f->data) {
    size_t c = static_cast<size_t>(&value - f->data.data()) % FeatureMatrix::kNumFeatures;
    if (extensive[c] && value != 0) value = static_cast<float>(value - scale + 64);
  }
}

}  // namespace tirtune
