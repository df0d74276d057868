// The tuning loop on a device pool: the same Tune, handed a RemoteRunner instead of the local
// pool, stores every trial once, with the agent's device, and resumes as usual; and it does so
// while agents are killed at random moments and the broker is restarted.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "../common/agent_processes.h"
#include "tirtune/measure/agent.h"
#include "tirtune/measure/remote_runner.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

TEST(TuneOnADevicePool, StoresEveryTrialOnceWithTheAgentsDevice) {
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  AgentConfig agent;
  agent.broker = ParseBrokerUrl(redis.url());
  agent.target = Target::Host().str();
  agent.allow_unsigned = true;
  agent.heartbeat_s = 0.1;
  agent.ttl_s = 1;
  agent.lease_s = 1;
  std::atomic<bool> stop{false};
  std::thread agent_thread([&] { RunAgent(agent, stop); });
  {
    RedisClient client(agent.broker);
    for (int i = 0; i < 500 && LiveAgents(client).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  TuneOptions options;
  options.max_trials = 24;
  options.trials_per_round = 8;
  options.evolutionary.population_size = 32;
  options.evolutionary.init_min_unmeasured = 8;
  RemoteRunnerConfig remote_config;
  remote_config.broker = agent.broker;
  remote_config.target = CanonicalTarget(options.target.str());
  remote_config.timer.repeat = 2;
  remote_config.timer.min_repeat_ms = 0.2;
  std::unique_ptr<Database> db = OpenDatabase(":memory:");
  Workload w = MakeWorkload("gemm:16,16,16");
  {
    RemoteRunner remote(remote_config);
    TuneResult r = Tune({TuneTask{w.spec, w.func, 1, w.flops}}, *db, options, remote);
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.tasks[0].trials, 24);
    EXPECT_TRUE(r.tasks[0].best_seconds.has_value());
  }
  std::vector<TuningRecord> records = db->RecordsOf(db->FindWorkload(w.func)->id);
  EXPECT_EQ(records.size(), 24u);
  std::set<std::string> traces;
  for (const TuningRecord& r : records) {
    traces.insert(r.trace.dump());
    EXPECT_NE(r.device.find(" on "), std::string::npos) << r.device;
  }
  EXPECT_EQ(traces.size(), 24u);

  // A resumed run with the budget raised measures only the difference.
  options.max_trials = 32;
  options.resume = true;
  {
    RemoteRunner remote(remote_config);
    TuneResult r = Tune({TuneTask{w.spec, w.func, 1, w.flops}}, *db, options, remote);
    EXPECT_EQ(r.tasks[0].trials, 8);
  }
  EXPECT_EQ(db->Size(), 32u);
  stop.store(true);
  agent_thread.join();
}

TEST(TuneOnADevicePool, EveryCandidateHasExactlyOneRecordWhileAgentsDieAndTheBrokerRestarts) {
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  testing::Saboteur saboteur(TIRTUNE_AGENT_BIN, redis, 2);
  BrokerAddress broker = ParseBrokerUrl(redis.url());
  {
    RedisClient client(broker);
    for (int i = 0; i < 500 && LiveAgents(client).size() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  TuneOptions options;
  options.max_trials = 300;
  options.trials_per_round = 60;
  options.evolutionary.population_size = 64;
  options.cost_model = "random";
  RemoteRunnerConfig remote_config;
  remote_config.broker = broker;
  remote_config.target = CanonicalTarget(options.target.str());
  remote_config.timer.repeat = 2;
  remote_config.timer.min_repeat_ms = 2;
  remote_config.no_agent_grace_s = 20;
  std::unique_ptr<Database> db = OpenDatabase(":memory:");
  Workload w = MakeWorkload("gemm:64,64,64");

  // Every 300-600 ms one agent is killed and a new one started; after the fifth kill, the broker
  // is killed and started again.
  saboteur.Start(300, 600, /*restart_after=*/5, /*seed=*/11);
  TuneResult result;
  try {
    RemoteRunner remote(remote_config);
    result = Tune({TuneTask{w.spec, w.func, 1, w.flops}}, *db, options, remote);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the run failed: " << e.what();
  }
  saboteur.Stop();
  ASSERT_EQ(result.tasks.size(), 1u);
  EXPECT_EQ(result.tasks[0].trials, 300);
  std::vector<TuningRecord> records = db->RecordsOf(db->FindWorkload(w.func)->id);
  EXPECT_EQ(records.size(), 300u);
  std::set<std::string> traces;
  std::map<RecordStatus, int> statuses;
  for (const TuningRecord& r : records) {
    traces.insert(r.trace.dump());
    ++statuses[r.status];
    EXPECT_TRUE(r.status == RecordStatus::kOk || r.status == RecordStatus::kDeviceLost)
        << RecordStatusName(r.status) << ": " << r.error;
  }
  EXPECT_EQ(traces.size(), 300u) << "a candidate was stored twice";
  EXPECT_GE(saboteur.kills(), 5) << "the broker was never restarted";
  std::printf("kills %d, ok %d, device_lost %d\n", saboteur.kills(), statuses[RecordStatus::kOk],
              statuses[RecordStatus::kDeviceLost]);
}

}  // namespace
}  // namespace tirtune
