// A thin RAII layer over the SQLite C API: a connection and reusable prepared statements whose
// failures become UserErrors that name the file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tirtune::database_internal {

class SqliteConnection;

/// A prepared statement, reset before each use. Bind indices are 1-based, columns 0-based.
class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(SqliteConnection* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  /// Resets the statement and clears its bindings; returns *this for chaining binds.
  SqliteStatement& Reset();
  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, double value);
  SqliteStatement& Bind(int index, std::string_view value);
  SqliteStatement& Bind(int index, std::optional<double> value);
  /// Advances; true while there is a row.
  bool Step();
  /// Runs to completion (for statements without rows).
  void Run();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;

 private:
  SqliteConnection* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteConnection {
 public:
  /// Opens `path` with `flags` (SQLITE_OPEN_*); UserError naming the file on failure.
  SqliteConnection(std::string path, int flags);
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;
  ~SqliteConnection();

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }

  /// Runs one or more statements without results.
  void Exec(const std::string& sql);
  SqliteStatement Prepare(std::string_view sql);
  /// Throws UserError "'PATH': WHAT: <sqlite message>" unless `rc` is SQLITE_OK, _ROW or _DONE.
  void Check(int rc, std::string_view what) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

/// BEGIN IMMEDIATE on construction (taking the write lock at once, so that the busy timeout
/// applies instead of a later SQLITE_BUSY_SNAPSHOT), ROLLBACK on destruction unless committed.
class SqliteWriteTransaction {
 public:
  explicit SqliteWriteTransaction(SqliteConnection& db);
  SqliteWriteTransaction(const SqliteWriteTransaction&) = delete;
  SqliteWriteTransaction& operator=(const SqliteWriteTransaction&) = delete;
  ~SqliteWriteTransaction();
  void Commit();

 private:
  SqliteConnection& db_;
  bool open_ = true;
};

}  // namespace tirtune::database_internal
