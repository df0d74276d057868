// The JSON-lines backend beyond the shared contract: the file format, and lines that cannot be
// used (hostile, truncated, from a newer version).
#include <gtest/gtest.h>

#include <limits>

#include <fstream>
#include <sstream>

#include "test_records.h"

namespace tirtune {
namespace {

using json = nlohmann::json;
using testing::Gemm;
using testing::MakeRecord;
using testing::TempDir;
using testing::TraceNumbered;
using testing::Warnings;

constexpr const char* kCpu = "llvm -mcpu=znver5 -num-cores=2";

std::string ReadFile(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

/// A file with one workload and two ok records; returns the workload id.
WorkloadId WriteSmallFile(const std::string& path) {
  std::unique_ptr<Database> db = OpenDatabase(path);
  WorkloadId w = db->CommitWorkload(Gemm()).id;
  db->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(w, kCpu, 2, {1.0})});
  return w;
}

TEST(Jsonl, OneHeaderThenOneObjectPerLineInCommitOrder) {
  TempDir dir;
  std::string path = dir.File("t.jsonl");
  WorkloadId w = WriteSmallFile(path);
  std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], R"({"format":"tirtune-database","version":1})");
  json workload = json::parse(lines[1]);
  EXPECT_EQ(workload["type"], "workload");
  EXPECT_EQ(workload["id"], w);
  EXPECT_EQ(workload["name"], Gemm()->name);
  EXPECT_EQ(lines[2].rfind(R"({"type":"record","workload":)", 0), 0u) << lines[2];
  json record = json::parse(lines[2]);
  EXPECT_EQ(record["target"], kCpu);
  EXPECT_EQ(record["status"], "ok");
  EXPECT_EQ(record["run_secs"], json({2.0}));
  EXPECT_EQ(record["median_secs"], 2.0);
  EXPECT_EQ(record["trace"], TraceNumbered(1));
  EXPECT_EQ(json::parse(lines[3])["trace"], TraceNumbered(2));
}

TEST(Jsonl, TheSameContentsGiveTheSameBytes) {
  TempDir dir;
  WriteSmallFile(dir.File("a.jsonl"));
  WriteSmallFile(dir.File("b.jsonl"));
  std::vector<std::string> a = Lines(ReadFile(dir.File("a.jsonl")));
  std::vector<std::string> b = Lines(ReadFile(dir.File("b.jsonl")));
  ASSERT_EQ(a.size(), b.size());
  // Equal but for the workload's commit time.
  for (size_t i = 2; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
}

TEST(Jsonl, UnusableLinesAreSkippedWithAWarning) {
  TempDir dir;
  std::string path = dir.File("t.jsonl");
  WorkloadId w = WriteSmallFile(path);
  json good = json::parse(Lines(ReadFile(path))[2]);
  auto with = [&](const char* key, json value) {
    json j = good;
    j[key] = std::move(value);
    return j.dump() + "\n";
  };
  Append(path, "this is not json\n");
  Append(path, "[1, 2, 3]\n");
  Append(path, R"({"type": "comment", "text": "hello"})"
               "\n");
  Append(path, with("trace", "garbage"));
  Append(path, with("trace", json{{"format", "tirtune-trace"}, {"version", 1}, {"insts", 5}}));
  Append(path, with("status", "excellent"));
  Append(path, with("run_secs", json{-1.0}));
  Append(path, with("run_secs", json{1e300}));
  Append(path, with("run_secs", "fast"));
  Append(path, with("median_secs", 0.5));
  Append(path, with("workload", 77));
  Append(path, with("target", "   "));
  Append(path, with("created_at", "yesterday"));
  Append(path, R"({"type": "workload", "id": 5, "ir": "not ir"})"
               "\n");
  Append(path, R"({"type": "record", "workload": 1})"
               "\n");
  Append(path, "\n");
  Append(path, with("workload", 1e62));  // a number, but no int64
  Append(path, with("workload", json(std::numeric_limits<uint64_t>::max())));
  Warnings warnings;
  std::unique_ptr<Database> db = OpenDatabase(path, warnings.Options());
  EXPECT_EQ(db->Size(), 2u);
  EXPECT_EQ(db->TopK(w, kCpu, 5).size(), 2u);
  EXPECT_EQ(warnings.messages.size(), 17u) << ::testing::PrintToString(warnings.messages);
  for (const char* expected :
       {"line 5: not valid JSON", "line 6: not an object", "unknown type \"comment\"",
        "trace is not a valid trace", "unknown status \"excellent\"", "negative", "absurd",
        "median_secs does not match", "no readable workload with id 77", "target is empty",
        "workload text does not parse", "line 19:",
        "line 21: \"workload\" is not an integer of at most 64 bits", "line 22:"}) {
    EXPECT_TRUE(warnings.Any(expected))
        << expected << " in " << ::testing::PrintToString(warnings.messages);
  }
  // Still writable, and the new lines load.
  EXPECT_EQ(db->CommitRecords({MakeRecord(w, kCpu, 3, {0.5})}), 1u);
  EXPECT_EQ(OpenDatabase(path, Warnings().Options())->Size(), 3u);
}

TEST(Jsonl, AnIncompleteLastLineIsSkippedAndTheNextAppendStartsANewLine) {
  TempDir dir;
  std::string path = dir.File("t.jsonl");
  WorkloadId w = WriteSmallFile(path);
  std::string text = ReadFile(path);
  std::string cut = text.substr(0, text.size() - 40);  // a writer killed mid-line
  std::ofstream(path, std::ios::binary | std::ios::trunc) << cut;
  Warnings warnings;
  {
    std::unique_ptr<Database> db = OpenDatabase(path, warnings.Options());
    EXPECT_EQ(db->Size(), 1u);
    EXPECT_TRUE(warnings.Any("incomplete last line"))
        << ::testing::PrintToString(warnings.messages);
    EXPECT_EQ(db->CommitRecords({MakeRecord(w, kCpu, 2, {1.0}), MakeRecord(w, kCpu, 3, {3.0})}),
              2u);
  }
  Warnings again;
  std::unique_ptr<Database> db = OpenDatabase(path, again.Options());
  EXPECT_EQ(db->Size(), 3u);
  EXPECT_EQ(db->TopK(w, kCpu, 1).at(0).trace, TraceNumbered(2));
  EXPECT_EQ(again.messages.size(), 1u);  // the old fragment, on its own line now
}

TEST(Jsonl, FilesThatAreNotJsonlDatabasesAreRefused) {
  TempDir dir;
  auto error_for = [&](const std::string& name, const std::string& content) {
    std::string path = dir.File(name);
    std::ofstream(path, std::ios::binary) << content;
    try {
      OpenDatabase(path);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = error_for("notes.jsonl", "hello\nworld\n");
  EXPECT_NE(e.find("is not a tirtune JSON-lines database"), std::string::npos) << e;
  e = error_for("other.jsonl", R"({"format": "something-else"})"
                               "\n");
  EXPECT_NE(e.find("is not a tirtune JSON-lines database"), std::string::npos) << e;
  e = error_for("binary.jsonl", std::string("SQLite format 3\0\x10\x00", 18));
  EXPECT_NE(e.find("is not a tirtune JSON-lines database"), std::string::npos) << e;
  e = error_for("newer.jsonl", R"({"format": "tirtune-database", "version": 2})"
                               "\n");
  EXPECT_NE(e.find("format version 2"), std::string::npos) << e;
  EXPECT_NE(e.find("newer.jsonl"), std::string::npos) << e;
}

TEST(Jsonl, AnEmptyFileBecomesADatabase) {
  TempDir dir;
  std::string path = dir.File("empty.jsonl");
  std::ofstream(path).close();
  std::unique_ptr<Database> db = OpenDatabase(path);
  db->CommitWorkload(Gemm());
  EXPECT_EQ(OpenDatabase(path)->Workloads().size(), 1u);
}

TEST(Jsonl, EqualWorkloadsUnderTwoIdsAreMerged) {
  TempDir dir;
  std::string path = dir.File("t.jsonl");
  WorkloadId w = WriteSmallFile(path);
  // A second copy of the workload (e.g. two exports concatenated) under another id.
  std::vector<std::string> lines = Lines(ReadFile(path));
  json copy = json::parse(lines[1]);
  copy["id"] = 40;
  json record = json::parse(lines[2]);
  record["workload"] = 40;
  record["trace"] = TraceNumbered(7);
  Append(path, copy.dump() + "\n" + record.dump() + "\n");
  std::unique_ptr<Database> db = OpenDatabase(path);
  EXPECT_EQ(db->Workloads().size(), 1u);
  EXPECT_EQ(db->TopK(w, kCpu, 10).size(), 3u);
}

TEST(Jsonl, OneWriterAtATimeAndNeverOnAStaleView) {
  TempDir dir;
  std::string path = dir.File("shared.jsonl");
  std::unique_ptr<Database> first = OpenDatabase(path);
  std::unique_ptr<Database> second = OpenDatabase(path);
  WorkloadEntry w = first->CommitWorkload(Gemm(16));
  // The first writer holds the file: the second is refused and writes nothing.
  try {
    second->CommitWorkload(Gemm(32));
    FAIL() << "two writers were let in";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("one writer at a time"), std::string::npos) << e.what();
  }
  first->CommitRecords({MakeRecord(w.id, "llvm -num-cores=2", 1, {1e-3})});
  first.reset();
  // The first is gone, but what the second read is stale: its ids could clash. Refused too.
  try {
    second->CommitWorkload(Gemm(32));
    FAIL() << "a stale view was written";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since it was read"), std::string::npos)
        << e.what();
  }
  second.reset();
  // Reopened, it sees everything and writes.
  std::unique_ptr<Database> third = OpenDatabase(path);
  EXPECT_EQ(third->Size(), 1u);
  EXPECT_NE(third->CommitWorkload(Gemm(32)).id, w.id);
  EXPECT_EQ(third->Workloads().size(), 2u);
}

}  // namespace
}  // namespace tirtune
