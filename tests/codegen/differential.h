// Differential testing of compiled kernels against the reference interpreter: both run on the
// same seeded random inputs and every parameter (inputs and outputs) must agree afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"

namespace tirtune::test_codegen {

/// Seeded random arrays, one per parameter of `func`, as the interpreter draws them.
inline std::vector<NDArray> RandomArgs(const PrimFunc& func, uint64_t seed) {
  return MakeRandomArgs(func, seed);
}

inline std::vector<NDArray> CopyAll(const std::vector<NDArray>& arrays) {
  std::vector<NDArray> out;
  for (const NDArray& a : arrays) out.push_back(a.Copy());
  return out;
}

/// Compares two arrays element by element: exactly for integers and bools, within
/// atol + rtol * |expected| for floats (NaN matches NaN).
inline ::testing::AssertionResult AllClose(const NDArray& expected, const NDArray& actual,
                                           double rtol, double atol) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure()
           << "sizes differ: " << expected.size() << " vs " << actual.size();
  }
  bool exact = !expected.dtype().is_float();
  int reported = 0;
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  bool ok = true;
  for (int64_t i = 0; i < expected.size(); ++i) {
    double e = expected.GetDouble(i), a = actual.GetDouble(i);
    bool same = exact ? e == a
                      : (std::isnan(e) && std::isnan(a)) || e == a ||
                            std::fabs(e - a) <= atol + rtol * std::fabs(e);
    if (!same) {
      if (ok) result = ::testing::AssertionFailure();
      ok = false;
      if (reported++ < 8) result << "\n  element " << i << ": expected " << e << ", got " << a;
    }
  }
  return result;
}

/// Runs `func` through the interpreter and `kernel` on the same random inputs and expects every
/// parameter to agree.
inline void ExpectMatchesInterpreter(const PrimFunc& func, const Kernel& kernel, uint64_t seed,
                                     double rtol = 1e-5, double atol = 1e-5) {
  std::vector<NDArray> expected = RandomArgs(func, seed);
  std::vector<NDArray> actual = CopyAll(expected);
  Interpret(func, expected);
  ASSERT_EQ(kernel.Run(actual), 0);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(AllClose(expected[i], actual[i], rtol, atol))
        << "parameter " << i << " (" << func->params[i]->name << ") of\n"
        << Print(func);
  }
}

/// Parses, compiles for the host and compares with the interpreter over a few seeds.
inline void CheckText(const std::string& text, double rtol = 1e-5, double atol = 1e-5,
                      const CodegenOptions& options = {}, const Target& target = Target::Host()) {
  PrimFunc func = ParsePrimFunc(text);
  std::unique_ptr<Kernel> kernel = JitCompile(func, target, options);
  for (uint64_t seed : {1, 2, 3}) ExpectMatchesInterpreter(func, *kernel, seed * 100, rtol, atol);
}

}  // namespace tirtune::test_codegen
