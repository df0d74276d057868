// The device pool under faults, with agents as real processes: during a 300-candidate run the
// agents are killed with SIGKILL at random moments (and replaced), and the broker is restarted
// once. Every candidate ends with exactly one result; none is lost and none counted twice; a
// job whose agents both died says so (device_lost) instead of being retried forever.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "../common/redis_server.h"
#include "planted_faults.h"
#include "tirtune/ir/parser.h"
#include "tirtune/measure/builder.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/remote_runner.h"

extern char** environ;

namespace tirtune {
namespace {

using namespace tirtune::testing;

pid_t SpawnAgent(const RedisServer& redis, int n) {
  std::vector<std::string> args = {
      TIRTUNE_AGENT_BIN, "--broker", redis.url(), "--allow-unsigned",
      "--heartbeat",     "0.1",      "--ttl",     "1",
      "--lease",         "0.6",      "--id",      "agent-" + std::to_string(n),
      "--reconnect",     "60"};
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

size_t LiveAgentCount(const RedisServer& redis) {
  try {
    RedisClient client(ParseBrokerUrl(redis.url()));
    return LiveAgents(client).size();
  } catch (const BrokerError&) {
    return 0;
  }
}

TEST(DevicePoolFaults, KilledAgentsAndARestartedBrokerLoseAndDuplicateNothing) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  std::vector<pid_t> agents;
  int spawned = 0;
  for (int i = 0; i < 2; ++i) agents.push_back(SpawnAgent(redis, spawned++));
  for (int i = 0; i < 500 && LiveAgentCount(redis) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(LiveAgentCount(redis), 2u);

  // 300 candidates: two correct GEMMs, compiled once.
  MeasureTask task = MakeMeasureTask(ParsePrimFunc(kGemm), Target::Host(), 3);
  Builder builder(BuilderConfig{});
  std::vector<BuildResult> built =
      builder.Build({ParsePrimFunc(kGemm), ParsePrimFunc(kGemmIkj)}, Target::Host());
  ASSERT_TRUE(built[0].ok() && built[1].ok());
  std::vector<MeasureCandidate> candidates;
  for (int i = 0; i < 300; ++i) {
    MeasureCandidate c;
    c.object = built[i % 2].object;
    c.func_name = built[i % 2].func_name;
    c.target = Target::Host().str();
    c.args = task.args;
    c.seed = task.seed;
    c.expected = task.expected;
    c.reduction_length = task.reduction_length;
    candidates.push_back(std::move(c));
  }

  RemoteRunnerConfig config;
  config.broker = ParseBrokerUrl(redis.url());
  config.target = Target::Host().str();
  config.timeout_s = 5;
  config.timer.warmup = 1;
  config.timer.repeat = 2;
  config.timer.min_repeat_ms = 10;  // about 20 ms a job: a few seconds, a dozen kills
  config.reconnect_s = 60;
  config.no_agent_grace_s = 20;
  RemoteRunner remote(config);

  // The saboteur: every 100-300 ms one agent is killed and a new one started; after the fourth
  // kill, the broker is killed and started again.
  std::atomic<bool> done{false};
  std::atomic<int> kills{0}, restarts{0};
  std::mutex agents_mutex;
  std::thread saboteur([&] {
    std::mt19937 rng(7);
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 200));
      if (done.load()) break;
      std::lock_guard<std::mutex> lock(agents_mutex);
      size_t victim = rng() % agents.size();
      kill(agents[victim], SIGKILL);
      waitpid(agents[victim], nullptr, 0);
      agents[victim] = SpawnAgent(redis, spawned++);
      if (++kills == 4) {
        redis.Restart();
        ++restarts;
      }
    }
  });

  std::vector<int> answered(candidates.size(), 0);
  std::vector<MeasureResult> results;
  try {
    results =
        remote.Measure(candidates, {}, [&](size_t i, const MeasureResult&) { ++answered[i]; });
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the run failed: " << e.what();
  }
  done.store(true);
  saboteur.join();
  for (pid_t pid : agents) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  ASSERT_EQ(results.size(), candidates.size());
  std::map<MeasureStatus, int> seen;
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(answered[i], 1) << "candidate " << i;
    const MeasureResult& r = results[i];
    ++seen[r.status];
    if (r.status == MeasureStatus::kDeviceLost) {
      EXPECT_NE(r.message.find("stopped before answering"), std::string::npos) << r.message;
    } else {
      EXPECT_EQ(r.status, MeasureStatus::kOk) << "candidate " << i << ": " << r.message;
    }
  }
  EXPECT_GE(kills.load(), 4);
  EXPECT_EQ(restarts.load(), 1);
  EXPECT_GT(remote.resent(), 0) << "the restarted broker's jobs were never sent again";
  EXPECT_GE(seen[MeasureStatus::kOk], 250);
  std::printf("kills %d, broker restarts %d, ok %d, device_lost %d, resent %d, duplicates %d\n",
              kills.load(), restarts.load(), seen[MeasureStatus::kOk],
              seen[MeasureStatus::kDeviceLost], remote.resent(), remote.duplicates());
}

TEST(DevicePoolFaults, SigtermAnswersTheJobInFlightThenLeaves) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  pid_t agent = SpawnAgent(redis, 0);
  for (int i = 0; i < 500 && LiveAgentCount(redis) < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  RemoteRunnerConfig config;
  config.broker = ParseBrokerUrl(redis.url());
  config.target = Target::Host().str();
  // About a second of timing, so that the signal comes while the job is measured.
  config.timer.repeat = 2;
  config.timer.min_repeat_ms = 500;
  RemoteRunner remote(config);
  MeasureTask task = MakeMeasureTask(ParsePrimFunc(kGemm), Target::Host(), 3);
  Measurer measurer(BuilderConfig{}, remote);
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    kill(agent, SIGTERM);
  });
  MeasureResult r = measurer.Measure(task, {ParsePrimFunc(kGemm)}).front();
  signaller.join();
  EXPECT_EQ(r.status, MeasureStatus::kOk) << r.message;
  int status = 0;
  waitpid(agent, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(LiveAgentCount(redis), 0u) << "the agent left its announcement behind";
}

}  // namespace
}  // namespace tirtune
