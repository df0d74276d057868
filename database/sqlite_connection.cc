// SqliteConnection, SqliteStatement and SqliteWriteTransaction.
#include "sqlite_connection.h"

#include <utility>

#include "tirtune/support/error.h"

namespace tirtune::database_internal {

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::Reset() {
  sqlite3_reset(stmt_);  // its result repeats the last step's error, already reported
  sqlite3_clear_bindings(stmt_);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  db_->Check(sqlite3_bind_int64(stmt_, index, value), "bind");
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, double value) {
  db_->Check(sqlite3_bind_double(stmt_, index, value), "bind");
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::string_view value) {
  db_->Check(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      "bind");
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::optional<double> value) {
  if (value) return Bind(index, *value);
  db_->Check(sqlite3_bind_null(stmt_, index), "bind");
  return *this;
}

bool SqliteStatement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string sql = sqlite3_sql(stmt_) ? sqlite3_sql(stmt_) : "";
  sqlite3_reset(stmt_);
  db_->Check(rc, sql.substr(0, sql.find_first_of("(\n")));
  return false;
}

void SqliteStatement::Run() {
  while (Step()) {
  }
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double SqliteStatement::Double(int column) const { return sqlite3_column_double(stmt_, column); }
std::string SqliteStatement::Text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  int n = sqlite3_column_bytes(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

SqliteConnection::SqliteConnection(std::string path, int flags) : path_(std::move(path)) {
  int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    TT_USER_ERROR("cannot open '{}': {}", path_, message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

SqliteConnection::~SqliteConnection() { sqlite3_close_v2(db_); }

void SqliteConnection::Check(int rc, std::string_view what) const {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  int primary = rc & 0xff;
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
    TT_USER_ERROR("'{}' is not a usable SQLite database ({})", path_, sqlite3_errmsg(db_));
  }
  TT_USER_ERROR("'{}': {}: {}", path_, what, sqlite3_errmsg(db_));
}

void SqliteConnection::Exec(const std::string& sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);  // sqlite3_errmsg has the same text
  Check(rc, sql.substr(0, sql.find_first_of("(\n;")));
}

SqliteStatement SqliteConnection::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  Check(rc, "prepare");
  return SqliteStatement(this, stmt);
}

SqliteWriteTransaction::SqliteWriteTransaction(SqliteConnection& db) : db_(db) {
  db_.Exec("BEGIN IMMEDIATE");
}

SqliteWriteTransaction::~SqliteWriteTransaction() {
  if (open_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteWriteTransaction::Commit() {
  db_.Exec("COMMIT");
  open_ = false;
}

}  // namespace tirtune::database_internal
