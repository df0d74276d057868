// Reading JSON from outside: nesting is limited before the document is built, and errors are
// short and located.
#include "tirtune/schedule/json_text.h"

#include <gtest/gtest.h>

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonText, ParsesOrdinaryDocuments) {
  nlohmann::json j =
      ParseJsonText(R"({"format": "tirtune-trace", "insts": [[1, 2], {"a": null}]})", "trace.json");
  EXPECT_EQ(j["insts"][0][1], 2);
  EXPECT_NO_THROW(ParseJsonText(Nested(kMaxJsonDepth), "x"));
}

TEST(JsonText, RefusesDeepNestingWithoutOverflowingTheStack) {
  std::string why;
  EXPECT_FALSE(TryParseJsonText(Nested(kMaxJsonDepth + 1), &why).has_value());
  EXPECT_EQ(why, "nested deeper than 64 levels");
  // Deep enough to overflow the stack if anything recursed over it.
  std::string deep = R"({"insts": )" + Nested(200000) + "}";
  try {
    ParseJsonText(deep, "t.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "t.json: nested deeper than 64 levels");
  }
}

TEST(JsonText, ErrorsNameTheDocumentAndNeverEchoALongLine) {
  std::string garbage = R"({"a": tru)" + std::string(2 << 20, 'x') + "}";
  try {
    ParseJsonText(garbage, "big.json");
    FAIL();
  } catch (const UserError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.rfind("big.json: not valid JSON: ", 0), 0u) << what;
    EXPECT_LT(what.size(), 300u) << what;
    EXPECT_EQ(what.find("[json.exception"), std::string::npos) << what;
  }
}

TEST(JsonText, ExceptionTextIsForPeople) {
  nlohmann::json j = {{"version", "two"}};
  try {
    (void)j.at("version").get<int>();
    FAIL();
  } catch (const nlohmann::json::exception& e) {
    EXPECT_EQ(JsonErrorText(e), "type must be number, but is string");
  }
}

}  // namespace
}  // namespace tirtune
