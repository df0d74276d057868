// Deterministic randomized robustness test of the parser: mutated valid inputs either parse or
// throw ParseError, never anything else (no InternalError, no crash), and whatever parses prints
// and parses back to an equal function. Also checks the nesting limits on deep inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

// Valid functions to mutate; the libFuzzer script seeds its corpus with the same files.
std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  for (const char* name : {"gemm.tir", "staged.tir", "lowered.tir"}) {
    std::ifstream in(std::string(TIRTUNE_TEST_DATA_DIR) + "/parse_valid/" + name);
    std::stringstream text;
    text << in.rdbuf();
    seeds.push_back(text.str());
  }
  return seeds;
}

// Fragments that are likely to land the parser in interesting states.
const char* const kTokens[] = {
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "=",
    "==",
    "+",
    "-",
    "*",
    "//",
    "%",
    "<",
    "not ",
    " and ",
    " or ",
    "for ",
    "if ",
    "else:",
    "with ",
    "block(",
    "\"",
    "\\",
    "\t",
    "\n",
    "    ",
    "#",
    "0",
    "-1",
    "1e",
    "1e99",
    "99999999999999999999",
    "inf",
    "nan",
    "True",
    "int32(",
    "float16(",
    "cast(",
    "axis.spatial(",
    "axis.reduce(",
    "reads(",
    "writes(",
    "where(",
    "alloc_buffer(",
    "let(",
    "select(",
    "ramp(",
    "broadcast(",
    "min=",
    "thread=",
    "@prim_func",
    "def ",
    "Buffer(",
    "evaluate(",
    "A",
    "vi",
    "i",
    "$",
    "\x80",
    "\r",
};

enum class Outcome { kParsed, kRejected, kBroken };

// Parses `text`. Anything but a ParseError escaping, or a parse that does not survive printing
// and parsing again, records a failure and is kBroken.
Outcome Check(const std::string& text) {
  std::vector<PrimFunc> funcs;
  try {
    funcs = ParsePrimFuncs(text, "fuzz.tir");
  } catch (const ParseError&) {
    return Outcome::kRejected;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception: " << e.what() << "\ninput:\n" << text;
    return Outcome::kBroken;
  }
  for (const PrimFunc& f : funcs) {
    std::string printed = Print(f);
    try {
      PrimFunc again = ParsePrimFunc(printed, "reprinted.tir");
      if (!StructuralEqual(f, again)) {
        ADD_FAILURE() << "reparse differs: " << StructuralDiff(f, again).value_or("")
                      << "\ninput:\n"
                      << text << "\nprinted:\n"
                      << printed;
        return Outcome::kBroken;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "printed text does not parse: " << e.what() << "\ninput:\n"
                    << text << "\nprinted:\n"
                    << printed;
      return Outcome::kBroken;
    }
  }
  return Outcome::kParsed;
}

std::string Mutate(std::string text, std::mt19937& rng) {
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  int rounds = 1 + static_cast<int>(pick(3));
  for (int r = 0; r < rounds && !text.empty(); ++r) {
    size_t at = pick(text.size());
    switch (pick(6)) {
      case 0:  // flip a byte
        text[at] = static_cast<char>(pick(256));
        break;
      case 1:  // delete a span
        text.erase(at, 1 + pick(8));
        break;
      case 2:  // insert a token
        text.insert(at, kTokens[pick(std::size(kTokens))]);
        break;
      case 3:  // truncate
        text.resize(at);
        break;
      case 4: {  // duplicate a line
        size_t begin = text.rfind('\n', at);
        begin = begin == std::string::npos ? 0 : begin + 1;
        size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        text.insert(begin, text.substr(begin, end - begin));
        break;
      }
      default: {  // swap two bytes
        size_t other = pick(text.size());
        std::swap(text[at], text[other]);
        break;
      }
    }
  }
  return text;
}

TEST(ParserFuzz, MutatedInputsParseOrFailCleanly) {
  std::vector<std::string> seeds = Seeds();
  std::mt19937 rng(20240611);
  int parsed = 0, broken = 0;
  constexpr int kIterations = 5000;
  for (int n = 0; n < kIterations && broken < 5; ++n) {
    Outcome outcome = Check(Mutate(seeds[static_cast<size_t>(n) % seeds.size()], rng));
    parsed += outcome == Outcome::kParsed;
    broken += outcome == Outcome::kBroken;
  }
  // Some mutations (a flipped digit, a duplicated store) leave the text valid.
  EXPECT_GT(parsed, 0);
}

TEST(ParserFuzz, SeedsParse) {
  for (const std::string& seed : Seeds()) {
    ASSERT_FALSE(seed.empty());
    EXPECT_EQ(Check(seed), Outcome::kParsed);
  }
}

std::string Function(const std::string& body) {
  return "@prim_func\ndef f(A: Buffer((4,), float32), B: Buffer((4,), int64)):\n" + body;
}

void ExpectNestingError(const std::string& text) {
  try {
    ParsePrimFuncs(text);
    ADD_FAILURE() << "deep input parsed";
  } catch (const ParseError& e) {
    EXPECT_NE(e.detail().find("nesting too deep"), std::string::npos) << e.detail();
  }
}

TEST(ParserFuzz, DeepNestingIsRejected) {
  constexpr int kDeep = 20000;
  ExpectNestingError(
      Function("    A[0] = " + std::string(kDeep, '(') + "1.0" + std::string(kDeep, ')') + "\n"));
  std::string nots;
  for (int i = 0; i < kDeep; ++i) nots += "not ";
  ExpectNestingError(Function("    if " + nots + "True:\n        A[0] = 1.0\n"));
  std::string negations;
  for (int i = 0; i < kDeep; ++i) negations += "- ";
  ExpectNestingError(Function("    B[0] = " + negations + "B[1]\n"));
  std::string calls;
  for (int i = 0; i < kDeep; ++i) calls += "exp(";
  ExpectNestingError(Function("    A[0] = " + calls + "1.0" + std::string(kDeep, ')') + "\n"));
  std::string loops;
  for (int i = 0; i < 2000; ++i) {
    loops += std::string(4 * (i + 1), ' ') + "for i" + std::to_string(i) + " in range(2):\n";
  }
  ExpectNestingError(Function(loops + std::string(4 * 2001, ' ') + "A[0] = 1.0\n"));
  std::string sum = "B[0]";
  for (int i = 0; i < kDeep; ++i) sum += " + 1";
  ExpectNestingError(Function("    B[0] = " + sum + "\n"));
}

TEST(ParserFuzz, ModerateNestingParses) {
  constexpr int kDepth = 200;
  EXPECT_NO_THROW(ParsePrimFunc(Function("    A[0] = " + std::string(kDepth, '(') + "1.0" +
                                         std::string(kDepth, ')') + "\n")));
  std::string sum = "B[0]";
  for (int i = 0; i < 500; ++i) sum += " + 1";
  EXPECT_NO_THROW(ParsePrimFunc(Function("    B[0] = " + sum + "\n")));
}

}  // namespace
}  // namespace tirtune
