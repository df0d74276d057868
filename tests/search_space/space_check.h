// What the design-space tests check about a sampled schedule: that its lowered form computes the
// same outputs as the unscheduled function under the reference interpreter, and that its trace
// survives JSON and replays to the same function.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/lower/lower.h"
#include "tirtune/search/space.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::testing {

/// "NAME:S0,S1,...": the workload at its small shape.
inline std::string SmallSpec(const WorkloadDef& def) {
  std::string spec = def.name + ":";
  for (size_t i = 0; i < def.small_shape.size(); ++i) {
    spec += (i == 0 ? "" : ",") + std::to_string(def.small_shape[i]);
  }
  return spec;
}

/// The names of every workload of the operator library.
inline std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) names.push_back(def.name);
  return names;
}

/// A CPU configuration for tests: two cores, otherwise the defaults.
inline CpuSpaceConfig TestConfig() {
  CpuSpaceConfig config;
  config.num_cores = 2;
  return config;
}

/// Empty when `scheduled`, lowered, computes what `original` computes on the same random inputs
/// (every parameter compared, with a float32 tolerance for reassociated sums); otherwise the
/// first difference.
inline std::string CompareOutputs(const PrimFunc& original, const PrimFunc& scheduled,
                                  uint64_t seed = 7) {
  std::vector<NDArray> want = InterpretWithRandomInputs(original, seed);
  std::vector<NDArray> got = InterpretWithRandomInputs(Lower(scheduled), seed);
  for (size_t p = 0; p < want.size(); ++p) {
    double scale = 0;
    for (int64_t i = 0; i < want[p].size(); ++i) {
      if (!std::isnan(want[p].GetDouble(i)))
        scale = std::max(scale, std::fabs(want[p].GetDouble(i)));
    }
    for (int64_t i = 0; i < want[p].size(); ++i) {
      double a = want[p].GetDouble(i), b = got[p].GetDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;  // e.g. sqrt of a negative random variance
      if (!(std::fabs(a - b) <= 1e-4 * std::fabs(a) + 1e-5 * (1 + scale))) {
        return original->params[p]->name + "[" + std::to_string(i) + "]: expected " +
               std::to_string(a) + ", got " + std::to_string(b);
      }
    }
  }
  return {};
}

/// The trace of `sch` through JSON text and back, replayed on `original` (the postprocessing
/// steps included), gives a structurally equal function.
inline void ExpectTraceRoundTrip(const Schedule& sch, const PrimFunc& original) {
  Trace reread = Trace::FromJson(nlohmann::json::parse(sch.trace().ToJson().dump()));
  Schedule replay(original);
  reread.ApplyTo(replay);
  std::optional<std::string> diff = StructuralDiff(replay.func(), sch.func());
  EXPECT_FALSE(diff.has_value()) << "replay differs: " << *diff << "\ntrace:\n"
                                 << sch.trace().ToText();
}

/// The block named `name` of `func` (null when there is none).
inline const BlockNode* FindBlock(const PrimFunc& func, const std::string& name) {
  ScheduleState state(func);
  const BlockRealizeNode* realize = state.FindBlock(name);
  return realize == nullptr ? nullptr : realize->block.get();
}

}  // namespace tirtune::testing
