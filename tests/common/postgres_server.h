// A throwaway PostgreSQL server for tests and benchmarks: initdb into a temporary directory, a
// free loopback port, a fresh database on demand, stopped and deleted at the end. A watchdog
// process stops and deletes it even when the process that started it crashes. PostgreSQL refuses
// to run as root, so as root (CI) the server runs as the `postgres` system user that Debian's
// postgresql package creates. Needs no GoogleTest: bench/ uses it too.
#pragma once

#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

extern char** environ;

namespace tirtune::testing {

struct PostgresServerOptions {
  /// fsync, full-page writes and synchronous commit off: a test server's data need not survive
  /// a power cut, and tests stay fast. Benchmarks turn it off to measure a server as deployed.
  bool unsafe_fast = true;
};

class PostgresServer {
 public:
  /// A role that must log in with a password (scram-sha-256 over TCP), for authentication
  /// tests. CreatePasswordUser makes it; every other role is trusted.
  static constexpr const char* kPasswordUser = "tirtune_pw";

  /// Starts a server; when that fails, ok() is false and error() says why (the caller fails).
  explicit PostgresServer(PostgresServerOptions options = {}) : options_(options) {
    error_ = Start();
  }
  ~PostgresServer() { Shutdown(); }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  /// One server for the whole process, started on first use, stopped at exit.
  static PostgresServer& Shared() {
    static PostgresServer server;
    return server;
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  int port() const { return port_; }

  std::string Url(const std::string& database, const std::string& user = "postgres") const {
    return "postgresql://" + user + "@127.0.0.1:" + std::to_string(port_) + "/" + database;
  }

  /// A new, empty database; its URL.
  std::string NewDatabase() {
    std::string name = "t_" + std::to_string(++databases_);
    Sql("CREATE DATABASE " + name);
    return Url(name);
  }

  /// Runs `sql` as the superuser in `database`; the first column of the first row ("" without
  /// rows). std::runtime_error with the server's message when it fails.
  std::string Sql(const std::string& sql, const std::string& database = "postgres") const {
    std::string conninfo = "host=127.0.0.1 port=" + std::to_string(port_) +
                           " user=postgres connect_timeout=10 dbname=" + database;
    PGconn* conn = PQconnectdb(conninfo.c_str());
    std::string failure;
    std::string value;
    if (PQstatus(conn) != CONNECTION_OK) {
      failure = PQerrorMessage(conn);
    } else {
      PQsetNoticeProcessor(
          conn, [](void*, const char*) {}, nullptr);  // "... skipping"
      PGresult* result = PQexec(conn, sql.c_str());
      ExecStatusType status = PQresultStatus(result);
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        failure = PQresultErrorMessage(result);
      } else if (PQntuples(result) > 0 && PQnfields(result) > 0) {
        value = PQgetvalue(result, 0, 0);
      }
      PQclear(result);
    }
    PQfinish(conn);
    if (!failure.empty()) throw std::runtime_error("test server: " + sql + ": " + failure);
    return value;
  }

  /// Creates kPasswordUser with `password` (once per server).
  void CreatePasswordUser(const std::string& password) {
    Sql(std::string("CREATE ROLE ") + kPasswordUser + " LOGIN SUPERUSER PASSWORD '" + password +
        "'");
  }

  /// Stops the server as an administrator would (fast shutdown: sessions are ended). True when
  /// it stopped.
  bool Stop() { return Run(PgCtl("-m fast -w stop"), "stop.log") == 0; }
  /// Starts the stopped server again, same port, same data.
  bool Restart() { return Run(PgCtl("-w -t 30 " + ServerOptions() + " start"), "start.log") == 0; }

 private:
  /// Starts everything; "" on success, else what went wrong.
  std::string Start() {
    std::string bin = FindBinDir();
    if (bin.empty()) {
      return "the PostgreSQL server programs (initdb, pg_ctl under /usr/lib/postgresql/*/bin) "
             "are not installed: run scripts/setup.sh, which installs the postgresql package";
    }
    bin_ = bin;
    std::string pattern = (std::filesystem::temp_directory_path() / "tirtune_pg_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) return "cannot create a temporary directory";
    dir_ = pattern;
    if (::geteuid() == 0) {
      // As root the server runs as `postgres`, which must own the directory.
      struct passwd* pw = ::getpwnam("postgres");
      if (!pw) {
        return "running as root, and there is no `postgres` system user to run the server as "
               "(the postgresql package creates it): run scripts/setup.sh";
      }
      if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) return "cannot chown " + dir_;
      as_postgres_ = "runuser -u postgres -- ";
    }
    StartWatchdog();
    if (Run(as_postgres_ + bin_ + "/initdb -D " + dir_ +
                "/data -A trust -U postgres -E UTF8 --locale=C --no-sync",
            "initdb.log") != 0) {
      return "initdb failed: " + Tail("initdb.log");
    }
    // First match wins: the password role must authenticate, everyone else is trusted.
    std::string hba_path = dir_ + "/data/pg_hba.conf";
    std::string hba = ReadAll(hba_path);
    std::ofstream(hba_path, std::ios::trunc)
        << "host all " << kPasswordUser << " 127.0.0.1/32 scram-sha-256\n"
        << hba;
    // The free port may be taken by someone else before the server binds it: try another.
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = FreePort();
      if (Restart()) return "";
    }
    return "the server did not start: " + Tail("server.log") + Tail("start.log");
  }

  std::string ServerOptions() const {
    std::string o = "-l " + dir_ + "/server.log -o '-p " + std::to_string(port_) + " -k " + dir_ +
                    " -c listen_addresses=127.0.0.1";
    if (options_.unsafe_fast)
      o += " -c fsync=off -c full_page_writes=off -c synchronous_commit=off";
    return o + "'";
  }

  std::string PgCtl(const std::string& args) const {
    return as_postgres_ + bin_ + "/pg_ctl -D " + dir_ + "/data " + args;
  }

  /// Runs a shell command with its output in `log` (in the server's directory); its exit code.
  int Run(const std::string& command, const std::string& log) const {
    std::string full = command + " > " + dir_ + "/" + log + " 2>&1 < /dev/null";
    int status = std::system(full.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  /// A process that waits for this one to close its end of a pipe (on Shutdown, or by dying) and
  /// then stops the server and deletes its directory.
  void StartWatchdog() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    std::string script =
        "exec >/dev/null 2>&1; cat; " + PgCtl("-m immediate -w stop") + "; rm -rf " + dir_;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
    const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
    if (posix_spawn(&watchdog_, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ) !=
        0) {
      watchdog_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[0]);
    watchdog_pipe_ = fds[1];
  }

  void Shutdown() {
    if (watchdog_pipe_ >= 0) {
      ::close(watchdog_pipe_);
      watchdog_pipe_ = -1;
    }
    if (watchdog_ > 0) {
      int status = 0;
      ::waitpid(watchdog_, &status, 0);
      watchdog_ = -1;
    } else if (!dir_.empty()) {
      Run(PgCtl("-m immediate -w stop"), "stop.log");
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  static std::string FindBinDir() {
    std::string best;
    int best_version = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      std::string bin = entry.path().string() + "/bin";
      int version = std::atoi(entry.path().filename().c_str());
      if (version > best_version && std::filesystem::exists(bin + "/initdb", ec) &&
          std::filesystem::exists(bin + "/pg_ctl", ec)) {
        best = bin;
        best_version = version;
      }
    }
    return best;
  }

  static int FreePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    ::close(fd);
    return port;
  }

  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string Tail(const std::string& log) const {
    std::string text = ReadAll(dir_ + "/" + log);
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  PostgresServerOptions options_;
  std::string error_;
  std::string bin_;
  std::string dir_;
  std::string as_postgres_;  // "runuser -u postgres -- " when running as root
  int port_ = 0;
  int databases_ = 0;
  pid_t watchdog_ = -1;
  int watchdog_pipe_ = -1;
};

}  // namespace tirtune::testing
