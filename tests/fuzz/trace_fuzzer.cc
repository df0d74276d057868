// libFuzzer target for schedule traces (built by scripts/fuzz.sh trace, and replayed over its
// committed corpus by the fuzz_replay tests): the JSON text a database row or a --trace file holds,
// parsed with the depth limit every reader uses, read into a Trace and replayed on a small GEMM
// (tests/schedule/gemm_text.h). Each step may only refuse with a user error (a JSON error,
// TraceFormatError, ScheduleError, UserError); an internal error, another exception, a sanitizer
// report, a trap or a time-out (an absurd loop run) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "../schedule/gemm_text.h"
#include "tirtune/ir/parser.h"
#include "tirtune/schedule/error.h"
#include "tirtune/schedule/json_text.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/schedule/trace.h"
#include "tirtune/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tirtune;
  static const PrimFunc gemm = ParsePrimFunc(testing::kGemm, "gemm.tir");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  std::optional<nlohmann::json> json = TryParseJsonText(text, &why);
  if (!json) return 0;  // refused with a located message
  Trace trace;
  try {
    trace = Trace::FromJson(*json);
  } catch (const UserError&) {
    return 0;  // TraceFormatError and the like
  }
  Schedule sch(gemm);
  try {
    trace.ApplyTo(sch);
  } catch (const ScheduleError&) {
  } catch (const UserError&) {
  }
  return 0;
}
