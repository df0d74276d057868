// What the GPU lowering tests share: running a lowered GPU module in the GPU-semantics executor
// on the inputs the interpreter gets, and comparing with the interpreter on the unscheduled
// function.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tirtune/interp/gpu_executor.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/lower/lower_gpu.h"

namespace tirtune::testing {

/// The numbers the executor computes for `module` from the random inputs of `seed` (the module's
/// parameters are flattened; MakeRandomArgs fills them in the same order as the originals).
inline std::vector<NDArray> ExecuteWithRandomInputs(const GpuModule& module, uint64_t seed) {
  std::vector<NDArray> args =
      MakeRandomArgs(PrimFunc(module.name, module.params, MakeEvaluate(Bool(true))), seed);
  ExecuteGpuModule(module, args);
  return args;
}

/// An empty string when `module` computes what `original` computes under the interpreter
/// (relative tolerance `tolerance`); otherwise what differs or what the executor reported.
inline std::string CompareWithInterpreter(const PrimFunc& original, const GpuModule& module,
                                          uint64_t seed = 7, double tolerance = 1e-4) {
  std::vector<NDArray> want = InterpretWithRandomInputs(original, seed);
  std::vector<NDArray> got;
  try {
    got = ExecuteWithRandomInputs(module, seed);
  } catch (const InterpError& e) {
    return std::string("executor: ") + e.what();
  }
  for (size_t p = 0; p < want.size(); ++p) {
    for (int64_t i = 0; i < want[p].size(); ++i) {
      double a = want[p].GetDouble(i), b = got[p].GetDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;  // both computed NaN (sqrt of a negative)
      if (!(std::fabs(a - b) <= tolerance * (1 + std::fabs(a)))) {
        return "parameter " + original->params[p]->name + " element " + std::to_string(i) + ": " +
               std::to_string(a) + " vs " + std::to_string(b);
      }
    }
  }
  return "";
}

}  // namespace tirtune::testing
