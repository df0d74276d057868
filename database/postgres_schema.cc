// EnsurePostgresSchema and the schema's versions. Version 1 has the layout of SQLite's version 2
// (database/schema/README.md) in PostgreSQL types; top-k reads the index tuning_record_best,
// which ends in id so that the tie-break by commit order comes from the index too.
#include "postgres_schema.h"

#include <fmt/core.h>

namespace tirtune::database_internal {
namespace {

constexpr const char* kCreateV1 = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS workload (
  id bigserial PRIMARY KEY,
  shash text NOT NULL,                -- StructuralHashHex; not unique (collisions: told apart by IR)
  name text NOT NULL,
  ir text NOT NULL,                   -- printed PrimFunc, parses back to it
  created_at double precision NOT NULL  -- unix seconds
);
CREATE INDEX IF NOT EXISTS workload_shash ON workload (shash);
CREATE TABLE IF NOT EXISTS target (
  id bigserial PRIMARY KEY,
  key text NOT NULL UNIQUE            -- canonical target string
);
CREATE TABLE IF NOT EXISTS tuning_record (
  id bigserial PRIMARY KEY,           -- commit order
  workload_id bigint NOT NULL REFERENCES workload (id),
  target_id bigint NOT NULL REFERENCES target (id),
  trace_hash text NOT NULL,           -- FNV-1a of the trace text: the record's identity
  trace text NOT NULL,                -- compact Trace::ToJson text, kept byte for byte
  status text NOT NULL,               -- ok, build_error, runtime_error, timeout, wrong_result, ...
  run_secs text NOT NULL,             -- JSON array of seconds
  median_secs double precision,       -- NULL without samples
  error text NOT NULL,
  device text NOT NULL,
  program_version text NOT NULL,
  created_at double precision NOT NULL,  -- unix seconds
  UNIQUE (workload_id, target_id, trace_hash)
);
CREATE INDEX IF NOT EXISTS tuning_record_best
  ON tuning_record (workload_id, target_id, status, median_secs, id);
)sql";

/// Migrations in order: running those above a database's version brings it to the current one.
struct Migration {
  int to_version;
  const char* sql;
};
constexpr Migration kMigrations[] = {
    {1, kCreateV1},
};
static_assert(kMigrations[std::size(kMigrations) - 1].to_version == kPostgresSchemaVersion);

/// The stored version; 0 when the database has no schema_version table.
int ReadVersion(PostgresConnection& db) {
  PgRows has_table =
      db.Query("SELECT to_regclass('schema_version') IS NOT NULL", {}, "reading the schema");
  if (has_table.Text(0, 0) != "t") return 0;
  PgRows version = db.Query("SELECT max(version) FROM schema_version", {}, "reading the schema");
  if (version.IsNull(0, 0))
    TT_USER_ERROR("{}: the schema_version table is empty", db.description());
  return static_cast<int>(version.Int(0, 0));
}

void CheckNotNewer(PostgresConnection& db, int version) {
  if (version > kPostgresSchemaVersion) {
    TT_USER_ERROR(
        "{} has schema version {}, written by a newer tirtune; this one reads versions 1 to {}",
        db.description(), version, kPostgresSchemaVersion);
  }
  if (version < 0) TT_USER_ERROR("{} has an invalid schema version {}", db.description(), version);
}

/// UserError when the schema tirtune would write to already has a table of one of its names:
/// someone else's, which tirtune must neither use nor change.
void CheckNoForeignTables(PostgresConnection& db) {
  PgRows tables = db.Query(
      "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = current_schema() AND c.relname IN ('workload', 'target', "
      "'tuning_record') ORDER BY c.relname",
      {}, "reading the schema");
  if (tables.size() == 0) return;
  TT_USER_ERROR(
      "{} is not a tirtune database: it has a table '{}' but no schema_version table; use another "
      "database, or another schema (e.g. add ?options=-csearch_path%3Dtirtune to the URL after "
      "CREATE SCHEMA tirtune)",
      db.description(), tables.Text(0, 0));
}

}  // namespace

void EnsurePostgresSchema(PostgresConnection& db, bool create) {
  // The common case, an up-to-date database, takes no lock.
  int version = ReadVersion(db);
  if (version == kPostgresSchemaVersion) return;
  CheckNotNewer(db, version);
  if (version == 0 && !create) {
    TT_USER_ERROR("{} holds no tirtune database (no schema_version table)", db.description());
  }
  // A session lock, taken before the transaction starts. A session refreshes its cached view of
  // the catalog when a transaction starts or locks a table, not when it takes an advisory lock:
  // under pg_advisory_xact_lock, a second opener's to_regclass still missed the tables the first
  // had just committed (the concurrent-open test caught it). CREATE TABLE IF NOT EXISTS alone is
  // not safe either: two creators may both pass the check and one then fails.
  db.Exec(fmt::format("SELECT pg_advisory_lock({}, 0)", kSchemaLockClass), "locking the schema");
  struct Unlock {
    PostgresConnection& db;
    ~Unlock() {
      try {
        db.Exec(fmt::format("SELECT pg_advisory_unlock({}, 0)", kSchemaLockClass),
                "unlocking the schema");
      } catch (const UserError&) {
        // The connection is gone, and the server released the lock with it.
      }
    }
  } unlock{db};
  PgTransaction tx(db);
  version = ReadVersion(db);  // again: another process may have created or migrated it
  if (version == kPostgresSchemaVersion) {
    tx.Commit();
    return;
  }
  CheckNotNewer(db, version);
  if (version == 0) CheckNoForeignTables(db);
  for (const Migration& m : kMigrations) {
    if (m.to_version > version) {
      db.Exec(m.sql, fmt::format("migrating the schema to version {}", m.to_version));
    }
  }
  db.Exec(fmt::format("DELETE FROM schema_version; INSERT INTO schema_version VALUES ({})",
                      kPostgresSchemaVersion),
          "writing the schema version");
  tx.Commit();
}

}  // namespace tirtune::database_internal
