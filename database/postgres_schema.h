// The PostgreSQL schema: its versions, and bringing a database to the current one. The versions
// are described in database/schema/README.md.
#pragma once

#include "postgres_connection.h"
#include "tirtune/database/database.h"

namespace tirtune::database_internal {

/// The version of the PostgreSQL schema this program writes (its own sequence, independent of
/// the SQLite schema's).
inline constexpr int kPostgresSchemaVersion = 1;

/// Advisory lock keys (class, object) of this program; pg_advisory_xact_lock(int, int) takes them.
inline constexpr int32_t kSchemaLockClass = 0x74697274;    // "tirt"
inline constexpr int32_t kWorkloadLockClass = 0x74697275;  // one object per 32 bits of shash

/// Brings the connected database to kPostgresSchemaVersion: creates the tables in a database
/// without them (when `create` is true; otherwise UserError), runs the migrations of an older
/// version, and throws UserError for a newer version or for tables of the same names that
/// tirtune did not create. Setup runs in one transaction under an advisory lock, so several
/// processes opening a new database at once create it once, and a failure leaves it unchanged.
void EnsurePostgresSchema(PostgresConnection& db, bool create);

}  // namespace tirtune::database_internal
