// What every schedule-primitive test checks besides its expected IR: that the recorded trace
// survives JSON serialization and replays to the same function, and that the scheduled function
// computes the same numbers as the original under the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/verify.h"
#include "tirtune/schedule/schedule.h"

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

/// Serializes the trace to JSON text, reads it back, replays it on `original`, and expects the
/// same function as `sch` holds.
inline void ExpectTraceRoundTrip(const Schedule& sch, const PrimFunc& original) {
  std::string text = sch.trace().ToJson().dump();
  Trace reread = Trace::FromJson(nlohmann::json::parse(text));
  Schedule replay(original);
  reread.ApplyTo(replay);
  std::optional<std::string> diff = StructuralDiff(replay.func(), sch.func());
  EXPECT_FALSE(diff.has_value()) << "replay differs: " << *diff << "\ntrace:\n"
                                 << sch.trace().ToText();
  EXPECT_EQ(replay.trace().ToJson(), sch.trace().ToJson());
}

/// Runs both functions on the same random inputs and expects equal outputs (every parameter is
/// compared, inputs included).
inline void ExpectSameNumbers(const PrimFunc& original, const PrimFunc& scheduled,
                              uint64_t seed = 7, double tolerance = 1e-5) {
  std::vector<std::string> problems = VerifyWellFormed(scheduled);
  for (const std::string& p : problems) ADD_FAILURE() << "not well formed: " << p;
  std::vector<NDArray> want = InterpretWithRandomInputs(original, seed);
  std::vector<NDArray> got = InterpretWithRandomInputs(scheduled, seed);
  ASSERT_EQ(want.size(), got.size());
  for (size_t p = 0; p < want.size(); ++p) {
    ASSERT_EQ(want[p].size(), got[p].size());
    for (int64_t i = 0; i < want[p].size(); ++i) {
      double a = want[p].GetDouble(i), b = got[p].GetDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;  // e.g. sqrt of a negative random variance
      ASSERT_LE(std::fabs(a - b), tolerance * (1 + std::fabs(a)))
          << "parameter " << original->params[p]->name << " element " << i << ": " << a
          << " vs " << b;
    }
  }
}

/// Runs `body`, expecting a ScheduleError of `kind` whose short message contains `text`, and
/// expects the schedule's function and trace to be unchanged.
template <typename Fn>
void ExpectScheduleError(Schedule& sch, const std::string& kind, const std::string& text,
                         Fn&& body) {
  PrimFunc before = sch.func();
  size_t trace_size = sch.trace().insts().size();
  try {
    body();
    ADD_FAILURE() << "expected " << kind;
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.Kind()), kind) << e.ShortMessage();
    EXPECT_NE(e.ShortMessage().find(text), std::string::npos) << e.ShortMessage();
    EXPECT_FALSE(e.DetailedMessage(sch.func()).empty());
  }
  EXPECT_TRUE(sch.func().same_as(before)) << "a failed primitive changed the function";
  EXPECT_EQ(sch.trace().insts().size(), trace_size) << "a failed primitive was recorded";
}

}  // namespace tirtune::testing
