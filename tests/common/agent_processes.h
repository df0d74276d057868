// `tirtune-agent` processes for device-pool tests, and a saboteur that kills them with SIGKILL at
// random moments (starting a replacement each time) and restarts the broker once.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"

extern char** environ;

namespace tirtune::testing {

/// Starts `agent_bin` on `redis` taking unsigned jobs, with a short heartbeat, TTL and lease so
/// that a killed agent's job moves on within a second; stderr goes to /dev/null.
inline pid_t SpawnAgent(const std::string& agent_bin, const RedisServer& redis, int n) {
  std::vector<std::string> args = {
      agent_bin,     "--broker", redis.url(), "--allow-unsigned",
      "--heartbeat", "0.1",      "--ttl",     "1",
      "--lease",     "0.6",      "--id",      "agent-" + std::to_string(n),
      "--reconnect", "60"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

/// Runs `count` agents; from Start() until the destructor, kills one every `min_ms`..`max_ms`
/// and starts another, and restarts the broker after `restart_after` kills.
class Saboteur {
 public:
  Saboteur(std::string agent_bin, RedisServer& redis, int count)
      : agent_bin_(std::move(agent_bin)), redis_(redis) {
    for (int i = 0; i < count; ++i) agents_.push_back(SpawnAgent(agent_bin_, redis_, spawned_++));
  }
  ~Saboteur() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
    for (pid_t pid : agents_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  Saboteur(const Saboteur&) = delete;
  Saboteur& operator=(const Saboteur&) = delete;

  void Start(int min_ms, int max_ms, int restart_after, unsigned seed) {
    thread_ = std::thread([=, this] {
      std::mt19937 rng(seed);
      while (!done_.load()) {
        std::this_thread::sleep_for(
            std::chrono::milliseconds(min_ms + rng() % (max_ms - min_ms + 1)));
        if (done_.load()) break;
        std::lock_guard<std::mutex> lock(mutex_);
        size_t victim = rng() % agents_.size();
        kill(agents_[victim], SIGKILL);
        waitpid(agents_[victim], nullptr, 0);
        agents_[victim] = SpawnAgent(agent_bin_, redis_, spawned_++);
        if (++kills_ == restart_after) {
          redis_.Restart();
          ++restarts_;
        }
      }
    });
  }
  /// Stops the killing (the agents stay).
  void Stop() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  int kills() const { return kills_.load(); }
  int restarts() const { return restarts_.load(); }

 private:
  std::string agent_bin_;
  RedisServer& redis_;
  std::vector<pid_t> agents_;
  int spawned_ = 0;
  std::mutex mutex_;
  std::thread thread_;
  std::atomic<bool> done_{false};
  std::atomic<int> kills_{0}, restarts_{0};
};

}  // namespace tirtune::testing
