// The SQLite backend beyond the shared contract: schema versions and migration, files that are
// not (whole) databases, hostile rows, the index behind top-k, and opening while another
// connection holds a lock.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_records.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

using testing::Gemm;
using testing::MakeRecord;
using testing::TempDir;
using testing::TraceNumbered;
using testing::Warnings;

const std::filesystem::path kFixtures = std::filesystem::path(__FILE__).parent_path() / "fixtures";
const std::filesystem::path kSchemaDir =
    std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "database" /
    "schema";
constexpr const char* kCpu = "llvm -mcpu=znver5 -num-cores=2";

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A raw connection for writing what tirtune itself never would.
class RawSqlite {
 public:
  explicit RawSqlite(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
  }
  ~RawSqlite() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << "\n" << sql;
    sqlite3_free(err);
  }
  /// Every row of `sql`, columns joined by '|'.
  std::vector<std::string> Query(const std::string& sql) {
    std::vector<std::string> rows;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db_);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::string row;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const unsigned char* t = sqlite3_column_text(stmt, i);
        row += (i ? "|" : "") + std::string(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      rows.push_back(row);
    }
    sqlite3_finalize(stmt);
    return rows;
  }
  /// Tables, their columns and their indexes: what two equal schemas share.
  std::vector<std::string> SchemaSignature() {
    std::vector<std::string> out;
    for (const std::string& t :
         Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
               "ORDER BY name")) {
      out.push_back("table " + t);
      for (const std::string& c : Query("PRAGMA table_info(" + t + ")")) out.push_back(c);
      for (const std::string& i :
           Query("SELECT name, \"unique\" FROM pragma_index_list('" + t + "') ORDER BY name")) {
        std::string name = i.substr(0, i.find('|'));
        out.push_back("index " + (name.rfind("sqlite_autoindex", 0) == 0 ? "auto" : i));
        for (const std::string& c : Query("PRAGMA index_info(" + name + ")")) out.push_back(c);
      }
      out.push_back("strict " + Query("SELECT strict FROM pragma_table_list('" + t + "')")[0]);
    }
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST(Sqlite, OpensInWalModeWithTheCurrentSchema) {
  TempDir dir;
  std::string path = dir.File("t.db");
  OpenSqliteDatabase(path);
  RawSqlite raw(path);
  EXPECT_EQ(raw.Query("PRAGMA journal_mode"), std::vector<std::string>{"wal"});
  EXPECT_EQ(raw.Query("SELECT version FROM schema_version"), std::vector<std::string>{"2"});
}

TEST(Sqlite, SwitchingToWalWaitsForAnotherConnectionsLock) {
  // Switching a rollback-journal file to WAL upgrades a read transaction to a write one, which
  // SQLite refuses at once with "database is locked" while another connection holds the write
  // lock, without the busy handler (two upgraders would deadlock): what several processes opening
  // a new file together ran into. Opening waits instead, up to the busy timeout.
  TempDir dir;
  std::string path = dir.File("t.db");
  OpenSqliteDatabase(path);
  RawSqlite raw(path);
  raw.Exec("PRAGMA journal_mode = DELETE");
  raw.Exec("BEGIN IMMEDIATE");  // the reserved lock of a writer of the rollback-journal file
  std::thread writer([&raw] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    raw.Exec("COMMIT");
  });
  std::string error;
  try {
    OpenSqliteDatabase(path);
  } catch (const UserError& e) {
    error = e.what();
  }
  writer.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(RawSqlite(path).Query("PRAGMA journal_mode"), std::vector<std::string>{"wal"});
}

TEST(Sqlite, TheDocumentedSchemaMatchesTheCode) {
  TempDir dir;
  OpenSqliteDatabase(dir.File("code.db"));
  RawSqlite from_code(dir.File("code.db"));
  RawSqlite from_doc(dir.File("doc.db"));
  from_doc.Exec(ReadFile(kSchemaDir / "v2.sql"));
  EXPECT_EQ(from_code.SchemaSignature(), from_doc.SchemaSignature());
  EXPECT_FALSE(from_code.SchemaSignature().empty());
}

TEST(Sqlite, TopKReadsTheIndexInsteadOfScanning) {
  TempDir dir;
  std::string path = dir.File("t.db");
  OpenSqliteDatabase(path);
  RawSqlite raw(path);
  raw.Exec("ANALYZE");
  // The query of SqliteDatabase::TopK.
  std::vector<std::string> plan = raw.Query(
      "EXPLAIN QUERY PLAN SELECT r.id FROM tuning_record r JOIN target t ON t.id = r.target_id "
      "WHERE r.workload_id = 1 AND r.target_id = 1 AND r.status = 'ok' "
      "ORDER BY r.median_secs, r.id");
  std::string text;
  for (const std::string& row : plan) text += row + "\n";
  EXPECT_NE(text.find("INDEX tuning_record_best"), std::string::npos) << text;
  EXPECT_EQ(text.find("SCAN r"), std::string::npos) << text;
  EXPECT_EQ(text.find("TEMP B-TREE"), std::string::npos) << text;
}

// ---- Migration

/// A copy of the committed version-1 fixture (made by fixtures/make_v1_fixture.sh).
std::string CopyV1Fixture(const TempDir& dir) {
  std::string path = dir.File("v1.db");
  std::filesystem::copy_file(kFixtures / "v1.db", path);
  return path;
}

TEST(SqliteMigration, AVersion1FileIsMigratedOnOpen) {
  TempDir dir;
  std::string path = CopyV1Fixture(dir);
  {
    RawSqlite raw(path);
    ASSERT_EQ(raw.Query("SELECT version FROM schema_version"), std::vector<std::string>{"1"});
  }
  Warnings warnings;
  std::unique_ptr<Database> db = OpenDatabase(path, warnings.Options());
  EXPECT_TRUE(warnings.Any("migrated from schema version 1 to 2"))
      << ::testing::PrintToString(warnings.messages);
  RawSqlite raw(path);
  EXPECT_EQ(raw.Query("SELECT version FROM schema_version"), std::vector<std::string>{"2"});

  // The workload is found by the hash of a freshly built function.
  std::optional<WorkloadEntry> w = db->FindWorkload(Gemm(16));
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->name, Gemm(16)->name);  // v1 had no name column: taken from the IR

  // The two measurements of trace 1 (v1 kept both) are one record now; the target text of v1
  // (extra spaces) is canonical; the median is computed.
  std::vector<TuningRecord> top = db->TopK(w->id, kCpu, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].trace, TraceNumbered(2));
  EXPECT_EQ(top[0].median_secs, 0.002);
  EXPECT_EQ(top[1].trace, TraceNumbered(1));
  EXPECT_EQ(top[1].run_secs, (std::vector<double>{0.003, 0.004, 0.005}));
  EXPECT_EQ(top[1].median_secs, 0.004);
  EXPECT_EQ(top[1].device, "");
  EXPECT_EQ(db->TopK(w->id, "llvm -mcpu=znver4", 10).size(), 1u);

  // Everything else of the workload: a build error and, skipped with a warning, a row whose
  // trace was garbage already in version 1.
  std::vector<TuningRecord> all = db->RecordsOf(w->id);
  EXPECT_EQ(all.size(), 4u);
  EXPECT_TRUE(warnings.Any("trace is not valid JSON"))
      << ::testing::PrintToString(warnings.messages);
  EXPECT_EQ(db->Stats().size(), 2u);

  // Committing a migrated measurement again is recognized as a duplicate.
  EXPECT_EQ(db->CommitRecords({MakeRecord(w->id, kCpu, 1, {1.0})}), 0u);
  EXPECT_EQ(db->CommitRecords({MakeRecord(w->id, kCpu, 3, {1.0})}), 1u);
}

TEST(SqliteMigration, ReopeningAMigratedFileDoesNotMigrateAgain) {
  TempDir dir;
  std::string path = CopyV1Fixture(dir);
  Warnings first, second;
  OpenDatabase(path, first.Options());
  std::unique_ptr<Database> db = OpenDatabase(path, second.Options());
  EXPECT_TRUE(first.Any("migrated"));
  EXPECT_FALSE(second.Any("migrated"));
  EXPECT_EQ(db->Workloads().size(), 1u);
}

TEST(SqliteMigration, ANewerSchemaIsRefused) {
  TempDir dir;
  std::string path = dir.File("t.db");
  OpenSqliteDatabase(path);
  RawSqlite(path).Exec("UPDATE schema_version SET version = 3");
  try {
    OpenDatabase(path);
    ADD_FAILURE() << "opened a version 3 file";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("newer tirtune"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// ---- Files that are not (whole) databases

std::string OpenError(const std::string& path, OpenOptions options = {}) {
  try {
    OpenDatabase(path, options);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(SqliteFiles, ATextFileIsNotADatabase) {
  TempDir dir;
  std::string path = dir.File("notes.db");
  std::ofstream(path) << "these are my notes, not a database\n";
  std::string error = OpenError(path);
  EXPECT_NE(error.find("is not a SQLite database"), std::string::npos) << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_EQ(ReadFile(path), "these are my notes, not a database\n");  // untouched
}

TEST(SqliteFiles, AnotherProgramsSqliteFileIsNotATirtuneDatabase) {
  TempDir dir;
  std::string path = dir.File("other.db");
  RawSqlite(path).Exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
  std::string error = OpenError(path);
  EXPECT_NE(error.find("not a tirtune database"), std::string::npos) << error;
}

TEST(SqliteFiles, AMissingFileIsCreatedOnlyWhenAllowed) {
  TempDir dir;
  OpenOptions no_create;
  no_create.create_if_missing = false;
  std::string error = OpenError(dir.File("missing.db"), no_create);
  EXPECT_NE(error.find("no such database"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(dir.File("missing.db")));
  error = OpenError(dir.path().string() + "/", no_create);
  EXPECT_FALSE(error.empty());
}

TEST(SqliteFiles, ADirectoryIsNotADatabase) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("d.db"));
  std::string error = OpenError(dir.File("d.db"));
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
}

/// Runs every read on `path`; returns the UserError message, "" when all reads succeeded. Any
/// other exception or a crash fails the test.
std::string ReadEverything(const std::string& path, Warnings* warnings) {
  try {
    std::unique_ptr<Database> db = OpenDatabase(path, warnings->Options());
    size_t n = db->Size();
    for (const WorkloadEntry& w : db->Workloads()) {
      db->RecordsOf(w.id);
      db->TopK(w.id, kCpu, 5);
    }
    db->ForEachRecord([](const TuningRecord&) {});
    db->Stats();
    return n > 0 ? "" : "empty";
  } catch (const UserError& e) {
    return e.what();
  }
}

TEST(SqliteFiles, TruncatedFilesGiveAClearErrorNotACrash) {
  TempDir dir;
  std::string path = dir.File("full.db");
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    WorkloadId w = db->CommitWorkload(Gemm()).id;
    std::vector<TuningRecord> batch;
    for (int i = 0; i < 2000; ++i) batch.push_back(MakeRecord(w, kCpu, i, {1.0 + i}));
    db->CommitRecords(batch);
  }  // the last connection checkpoints the WAL into the file
  uintmax_t size = std::filesystem::file_size(path);
  ASSERT_GT(size, 100000u);
  for (uintmax_t keep : {uintmax_t{50}, uintmax_t{4096}, size / 3, size / 2, size - 4096}) {
    std::string cut = dir.File("cut_" + std::to_string(keep) + ".db");
    std::filesystem::copy_file(path, cut);
    std::filesystem::resize_file(cut, keep);
    Warnings warnings;
    std::string error = ReadEverything(cut, &warnings);
    SCOPED_TRACE(keep);
    EXPECT_FALSE(error.empty()) << "a truncated file read without complaint";
    if (error != "empty") {
      EXPECT_NE(error.find(cut), std::string::npos) << error;
    }
  }
}

TEST(SqliteFiles, OverwrittenPagesGiveAClearErrorNotACrash) {
  TempDir dir;
  std::string path = dir.File("t.db");
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    WorkloadId w = db->CommitWorkload(Gemm()).id;
    std::vector<TuningRecord> batch;
    for (int i = 0; i < 500; ++i) batch.push_back(MakeRecord(w, kCpu, i, {1.0 + i}));
    db->CommitRecords(batch);
  }
  uintmax_t size = std::filesystem::file_size(path);
  for (uintmax_t at = 4096; at + 4096 <= size; at += 4096 * 7) {
    std::string bad = dir.File("bad_" + std::to_string(at) + ".db");
    std::filesystem::copy_file(path, bad);
    {
      std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(at));
      std::string junk(4096, '\xA5');
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    Warnings warnings;
    ReadEverything(bad, &warnings);  // an error or skipped rows, never a crash
  }
}

// ---- Hostile rows

TEST(SqliteRows, UnusableRowsAreSkippedWithAWarning) {
  TempDir dir;
  std::string path = dir.File("t.db");
  WorkloadId w;
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    w = db->CommitWorkload(Gemm()).id;
    db->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(w, kCpu, 2, {3.0})});
  }
  std::string good_trace = TraceNumbered(99).dump();
  auto row = [&](const std::string& trace, const std::string& status, const std::string& run_secs,
                 const std::string& median) {
    static int n = 0;
    return fmt::format(
        "INSERT INTO tuning_record (workload_id, target_id, trace_hash, trace, status, run_secs, "
        "median_secs, error, device, program_version, created_at) VALUES ({}, 1, 'h{}', '{}', "
        "'{}', '{}', {}, '', '', '', 0);",
        w, n++, trace, status, run_secs, median);
  };
  {
    RawSqlite raw(path);
    raw.Exec(row("not json {", "ok", "[0.1]", "0.1"));
    raw.Exec(row(R"({"format": "tirtune-trace", "version": 1, "insts": [{"kind": 5}]})", "ok",
                 "[0.1]", "0.1"));
    raw.Exec(row(good_trace, "fast", "[0.1]", "0.1"));
    raw.Exec(row(good_trace, "ok", "[-0.1]", "-0.1"));
    raw.Exec(row(good_trace, "ok", "[1e308]", "1e308"));
    raw.Exec(row(good_trace, "ok", "[1e999]", "0.1"));  // out of range: not JSON
    raw.Exec(row(good_trace, "ok", "not an array", "0.1"));
    raw.Exec(row(good_trace, "ok", "[\"0.1\"]", "0.1"));
    raw.Exec(row(good_trace, "ok", "[0.5]", "0.01"));  // a median that lies
    raw.Exec(row(good_trace, "ok", "[0.1]", "NULL"));
    raw.Exec(row(good_trace, "ok", "[]", "NULL"));
    raw.Exec(
        "INSERT INTO workload (shash, name, ir, created_at) VALUES ('0000', 'x', 'garbage', 0)");
  }
  Warnings warnings;
  std::unique_ptr<Database> db = OpenDatabase(path, warnings.Options());
  std::vector<TuningRecord> top = db->TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].trace, TraceNumbered(1));
  EXPECT_EQ(db->RecordsOf(w).size(), 2u);
  EXPECT_EQ(db->Workloads().size(), 1u);
  for (const char* expected :
       {"trace is not valid JSON", "trace is not a valid trace", "unknown status 'fast'",
        "negative", "absurd", "not a JSON array", "other than numbers",
        "median_secs does not match", "status ok needs", "workload text does not parse"}) {
    EXPECT_TRUE(warnings.Any(expected))
        << expected << " in " << ::testing::PrintToString(warnings.messages);
  }
  // The file stays usable.
  EXPECT_EQ(db->CommitRecords({MakeRecord(w, kCpu, 3, {0.5})}), 1u);
  EXPECT_EQ(db->TopK(w, kCpu, 1).at(0).trace, TraceNumbered(3));
}

// A row that cannot be used but claims to be the fastest: prune used to rank rows in SQL and
// kept it in place of the good records, deleting those.
TEST(SqliteRows, PruneNeverKeepsAnUnusableRowInPlaceOfAGoodOne) {
  TempDir dir;
  std::string path = dir.File("t.db");
  WorkloadId w;
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    w = db->CommitWorkload(Gemm()).id;
    db->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(w, kCpu, 2, {3.0}),
                       MakeRecord(w, kCpu, 3, {4.0})});
  }
  {
    RawSqlite raw(path);
    raw.Exec(fmt::format(
        "INSERT INTO tuning_record (workload_id, target_id, trace_hash, trace, status, run_secs, "
        "median_secs, error, device, program_version, created_at) VALUES ({}, 1, 'poison', "
        "'garbage {{', 'ok', '[1e-9]', 1e-9, '', '', '', 0);",
        w));
  }
  Warnings warnings;
  std::unique_ptr<Database> db = OpenDatabase(path, warnings.Options());
  EXPECT_EQ(db->Prune(/*keep=*/2), 2u);  // the poisoned row and the third best
  EXPECT_TRUE(warnings.Any("record 4: trace is not valid JSON; skipped"))
      << ::testing::PrintToString(warnings.messages);
  std::vector<TuningRecord> left = db->RecordsOf(w);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].trace, TraceNumbered(1));
  EXPECT_EQ(left[1].trace, TraceNumbered(2));
}

// ---- Hash collisions

TEST(SqliteWorkloads, AHashCollisionIsToldApartByStructuralEquality) {
  TempDir dir;
  std::string path = dir.File("t.db");
  OpenSqliteDatabase(path);
  // A different function stored under Gemm(16)'s hash, as a collision would leave it.
  std::string other_text = Print(Gemm(32));
  std::string escaped;
  for (char c : other_text) escaped += c == '\'' ? std::string("''") : std::string(1, c);
  RawSqlite(path).Exec("INSERT INTO workload (shash, name, ir, created_at) VALUES ('" +
                       StructuralHashHex(Gemm(16)) + "', 'impostor', '" + escaped + "', 0)");
  std::unique_ptr<Database> db = OpenDatabase(path);
  EXPECT_FALSE(db->FindWorkload(Gemm(16)).has_value());
  WorkloadEntry real = db->CommitWorkload(Gemm(16));
  EXPECT_NE(real.id, 1);
  EXPECT_EQ(real.shash, StructuralHashHex(Gemm(16)));
  EXPECT_EQ(db->CommitWorkload(Gemm(16)).id, real.id);
  EXPECT_EQ(db->FindWorkload(Gemm(16))->id, real.id);
  EXPECT_EQ(db->Workloads().size(), 2u);
}

}  // namespace
}  // namespace tirtune
