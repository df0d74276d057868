// PostgresConnection, PgRows, PgParams, PgTransaction and the URL helpers.
#include "postgres_connection.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>

namespace tirtune::database_internal {
namespace {

/// libpq messages end in a newline and may continue on indented lines; messages here are one line.
std::string OneLine(std::string_view message) {
  std::string out;
  bool pending_space = false;
  for (char c : message) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

/// What kind of connection failure libpq's `message` describes, said for a user.
std::string ConnectProblem(std::string_view message) {
  if (Contains(message, "password authentication failed") ||
      Contains(message, "no password supplied") || Contains(message, "authentication failed") ||
      (Contains(message, "role \"") && Contains(message, "does not exist"))) {
    return "authentication failed (check the user, and the password in the URL, PGPASSWORD or "
           "~/.pgpass)";
  }
  if (Contains(message, "database \"") && Contains(message, "does not exist")) {
    return "the database does not exist (create it first, e.g. with createdb)";
  }
  if (Contains(message, "Connection refused") || Contains(message, "timeout expired") ||
      Contains(message, "could not translate host name") || Contains(message, "No route to host") ||
      Contains(message, "Network is unreachable") || Contains(message, "No such file")) {
    return "the server is not reachable";
  }
  if (Contains(message, "the database system is starting up") ||
      Contains(message, "the database system is shutting down")) {
    return "the server is not accepting connections";
  }
  return "cannot connect";
}

}  // namespace

bool IsPostgresUrl(std::string_view path) {
  return path.starts_with("postgresql://") || path.starts_with("postgres://");
}

std::string RedactPostgresUrl(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  size_t authority_begin = scheme_end + 3;
  size_t authority_end = url.find_first_of("/?", authority_begin);
  if (authority_end == std::string_view::npos) authority_end = url.size();
  std::string_view authority = url.substr(authority_begin, authority_end - authority_begin);
  std::string out(url.substr(0, authority_begin));
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    out += userinfo.substr(0, userinfo.find(':'));
    out += authority.substr(at);
  } else {
    out += authority;
  }
  std::string_view rest = url.substr(authority_end);
  size_t query = rest.find('?');
  out += rest.substr(0, query);
  if (query == std::string_view::npos) return out;
  // Parameters other than the password stay: they may be what the user got wrong.
  std::string kept;
  std::string_view params = rest.substr(query + 1);
  while (!params.empty()) {
    size_t amp = params.find('&');
    std::string_view param = params.substr(0, amp);
    if (!param.starts_with("password=")) {
      kept += kept.empty() ? "?" : "&";
      kept += param;
    }
    params = amp == std::string_view::npos ? std::string_view() : params.substr(amp + 1);
  }
  return out + kept;
}

// ---- PgParams

PgParams& PgParams::Add(int64_t value) {
  values_.emplace_back(std::to_string(value));
  return *this;
}

PgParams& PgParams::Add(double value) {
  TT_ICHECK(std::isfinite(value), "only finite numbers are stored (checked before)");
  // fmt's default is the shortest text that reads back as the same double.
  values_.emplace_back(fmt::format("{}", value));
  return *this;
}

PgParams& PgParams::Add(std::optional<double> value) { return value ? Add(*value) : AddNull(); }

PgParams& PgParams::Add(std::string_view value) {
  values_.emplace_back(std::string(value));
  return *this;
}

PgParams& PgParams::AddNull() {
  values_.emplace_back(std::nullopt);
  return *this;
}

std::vector<const char*> PgParams::Pointers() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const std::optional<std::string>& v : values_) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

// ---- PgRows

std::string_view PgRows::Text(int row, int column) const {
  return std::string_view(PQgetvalue(result_.get(), row, column),
                          static_cast<size_t>(PQgetlength(result_.get(), row, column)));
}

int64_t PgRows::Int(int row, int column) const {
  std::string_view text = Text(row, column);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  TT_ICHECK(ec == std::errc() && end == text.data() + text.size(), "an integer column holds '{}'",
            text);
  return value;
}

double PgRows::Double(int row, int column) const {
  std::string_view text = Text(row, column);
  double value = 0;
  // from_chars reads "Infinity" and "NaN" too; record checks reject them.
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  TT_ICHECK(ec == std::errc() && end == text.data() + text.size(), "a float column holds '{}'",
            text);
  return value;
}

int64_t PgRows::AffectedRows() const {
  const char* n = PQcmdTuples(result_.get());
  return n[0] == '\0' ? 0 : std::stoll(n);
}

// ---- PostgresConnection

PostgresConnection::PostgresConnection(const std::string& url, int connect_timeout_s)
    : description_(fmt::format("PostgreSQL database '{}'", RedactPostgresUrl(url))) {
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &parse_error);
  if (!parsed) {
    std::string message = parse_error ? OneLine(parse_error) : "out of memory";
    PQfreemem(parse_error);
    throw PostgresError(
        fmt::format("{}: not a valid PostgreSQL URL: {} (expected "
                    "postgresql://[user[:password]@]host[:port]/database[?param=value&...])",
                    description_, message),
        "", false);
  }
  PQconninfoFree(parsed);
  // Keywords before "dbname" are defaults the URL may override; the ones after it are not.
  std::string timeout = std::to_string(connect_timeout_s);
  const char* keywords[] = {
      "connect_timeout",  "keepalives_idle", "keepalives_interval", "keepalives_count",
      "application_name", "dbname",          "client_encoding",     nullptr};
  const char* values[] = {timeout.c_str(), "30",        "10",   "3",
                          "tirtune",       url.c_str(), "UTF8", nullptr};
  conn_ = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn_ == nullptr) TT_USER_ERROR("{}: cannot connect: out of memory", description_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string message = OneLine(PQerrorMessage(conn_));
    PQfinish(conn_);
    conn_ = nullptr;
    throw PostgresError(fmt::format("{}: {}: {}", description_, ConnectProblem(message), message),
                        "", false);
  }
  // Quiet: CREATE ... IF NOT EXISTS notices would otherwise go to stderr.
  Exec("SET client_min_messages = warning", "configuring the session");
}

PostgresConnection::~PostgresConnection() {
  if (conn_) PQfinish(conn_);
}

void PostgresConnection::EnsureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK) return;
  PQreset(conn_);
  prepared_.clear();
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string message = OneLine(PQerrorMessage(conn_));
    throw PostgresError(fmt::format("{}: the connection was lost and reconnecting failed: {}: {}",
                                    description_, ConnectProblem(message), message),
                        "", true);
  }
  Exec("SET client_min_messages = warning", "configuring the session");
}

void PostgresConnection::Exec(std::string_view sql, std::string_view what) {
  Check(PQexec(conn_, std::string(sql).c_str()), what);
}

PgRows PostgresConnection::Query(std::string_view sql, const PgParams& params,
                                 std::string_view what) {
  std::vector<const char*> values = params.Pointers();
  return Check(PQexecParams(conn_, std::string(sql).c_str(), params.size(), nullptr, values.data(),
                            nullptr, nullptr, /*resultFormat=*/0),
               what);
}

PgRows PostgresConnection::QueryPrepared(const std::string& name, std::string_view sql,
                                         const PgParams& params, std::string_view what) {
  if (!prepared_.count(name)) {
    Check(PQprepare(conn_, name.c_str(), std::string(sql).c_str(), params.size(), nullptr), what);
    prepared_.insert(name);
  }
  std::vector<const char*> values = params.Pointers();
  return Check(PQexecPrepared(conn_, name.c_str(), params.size(), values.data(), nullptr, nullptr,
                              /*resultFormat=*/0),
               what);
}

PgRows PostgresConnection::Check(PGresult* result, std::string_view what) {
  ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return PgRows(result);
  PgRows owner(result);  // freed on the throw
  Fail(result, what);
}

void PostgresConnection::Fail(const PGresult* result, std::string_view what) {
  std::string message = OneLine(result ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  if (message.empty()) message = OneLine(PQerrorMessage(conn_));
  const char* sqlstate = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (PQstatus(conn_) == CONNECTION_BAD) {
    throw PostgresError(
        fmt::format("{}: {}: the connection to the server was lost ({}); the server keeps no "
                    "part of an unfinished transaction",
                    description_, what, message),
        sqlstate ? sqlstate : "", true);
  }
  throw PostgresError(fmt::format("{}: {}: {}", description_, what, message),
                      sqlstate ? sqlstate : "", false);
}

// ---- PgTransaction

PgTransaction::PgTransaction(PostgresConnection& db) : db_(db) {
  db_.Exec("BEGIN", "starting a transaction");
}

PgTransaction::~PgTransaction() {
  if (!open_) return;
  try {
    db_.Exec("ROLLBACK", "rolling back");
  } catch (const UserError&) {
    // The connection is gone: the server has rolled back already.
  }
}

void PgTransaction::Commit() {
  open_ = false;
  db_.Exec("COMMIT", "committing");
}

}  // namespace tirtune::database_internal
