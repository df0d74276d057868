// What the lowering tests share: parsing IR text, comparing a pass's output with expected text
// (printing both sides and the first difference), and comparing the numbers two functions
// compute under the reference interpreter (a flattened parameter holds the same elements in the
// same order as the original, so parameters are compared element by element).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/verify.h"
#include "tirtune/lower/lower.h"
#include "tirtune/lower/passes.h"

namespace tirtune::testing {

inline PrimFunc ParseFunc(const std::string& text) { return ParsePrimFunc(text, "test"); }

/// Fails with both texts when `actual` is not structurally equal to the parsed `expected`.
inline void ExpectFuncEqual(const PrimFunc& actual, const std::string& expected) {
  PrimFunc want = ParseFunc(expected);
  std::optional<std::string> diff = StructuralDiff(actual, want);
  EXPECT_FALSE(diff.has_value()) << "first difference: " << *diff << "\n--- actual\n"
                                 << Print(actual) << "--- expected\n"
                                 << Print(want);
}

/// An empty string when both functions compute the same numbers from the same random inputs
/// (every parameter compared, relative tolerance `tolerance`); otherwise what differs.
inline std::string CompareNumbers(const PrimFunc& original, const PrimFunc& transformed,
                                  uint64_t seed = 7, double tolerance = 1e-5) {
  std::vector<std::string> problems = VerifyWellFormed(transformed);
  if (!problems.empty()) return "not well formed: " + problems[0];
  std::vector<NDArray> want = InterpretWithRandomInputs(original, seed);
  std::vector<NDArray> got;
  try {
    got = InterpretWithRandomInputs(transformed, seed);
  } catch (const InterpError& e) {
    return std::string("interpreter: ") + e.what();
  }
  if (want.size() != got.size()) return "different parameter counts";
  for (size_t p = 0; p < want.size(); ++p) {
    if (want[p].size() != got[p].size()) {
      return "parameter " + original->params[p]->name + " has a different size";
    }
    for (int64_t i = 0; i < want[p].size(); ++i) {
      double a = want[p].GetDouble(i), b = got[p].GetDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;  // e.g. batch_norm of a negative variance
      if (!(std::fabs(a - b) <= tolerance * (1 + std::fabs(a)))) {
        return "parameter " + original->params[p]->name + " element " + std::to_string(i) + ": " +
               std::to_string(a) + " vs " + std::to_string(b);
      }
    }
  }
  return "";
}

/// Expects `transformed` to compute what `original` computes.
inline void ExpectSameNumbers(const PrimFunc& original, const PrimFunc& transformed) {
  std::string problem = CompareNumbers(original, transformed);
  EXPECT_EQ(problem, "") << "--- original\n"
                         << Print(original) << "--- transformed\n"
                         << Print(transformed);
}

}  // namespace tirtune::testing
