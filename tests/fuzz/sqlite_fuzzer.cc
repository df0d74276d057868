// libFuzzer target for rows of a SQLite tuning database (built by scripts/fuzz.sh sqlite, and
// replayed over its committed corpus by the fuzz_replay tests). The input holds the columns of
// one workload row and one record row, separated by the byte 0x1E, in this order:
//   ir, trace, status, run_secs, median_secs, error, device, program_version, target, name,
//   shash, created_at
// (a missing column takes the value of a valid GEMM record; a number column that does not
// parse as a number is stored as NULL). The rows are inserted with SQLite's own API into a
// database with tirtune's schema beside a valid workload and record, so every value a hostile
// hand could store reaches tirtune; then the database is opened as `tirtune db` opens it and
// every reader runs, and everything is copied into a memory database as `db export` copies.
// Opening may refuse with a UserError; what opens must answer every query without an exception
// (damaged rows are skipped with a warning), a sanitizer report, a trap or a hang.
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "../schedule/gemm_text.h"
#include "read_everything.h"
#include "tirtune/database/database.h"
#include "tirtune/database/transfer.h"
#include "tirtune/ir/parser.h"
#include "tirtune/support/error.h"

namespace {

namespace fs = std::filesystem;

// A valid record of the GEMM in gemm_text.h: the columns a missing input column takes.
const char* const kDefaults[] = {
    nullptr,  // ir: testing::kGemm
    R"({"format":"tirtune-trace","insts":[{"attrs":{"name":"C"},"inputs":[],"kind":"GetBlock",)"
    R"("outputs":["b0"],"v":1},{"attrs":{},"inputs":["b0"],"kind":"GetLoops","outputs":["l1",)"
    R"("l2","l3"],"v":1},{"attrs":{},"inputs":["l1","l2"],"kind":"Fuse","outputs":["l4"],)"
    R"("v":1}],"version":1})",
    "ok",
    "[1e-05,1.1e-05,1.2e-05]",
    "1.1e-05",
    "",
    "fuzz-cpu",
    "0.1.0",
    "llvm -mcpu=x86-64",
    "gemm",
    "0123456789abcdef",
    "1700000000",
};
constexpr int kColumns = 12;

void Exec(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) std::abort();
}

// Binds column text `value` as TEXT, or as REAL/NULL for a number column.
void Bind(sqlite3_stmt* st, int index, const std::string& value, bool number) {
  if (!number) {
    sqlite3_bind_text(st, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return;
  }
  char* end = nullptr;
  double d = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size()) {
    sqlite3_bind_null(st, index);
  } else {
    sqlite3_bind_double(st, index, d);
  }
}

// Inserts the workload row (id 2) and the record row into `path`; false when SQLite refuses
// them (a NOT NULL column given NULL): nothing of that kind can be in a tirtune file.
bool InsertRows(const std::string& path, const std::vector<std::string>& col) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) std::abort();
  Exec(db, "PRAGMA synchronous = OFF");
  bool ok = true;
  auto insert = [&](const char* sql, const std::vector<std::pair<int, bool>>& columns) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) std::abort();
    int index = 1;
    for (auto [column, number] : columns) Bind(st, index++, col[column], number);
    ok = ok && sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
  };
  insert("INSERT INTO workload (id, ir, name, shash, created_at) VALUES (2, ?, ?, ?, ?)",
         {{0, false}, {9, false}, {10, false}, {11, true}});
  insert("INSERT OR IGNORE INTO target (id, key) VALUES (2, ?)", {{8, false}});
  insert(
      "INSERT INTO tuning_record (workload_id, target_id, trace_hash, trace, status, run_secs,"
      " median_secs, error, device, program_version, created_at)"
      " VALUES (2, (SELECT id FROM target WHERE key = ?), 'ffffffffffffffff', ?, ?, ?, ?, ?, ?,"
      " ?, ?)",
      {{8, false}, {1, false}, {2, false}, {3, false}, {4, true}, {5, false}, {6, false},
       {7, false}, {11, true}});
  sqlite3_close(db);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tirtune;
  static const PrimFunc gemm = ParsePrimFunc(testing::kGemm, "gemm.tir");
  static const std::string base = "/tmp/tirtune_sqlite_fuzz_" + std::to_string(getpid());
  static const std::string path = base + ".db";
  static const std::string template_path = base + "-template.db";
  OpenOptions quiet;
  quiet.on_warning = [](const std::string&) {};
  static const bool made = [&] {
    // The template: tirtune's schema with one valid workload (id 1) and record.
    fs::remove(template_path);
    std::unique_ptr<Database> db = OpenSqliteDatabase(template_path, quiet);
    TuningRecord record;
    record.workload = db->CommitWorkload(gemm).id;
    record.target = kDefaults[8];
    record.trace = nlohmann::json::parse(kDefaults[1]);
    record.status = RecordStatus::kOk;
    record.run_secs = {1e-5, 1.1e-5};
    record.device = kDefaults[6];
    db->CommitRecords({record});
    return true;
  }();
  (void)made;

  std::vector<std::string> col(kColumns);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  bool exhausted = false;
  for (int i = 0; i < kColumns; ++i) {
    if (exhausted) {
      col[i] = i == 0 ? std::string(testing::kGemm) : kDefaults[i];
      continue;
    }
    size_t cut = input.find('\x1e');
    col[i] = std::string(input.substr(0, cut));
    exhausted = cut == std::string_view::npos;
    if (!exhausted) input = input.substr(cut + 1);
  }
  fs::copy_file(template_path, path, fs::copy_options::overwrite_existing);
  fs::remove(path + "-wal");
  fs::remove(path + "-shm");
  if (!InsertRows(path, col)) return 0;

  std::unique_ptr<Database> db;
  try {
    OpenOptions options = quiet;
    options.create_if_missing = false;
    db = OpenSqliteDatabase(path, options);
  } catch (const UserError&) {
    return 0;  // refused with a message
  }
  testing::ReadEverything(*db);
  db->FindWorkload(gemm);
  std::unique_ptr<Database> copy = MakeMemoryDatabase(quiet);
  CopyDatabase(*db, *copy);
  return 0;
}
