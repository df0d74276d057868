// A thin RAII layer over libpq: a connection opened from a URL whose failures say what was wrong
// (a bad URL, an unreachable server, authentication, a missing database, a lost connection),
// query results that free themselves, text parameters, and a transaction guard. Messages name
// the database by its URL with the password left out.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tirtune/support/error.h"

namespace tirtune::database_internal {

/// True for a libpq connection URI: "postgresql://..." or "postgres://...".
bool IsPostgresUrl(std::string_view path);

/// `url` without its password (the one in "user:password@" and a "password=" parameter), for
/// messages and Describe().
std::string RedactPostgresUrl(std::string_view url);

/// A failed PostgreSQL operation. It is a UserError (the server, the URL or the network is the
/// user's to fix); `sqlstate` lets callers retry the failures that are safe to retry.
class PostgresError : public UserError {
 public:
  PostgresError(const std::string& what, std::string sqlstate, bool connection_lost)
      : UserError(what), sqlstate_(std::move(sqlstate)), connection_lost_(connection_lost) {}
  /// The five-character SQLSTATE, empty when the server sent none (e.g. a lost connection).
  const std::string& sqlstate() const { return sqlstate_; }
  bool connection_lost() const { return connection_lost_; }
  /// A deadlock or serialization failure: the transaction was rolled back and may be rerun.
  bool retryable() const { return sqlstate_ == "40P01" || sqlstate_ == "40001"; }

 private:
  std::string sqlstate_;
  bool connection_lost_;
};

/// The parameters of one statement, sent as text ($1, $2, ... in the order added).
class PgParams {
 public:
  PgParams& Add(int64_t value);
  PgParams& Add(double value);
  PgParams& Add(std::optional<double> value);
  PgParams& Add(std::string_view value);
  PgParams& AddNull();

  int size() const { return static_cast<int>(values_.size()); }
  /// Pointers into this object, valid until the next Add.
  std::vector<const char*> Pointers() const;

 private:
  std::vector<std::optional<std::string>> values_;
};

/// The rows of a query (text format). Rows and columns are 0-based.
class PgRows {
 public:
  explicit PgRows(PGresult* result) : result_(result) {}

  int size() const { return PQntuples(result_.get()); }
  bool IsNull(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  std::string_view Text(int row, int column) const;
  int64_t Int(int row, int column) const;
  double Double(int row, int column) const;
  /// The number of rows an INSERT, UPDATE or DELETE changed.
  int64_t AffectedRows() const;

 private:
  struct Clear {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  std::unique_ptr<PGresult, Clear> result_;
};

/// One libpq connection. Not thread-safe (one per Database object).
class PostgresConnection {
 public:
  /// Connects to `url`; `connect_timeout_s` applies unless the URL sets connect_timeout.
  /// PostgresError naming the (redacted) URL and what was wrong.
  PostgresConnection(const std::string& url, int connect_timeout_s);
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;
  ~PostgresConnection();

  /// "PostgreSQL database 'postgresql://user@host:port/db'" (no password).
  const std::string& description() const { return description_; }

  /// Reconnects once when the connection was lost earlier (a restarted server): a tuner outlives
  /// a server restart between two batches. PostgresError when the server is still not there.
  void EnsureConnected();

  /// Runs statements without parameters or results. `what` says what was being done, for errors.
  void Exec(std::string_view sql, std::string_view what);
  /// Runs one statement with parameters.
  PgRows Query(std::string_view sql, const PgParams& params, std::string_view what);
  /// Like Query, through a statement prepared once per session under `name`.
  PgRows QueryPrepared(const std::string& name, std::string_view sql, const PgParams& params,
                       std::string_view what);

 private:
  PgRows Check(PGresult* result, std::string_view what);
  [[noreturn]] void Fail(const PGresult* result, std::string_view what);

  std::string description_;
  PGconn* conn_ = nullptr;
  std::set<std::string> prepared_;  // names prepared in the current session
};

/// BEGIN on construction, ROLLBACK on destruction unless committed.
class PgTransaction {
 public:
  explicit PgTransaction(PostgresConnection& db);
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  ~PgTransaction();
  void Commit();

 private:
  PostgresConnection& db_;
  bool open_ = true;
};

}  // namespace tirtune::database_internal
