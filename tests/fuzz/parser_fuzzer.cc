// libFuzzer target for the text-format parser (built by scripts/fuzz.sh parser; CMake builds it
// into fuzz_replay_parser, which replays tests/data/parse_errors and parse_valid).
// Any input must either parse or throw ParseError; whatever parses must print and parse back
// to a structurally equal function. Anything else (another exception, a sanitizer report, a
// trap) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tirtune;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<PrimFunc> funcs;
  try {
    funcs = ParsePrimFuncs(text, "fuzz.tir");
  } catch (const ParseError&) {
    return 0;  // rejected cleanly
  }
  // Outside the try: a ParseError here means the printer wrote text the parser rejects, and it
  // must escape (libFuzzer reports an uncaught exception as a crash).
  for (const PrimFunc& f : funcs) {
    PrimFunc again = ParsePrimFunc(Print(f), "reprinted.tir");
    if (!StructuralEqual(f, again)) __builtin_trap();
  }
  return 0;
}
