// Helpers shared by the graph tests: seeded arrays, numeric comparison and small graphs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tirtune/graph/executor.h"
#include "tirtune/graph/graph.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/printer.h"

namespace tirtune::graph::testing {

/// A float32 array of `shape` filled from [-1, 1) with `seed`.
inline NDArray RandomArray(const std::vector<int64_t>& shape, uint64_t seed) {
  NDArray a = NDArray::Empty(shape, DataType::Float(32));
  a.FillRandom(seed);
  return a;
}

/// A float32 array of `shape` filled from [lo, hi) (e.g. positive variances).
inline NDArray RandomArray(const std::vector<int64_t>& shape, uint64_t seed, double lo, double hi) {
  NDArray a = NDArray::Empty(shape, DataType::Float(32));
  a.FillRandom(seed, lo, hi);
  return a;
}

/// Every element of `actual` within a relative-and-absolute tolerance of `expected`.
inline ::testing::AssertionResult AllClose(const NDArray& expected, const NDArray& actual,
                                           double tol = 1e-5) {
  if (expected.shape() != actual.shape()) {
    return ::testing::AssertionFailure() << "shapes differ";
  }
  for (int64_t i = 0; i < expected.size(); ++i) {
    double e = expected.GetDouble(i), a = actual.GetDouble(i);
    if (!(std::fabs(e - a) <= tol * (1.0 + std::fabs(e)))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": expected " << e << ", got " << a;
    }
  }
  return ::testing::AssertionSuccess();
}

/// Runs both graphs on the same random inputs and compares every output.
inline ::testing::AssertionResult SameResults(const Graph& before, const Graph& after,
                                              uint64_t seed = 7, double tol = 1e-5) {
  std::vector<NDArray> inputs = MakeRandomInputs(before, seed);
  std::vector<NDArray> expected = RunGraph(before, inputs);
  std::vector<NDArray> actual = RunGraph(after, inputs);
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure() << "output counts differ";
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    ::testing::AssertionResult r = AllClose(expected[i], actual[i], tol);
    if (!r) return r << " (output " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

/// x[1, 6, 6, 3] -> conv2d 3x3 pad 1 (4 channels) -> bias_add -> relu.
inline Graph ConvBiasRelu() {
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 6, 6, 3}));
  ValueId w = g.AddConstant("w", RandomArray({3, 3, 3, 4}, 1));
  ValueId b = g.AddConstant("b", RandomArray({4}, 2));
  ValueId conv = AddOpCall(&g, "conv", "conv2d", {x, w}, {{"pad", 1}});
  ValueId bias = AddOpCall(&g, "bias", "bias_add", {conv, b});
  g.AddOutput(AddOpCall(&g, "relu", "relu", {bias}));
  return g;
}

}  // namespace tirtune::graph::testing
