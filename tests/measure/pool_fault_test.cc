// The device pool under faults, with agents as real processes: during a 300-candidate run the
// agents are killed with SIGKILL at random moments (and replaced), and the broker is restarted
// once. Every candidate ends with exactly one result; none is lost and none counted twice; a
// job whose agents both died says so (device_lost) instead of being retried forever.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "../common/agent_processes.h"
#include "planted_faults.h"
#include "tirtune/ir/parser.h"
#include "tirtune/measure/builder.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/remote_runner.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

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
  Saboteur saboteur(TIRTUNE_AGENT_BIN, redis, 2);
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
    candidates.push_back(CandidateFor(task, built[i % 2]));
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

  // Every 100-300 ms one agent is killed and a new one started; after the fourth kill, the
  // broker is killed and started again.
  saboteur.Start(100, 300, /*restart_after=*/4, /*seed=*/7);

  std::vector<int> answered(candidates.size(), 0);
  std::vector<MeasureResult> results;
  try {
    results =
        remote.Measure(candidates, {}, [&](size_t i, const MeasureResult&) { ++answered[i]; });
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the run failed: " << e.what();
  }
  saboteur.Stop();
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
  EXPECT_GE(saboteur.kills(), 4);
  EXPECT_EQ(saboteur.restarts(), 1);
  EXPECT_GT(remote.resent(), 0) << "the restarted broker's jobs were never sent again";
  EXPECT_GE(seen[MeasureStatus::kOk], 250);
  std::printf("kills %d, broker restarts %d, ok %d, device_lost %d, resent %d, duplicates %d\n",
              saboteur.kills(), saboteur.restarts(), seen[MeasureStatus::kOk],
              seen[MeasureStatus::kDeviceLost], remote.resent(), remote.duplicates());
}

TEST(DevicePoolFaults, SigtermAnswersTheJobInFlightThenLeaves) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  pid_t agent = SpawnAgent(TIRTUNE_AGENT_BIN, redis, 0);
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
