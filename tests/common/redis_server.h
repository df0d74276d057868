// A throwaway Redis server for tests and benchmarks: a free loopback port, no persistence, a
// temporary directory, stopped at the end. Restart() stops it hard (its memory is lost, as in a
// crash) and starts it again on the same port. Needs no GoogleTest: bench/ uses it too.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tirtune::testing {

class RedisServer {
 public:
  /// Extra lines of configuration, e.g. {"requirepass", "secret"}, as arguments "--NAME VALUE".
  using Config = std::vector<std::pair<std::string, std::string>>;
  explicit RedisServer(Config config = {}) : config_(std::move(config)) {
    char pattern[] = "/tmp/tirtune-redis-XXXXXX";
    if (mkdtemp(pattern) != nullptr) dir_ = pattern;
    port_ = FreePort();
    error_ = Start();
  }
  ~RedisServer() {
    Stop();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// Empty when the server runs; otherwise why not (the caller fails the test).
  const std::string& error() const { return error_; }
  bool ok() const { return error_.empty(); }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  /// Kills the server (SIGKILL: everything in memory is lost).
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  /// Starts it again on the same port; empty on success.
  std::string Start() {
    if (pid_ > 0) return "";
    std::vector<std::string> args = {"redis-server",
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--dir",
                                     dir_,
                                     "--protected-mode",
                                     "no"};
    for (const auto& [name, value] : config_) {
      args.push_back("--" + name);
      args.push_back(value);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string log = dir_ + "/redis.log";
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    int rc = posix_spawnp(&pid_, "redis-server", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = 0;
      return "cannot start redis-server (run scripts/setup.sh, which installs redis-server)";
    }
    // Ready when the port accepts connections.
    for (int i = 0; i < 500; ++i) {
      if (Accepts()) return "";
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return "redis-server exited at start; see " + log;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "redis-server did not accept connections within 5 s";
  }
  void Restart() {
    Stop();
    error_ = Start();
  }

 private:
  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    close(fd);
    return port;
  }
  bool Accepts() const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    return ok;
  }

  Config config_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = 0;
  std::string error_;
};

}  // namespace tirtune::testing
