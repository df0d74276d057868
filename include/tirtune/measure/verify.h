// Checking a candidate kernel's outputs against a reference run: dtype-aware tolerances, and a
// report of the worst element when they differ. A kernel's time counts only after this passes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/support/ndarray.h"

namespace tirtune {

/// |actual - expected| <= atol + rtol * |expected|, per element.
struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
  /// Defaults by element type: float32 (1e-4, 1e-5), float16/bfloat16 (1e-2, 1e-3), float64
  /// (1e-9, 1e-12), integers exact. Sums over many terms in float32 may need more: `atol` is
  /// additionally scaled by the largest |expected| of the array.
  static Tolerance For(DataType dtype);
  /// For(dtype) with a float32 rtol raised for sums of `reduction_length` terms: a sum of K
  /// terms in another order differs by about eps * sqrt(K), so rtol is at least 8 * eps * sqrt(K)
  /// (1e-4 up to K ~ 10,000; 9.5e-4 at a million terms).
  static Tolerance ForSum(DataType dtype, double reduction_length);
};

/// What CompareArrays multiplies `atol` by for `expected`: its largest finite |value|, at least 1.
double AtolScale(const NDArray& expected);

struct VerifyResult {
  bool ok = true;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  /// Empty when ok; otherwise names the array, the first bad element and both values.
  std::string message;
};

/// Compares `actual` with `expected` element by element. NaN matches only NaN; shapes and
/// dtypes must agree.
VerifyResult CompareArrays(const std::string& name, const NDArray& expected, const NDArray& actual,
                           const Tolerance& tolerance);
/// Compares each pair of arrays (names label the messages), skipping a pair whose expected array
/// is undefined (a parameter not to compare); the message is the first failing array's.
/// `reduction_length`: the most terms one output element sums (LongestReduction); each array is
/// compared with Tolerance::ForSum of its dtype.
VerifyResult CompareAll(const std::vector<std::string>& names, const std::vector<NDArray>& expected,
                        const std::vector<NDArray>& actual, double reduction_length = 1);

}  // namespace tirtune
