// OpenDatabase's choice of backend, record status names, target canonicalization and medians.
#include <gtest/gtest.h>

#include "test_records.h"

namespace tirtune {
namespace {

using testing::TempDir;

TEST(OpenDatabase, ChoosesTheBackendFromTheFileName) {
  TempDir dir;
  EXPECT_NE(OpenDatabase(dir.File("a.db"))->Describe().find("SQLite"), std::string::npos);
  EXPECT_NE(OpenDatabase(dir.File("a.sqlite"))->Describe().find("SQLite"), std::string::npos);
  EXPECT_NE(OpenDatabase(dir.File("a.jsonl"))->Describe().find("JSON-lines"), std::string::npos);
  EXPECT_NE(OpenDatabase(":memory:")->Describe().find("in-memory"), std::string::npos);
}

TEST(OpenDatabase, AnUnknownExtensionIsAUserErrorNamingTheFile) {
  try {
    OpenDatabase("tuning.csv");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'tuning.csv'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".jsonl"), std::string::npos) << e.what();
  }
}

TEST(OpenDatabase, MissingFilesAreCreatedOnlyWhenAllowed) {
  TempDir dir;
  OpenOptions no_create;
  no_create.create_if_missing = false;
  EXPECT_THROW(OpenDatabase(dir.File("x.jsonl"), no_create), UserError);
  EXPECT_THROW(OpenDatabase(dir.File("x.db"), no_create), UserError);
  EXPECT_FALSE(std::filesystem::exists(dir.File("x.jsonl")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("x.db")));
}

TEST(RecordStatus, NamesAreStableStrings) {
  std::vector<std::pair<RecordStatus, std::string>> all = {
      {RecordStatus::kOk, "ok"},
      {RecordStatus::kBuildError, "build_error"},
      {RecordStatus::kRuntimeError, "runtime_error"},
      {RecordStatus::kTimeout, "timeout"},
      {RecordStatus::kWrongResult, "wrong_result"},
      {RecordStatus::kRunnerLost, "runner_lost"},
      {RecordStatus::kDeviceLost, "device_lost"}};
  for (const auto& [status, name] : all) {
    EXPECT_EQ(RecordStatusName(status), name);
    EXPECT_EQ(ParseRecordStatus(name), status);
  }
  EXPECT_FALSE(ParseRecordStatus("OK").has_value());
  EXPECT_FALSE(ParseRecordStatus("").has_value());
}

TEST(CanonicalTarget, CollapsesAndTrimsWhitespace) {
  EXPECT_EQ(CanonicalTarget("llvm -mcpu=znver5"), "llvm -mcpu=znver5");
  EXPECT_EQ(CanonicalTarget("  llvm\t\t-mcpu=znver5 \n -num-cores=2\r\n"),
            "llvm -mcpu=znver5 -num-cores=2");
  EXPECT_EQ(CanonicalTarget("cuda"), "cuda");
  EXPECT_THROW(CanonicalTarget(" \t\n"), UserError);
  EXPECT_THROW(CanonicalTarget(""), UserError);
}

TEST(MedianOf, MiddleSampleOrMeanOfTheTwoMiddleOnes) {
  EXPECT_FALSE(MedianOf({}).has_value());
  EXPECT_EQ(MedianOf({3.0}), 3.0);
  EXPECT_EQ(MedianOf({5.0, 1.0, 3.0}), 3.0);
  EXPECT_EQ(MedianOf({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(MedianOf({1.0, 100.0, 1.0}), 1.0);  // unlike the mean, an outlier does not move it
}

}  // namespace
}  // namespace tirtune
