// The SQLite schema: creating today's version and migrating older files to it. The versions are
// described in database/schema/README.md.
#pragma once

#include "sqlite_connection.h"
#include "tirtune/database/database.h"

namespace tirtune::database_internal {

/// The version this program writes.
inline constexpr int kSqliteSchemaVersion = 2;

/// Brings the open file to kSqliteSchemaVersion: creates the schema in an empty file, migrates an
/// older one (in one write transaction, so a crash leaves the old version intact), and throws
/// UserError for a newer version or a SQLite file that is not a tirtune database. `warn` hears
/// about a migration.
void EnsureSqliteSchema(SqliteConnection& db, const WarningHandler& warn);

}  // namespace tirtune::database_internal
