// Size shares of feature rows for bench_cost_model_heldout's NORMALIZE experiments.
#include "size_shares.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// The index of the feature column `name`.
size_t Column(const std::string& name) {
  const std::vector<std::string>& names = FeatureNames();
  auto it = std::find(names.begin(), names.end(), name);
  TT_ICHECK(it != names.end(), "no feature column '{}'", name);
  return static_cast<size_t>(it - names.begin());
}

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

void AddSizeShares(FeatureMatrix* f) {
  static const std::vector<size_t> columns = [] {
    std::vector<size_t> c;
    for (const char* name : {"outer_prod", "float_mad", "float_addsub", "select", "B0_bytes",
                             "B0_lines", "B1_lines", "B2_lines"}) {
      c.push_back(Column(name));
    }
    return c;
  }();
  static const size_t gpu = Column("is_gpu");
  double scale = std::log2(1 + TotalFloatOps(*f));
  for (size_t r = 0; r < f->rows; ++r) {
    float* row = f->data.data() + r * FeatureMatrix::kNumFeatures;
    for (size_t i = 0; i < columns.size(); ++i) {
      float value = row[columns[i]];
      row[gpu + i] = value != 0 ? static_cast<float>(value - scale + 64) : 0.0f;
    }
  }
}

}  // namespace tirtune
