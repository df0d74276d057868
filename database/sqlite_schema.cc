// EnsureSqliteSchema: schema version 2 and the migration from version 1.
//
// Version 1 (tirtune 0.0.x) kept the target as text in every record, the run times only as a JSON
// array (no median column, so top-k had to scan), no trace hash (so a retried measurement made a
// second row), and neither device nor program version. Version 2 adds a target table, the
// median and its index, the trace hash with a uniqueness constraint, device, program version and
// the workload's name.
#include "sqlite_schema.h"

#include <fmt/core.h>

#include "record_check.h"
#include "workload_text.h"

namespace tirtune::database_internal {
namespace {

constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT;
CREATE TABLE workload (
  id INTEGER PRIMARY KEY,
  shash TEXT NOT NULL,         -- StructuralHashHex; not unique (collisions are told apart by IR)
  name TEXT NOT NULL,
  ir TEXT NOT NULL,            -- printed PrimFunc, parses back to it
  created_at REAL NOT NULL     -- unix seconds
) STRICT;
CREATE INDEX workload_shash ON workload (shash);
CREATE TABLE target (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE     -- canonical target string
) STRICT;
CREATE TABLE tuning_record (
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workload (id),
  target_id INTEGER NOT NULL REFERENCES target (id),
  trace_hash TEXT NOT NULL,    -- FNV-1a of the trace text: the record's identity
  trace TEXT NOT NULL,         -- compact Trace::ToJson text
  status TEXT NOT NULL,        -- ok, build_error, runtime_error, timeout, wrong_result, runner_lost
  run_secs TEXT NOT NULL,      -- JSON array of seconds
  median_secs REAL,            -- NULL without samples
  error TEXT NOT NULL,
  device TEXT NOT NULL,
  program_version TEXT NOT NULL,
  created_at REAL NOT NULL,    -- unix seconds
  UNIQUE (workload_id, target_id, trace_hash)
) STRICT;
CREATE INDEX tuning_record_best ON tuning_record (workload_id, target_id, status, median_secs);
)sql";

int ReadVersion(SqliteConnection& db) {
  SqliteStatement tables = db.Prepare(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  tables.Step();
  if (tables.Int(0) == 0) return 0;
  SqliteStatement has_version = db.Prepare(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  has_version.Step();
  if (has_version.Int(0) == 0) {
    TT_USER_ERROR("'{}' is a SQLite database but not a tirtune database (no schema_version table)",
                  db.path());
  }
  SqliteStatement version = db.Prepare("SELECT max(version) FROM schema_version");
  if (!version.Step() || version.IsNull(0)) {
    TT_USER_ERROR("'{}': the schema_version table is empty", db.path());
  }
  return static_cast<int>(version.Int(0));
}

void CreateV2(SqliteConnection& db) {
  db.Exec(kSchemaV2);
  db.Exec(fmt::format("INSERT INTO schema_version VALUES ({})", kSqliteSchemaVersion));
}

/// Version 1 → 2, inside the caller's write transaction. Rows are carried over as they are, with
/// the new columns computed where they can be; a row that cannot be read stays, to be skipped
/// with a warning when read, as in any database.
void MigrateV1ToV2(SqliteConnection& db, const WarningHandler& warn) {
  db.Exec(
      "ALTER TABLE tuning_record RENAME TO v1_tuning_record;"
      "ALTER TABLE workload RENAME TO v1_workload;"
      "DROP INDEX IF EXISTS workload_shash;"
      "DROP INDEX IF EXISTS tuning_record_workload;"
      "DROP TABLE schema_version;");
  CreateV2(db);

  SqliteStatement read_workloads =
      db.Prepare("SELECT id, shash, ir, created_at FROM v1_workload ORDER BY id");
  SqliteStatement insert_workload = db.Prepare(
      "INSERT INTO workload (id, shash, name, ir, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
  while (read_workloads.Step()) {
    std::string ir = read_workloads.Text(2), problem;
    std::optional<PrimFunc> func = ParseWorkloadText(ir, &problem);
    insert_workload.Reset()
        .Bind(1, read_workloads.Int(0))
        .Bind(2, std::string_view(read_workloads.Text(1)))
        .Bind(3, std::string_view(func ? (*func)->name : std::string()))
        .Bind(4, std::string_view(ir))
        .Bind(5, read_workloads.Double(3))
        .Run();
  }

  SqliteStatement read_records = db.Prepare(
      "SELECT workload_id, target, trace, status, run_secs, error, created_at "
      "FROM v1_tuning_record ORDER BY id");
  SqliteStatement find_target = db.Prepare("SELECT id FROM target WHERE key = ?1");
  SqliteStatement insert_target = db.Prepare("INSERT INTO target (key) VALUES (?1)");
  SqliteStatement insert_record = db.Prepare(
      "INSERT INTO tuning_record (workload_id, target_id, trace_hash, trace, status, run_secs, "
      "median_secs, error, device, program_version, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '', '', ?9) ON CONFLICT DO NOTHING");
  SqliteStatement has_workload = db.Prepare("SELECT 1 FROM workload WHERE id = ?1");
  size_t copied = 0, duplicates = 0, orphans = 0;
  while (read_records.Step()) {
    bool known = has_workload.Reset().Bind(1, read_records.Int(0)).Step();
    has_workload.Reset();
    if (!known) {
      ++orphans;
      continue;
    }
    std::string target = read_records.Text(1);
    try {
      target = CanonicalTarget(target);
    } catch (const UserError&) {
      // An empty target stays empty; reading skips the record.
    }
    find_target.Reset().Bind(1, std::string_view(target));
    int64_t target_id;
    if (find_target.Step()) {
      target_id = find_target.Int(0);
    } else {
      insert_target.Reset().Bind(1, std::string_view(target)).Run();
      target_id = sqlite3_last_insert_rowid(db.get());
    }
    find_target.Reset();
    // Stored as the compact text a commit would write, so that committing the same trace again
    // after the migration is recognized as a duplicate.
    std::string trace = read_records.Text(2), problem;
    if (std::optional<nlohmann::json> parsed = ParseTraceText(trace, &problem)) {
      trace = parsed->dump();
    }
    std::string run_secs_text = read_records.Text(4);
    std::optional<double> median;
    if (std::optional<std::vector<double>> run_secs = ParseRunSecsText(run_secs_text, &problem)) {
      median = MedianOf(*run_secs);
    }
    insert_record.Reset()
        .Bind(1, read_records.Int(0))
        .Bind(2, target_id)
        .Bind(3, std::string_view(TraceHash(trace)))
        .Bind(4, std::string_view(trace))
        .Bind(5, std::string_view(read_records.Text(3)))
        .Bind(6, std::string_view(run_secs_text))
        .Bind(7, median)
        .Bind(8, std::string_view(read_records.Text(5)))
        .Bind(9, read_records.Double(6))
        .Run();
    if (sqlite3_changes(db.get()) == 1) {
      ++copied;
    } else {
      ++duplicates;
    }
  }
  read_records.Reset();
  read_workloads.Reset();
  db.Exec("DROP TABLE v1_tuning_record; DROP TABLE v1_workload;");
  warn(fmt::format(
      "'{}' was migrated from schema version 1 to {} ({} records kept, {} duplicates and {} "
      "records of missing workloads dropped); older tirtune versions can no longer open it",
      db.path(), kSqliteSchemaVersion, copied, duplicates, orphans));
}

}  // namespace

void EnsureSqliteSchema(SqliteConnection& db, const WarningHandler& warn) {
  // The common case, an up-to-date file, needs no write lock.
  int version = ReadVersion(db);
  if (version == kSqliteSchemaVersion) return;
  auto check_not_newer = [&db](int v) {
    if (v > kSqliteSchemaVersion) {
      TT_USER_ERROR(
          "'{}' has schema version {}, written by a newer tirtune; this one reads versions 1 to "
          "{}",
          db.path(), v, kSqliteSchemaVersion);
    }
  };
  check_not_newer(version);
  SqliteWriteTransaction tx(db);
  version = ReadVersion(db);  // again: another process may have created or migrated it
  if (version == kSqliteSchemaVersion) return;
  check_not_newer(version);
  if (version == 0) {
    CreateV2(db);
  } else if (version == 1) {
    MigrateV1ToV2(db, warn);
  } else {
    TT_USER_ERROR("'{}' has an invalid schema version {}", db.path(), version);
  }
  tx.Commit();
}

}  // namespace tirtune::database_internal
