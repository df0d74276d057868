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

}  // namespace
}  // namespace tirtune
