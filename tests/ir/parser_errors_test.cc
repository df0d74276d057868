// Broken IR text yields a ParseError at the right place with the right message, and never
// anything else. Each case is a file in tests/data/parse_errors whose first line reads
// `# expect: LINE:COL: text that the error's detail contains`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tirtune/ir/parser.h"

namespace tirtune {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CaseFiles() {
  std::vector<std::string> files;
  for (const auto& entry :
       fs::directory_iterator(fs::path(TIRTUNE_TEST_DATA_DIR) / "parse_errors")) {
    if (entry.path().extension() == ".tir") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Expectation {
  int line = 0;
  int column = 0;
  std::string detail;
};

class ParseErrorCase : public testing::TestWithParam<std::string> {};

TEST_P(ParseErrorCase, ReportsTheExpectedError) {
  fs::path path = fs::path(TIRTUNE_TEST_DATA_DIR) / "parse_errors" / GetParam();
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();

  std::smatch m;
  std::string first_line = source.substr(0, source.find('\n'));
  static const std::regex kExpect(R"(# expect: (\d+):(\d+)?:? ?(.*))");
  ASSERT_TRUE(std::regex_match(first_line, m, kExpect)) << "bad expectation line: " << first_line;
  Expectation want{std::stoi(m[1]), m[2].matched ? std::stoi(m[2]) : 0, m[3]};

  try {
    ParsePrimFuncs(source, GetParam());
    ADD_FAILURE() << "parsed without error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), want.line) << e.what();
    if (want.column != 0) {
      EXPECT_EQ(e.column(), want.column) << e.what();
    }
    EXPECT_NE(e.detail().find(want.detail), std::string::npos)
        << "detail \"" << e.detail() << "\" lacks \"" << want.detail << "\"";
    std::string prefix = GetParam() + ":" + std::to_string(e.line()) + ":" +
                         std::to_string(e.column()) + ": error: ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
  // Any other exception (an InternalError, std::exception) fails the test by escaping.
}

INSTANTIATE_TEST_SUITE_P(Corpus, ParseErrorCase, testing::ValuesIn(CaseFiles()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return "case_" + name;
                         });

TEST(ParseErrorCorpus, HasAtLeastThirtyCases) { EXPECT_GE(CaseFiles().size(), 30u); }

// An error on a 2.4 MB line shows a window around the column (the whole line, and a caret line as
// long, made a 4.8 MB message), with the caret still under the offending character.
TEST(ParseErrorMessage, ALongLineIsShownAsAWindowAroundTheColumn) {
  std::string expr;
  for (int i = 0; i < 400000; ++i) expr += "1.0 + ";
  std::string text = "@prim_func\ndef f(A: Buffer((4,), float32)):\n    A[0] = " + expr + "$ + 2.0" +
                     std::string(100000, ' ') + "\n";
  try {
    ParsePrimFunc(text, "long.tir");
    FAIL() << "parsed";
  } catch (const ParseError& e) {
    std::string message = e.what();
    EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
    EXPECT_EQ(message.find("long.tir:3:2400012: error: unexpected character '$'"), 0u) << message;
    size_t first = message.find('\n'), second = message.find('\n', first + 1);
    std::string shown = message.substr(first + 1, second - first - 1);
    std::string caret = message.substr(second + 1);
    EXPECT_EQ(shown.substr(0, 3), "...");
    EXPECT_EQ(shown.substr(shown.size() - 3), "...");
    ASSERT_EQ(caret.back(), '^');
    EXPECT_EQ(shown[caret.size() - 1], '$') << shown << "\n" << caret;
  }
}

}  // namespace
}  // namespace tirtune
