// A device pool on a real Redis server on loopback, with agents running in this process: the
// statuses mean what they mean on the local pool, blobs travel once, jobs that are unsigned,
// tampered, for another class or with a damaged blob are refused with a reason, and a run
// without a live agent of its class stops with the live classes named.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "../common/redis_server.h"
#include "planted_faults.h"
#include "tirtune/ir/parser.h"
#include "tirtune/measure/agent.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/remote_runner.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;  // the planted-fault kernels, the Redis server

const std::string kTarget = Target::Host().str();

// An agent running in a thread of the test until destroyed.
class AgentThread {
 public:
  AgentThread(const RedisServer& redis, AgentConfig config) : config_(std::move(config)) {
    BrokerAddress address = ParseBrokerUrl(redis.url());
    address.user = config_.broker.user;
    address.password = config_.broker.password;
    config_.broker = address;
    if (config_.target.empty()) config_.target = kTarget;
    config_.heartbeat_s = 0.1;
    config_.ttl_s = 1;
    config_.lease_s = 1;
    thread_ = std::thread([this] {
      try {
        stats_ = RunAgent(config_, stop_);
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    });
  }
  ~AgentThread() {
    stop_.store(true);
    thread_.join();
  }
  std::string ClassId() const {
    return pool::HostDeviceClass(config_.target, Target::Parse(config_.target).num_cores).id();
  }

 private:
  AgentConfig config_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  AgentStats stats_;
  std::string error_;
};

AgentConfig Unsigned() {
  AgentConfig c;
  c.allow_unsigned = true;
  return c;
}

RemoteRunnerConfig Tuner(const RedisServer& redis) {
  RemoteRunnerConfig c;
  c.broker = ParseBrokerUrl(redis.url());
  c.target = kTarget;
  c.timeout_s = 2;
  c.timer.warmup = 1;
  c.timer.repeat = 2;
  c.timer.min_repeat_ms = 0.05;
  c.no_agent_grace_s = 2;
  return c;
}

// Waits until an agent of the class has announced itself.
void WaitForAgents(const RedisServer& redis, size_t n) {
  RedisClient client(ParseBrokerUrl(redis.url()));
  for (int i = 0; i < 500 && LiveAgents(client).size() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Builds `funcs` (schedules of the planted GEMM's signature) and measures them on the pool.
std::vector<MeasureResult> MeasureOnPool(const RemoteRunnerConfig& config,
                                         const std::vector<PrimFunc>& funcs) {
  RemoteRunner remote(config);
  MeasureTask task = MakeMeasureTask(ParsePrimFunc(kGemm), Target::Host(), 3);
  Measurer measurer(BuilderConfig{}, remote);
  return measurer.Measure(task, funcs);
}

TEST(DevicePool, StatusesMeanWhatTheyMeanOnTheLocalPool) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  AgentThread agent(redis, Unsigned());
  WaitForAgents(redis, 1);
  std::vector<MeasureResult> r = MeasureOnPool(
      Tuner(redis), {ParsePrimFunc(kGemm), ParsePrimFunc(kSegfault), ParsePrimFunc(kGarbage),
                     ParsePrimFunc(kBadAlign), ParsePrimFunc(kEndless), ParsePrimFunc(kGemmIkj)});
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].status, MeasureStatus::kOk) << r[0].message;
  EXPECT_EQ(r[0].seconds.size(), 2u);
  EXPECT_NE(r[0].device.find(" on "), std::string::npos) << r[0].device;
  EXPECT_EQ(r[1].status, MeasureStatus::kRuntimeError) << r[1].message;
  EXPECT_EQ(r[1].signal_name, "SIGSEGV");
  EXPECT_EQ(r[2].status, MeasureStatus::kWrongResult) << r[2].message;
  EXPECT_GT(r[2].max_abs_error, 1);
  EXPECT_EQ(r[3].status, MeasureStatus::kBuildError);
  EXPECT_EQ(r[4].status, MeasureStatus::kTimeout) << r[4].message;
  EXPECT_EQ(r[5].status, MeasureStatus::kOk) << r[5].message;
}

TEST(DevicePool, ATasksDataTravelsOnceAndEqualObjectsOnce) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  AgentThread agent(redis, Unsigned());
  WaitForAgents(redis, 1);
  std::vector<PrimFunc> funcs;
  for (int i = 0; i < 10; ++i) funcs.push_back(ParsePrimFunc(i % 2 ? kGemm : kGemmIkj));
  for (const MeasureResult& r : MeasureOnPool(Tuner(redis), funcs)) {
    EXPECT_EQ(r.status, MeasureStatus::kOk) << r.message;
  }
  RedisClient client(ParseBrokerUrl(redis.url()));
  // One task blob and the two distinct objects were sent; the objects left once answered, the
  // task blob when the runner ended.
  std::string stats = client.Command({"INFO", "commandstats"}).str();
  EXPECT_NE(stats.find("cmdstat_set:calls=3,"), std::string::npos) << stats;
  EXPECT_EQ(client.Command({"KEYS", "tirtune:blob:*"}).size(), 0u);
}

TEST(DevicePool, ARunWithoutALiveAgentOfItsClassStopsAndNamesTheLiveClasses) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  RemoteRunnerConfig config = Tuner(redis);
  try {
    RemoteRunner remote(config);
    FAIL() << "a pool without agents was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("live classes: none"), std::string::npos) << e.what();
  }
  AgentConfig other = Unsigned();
  other.target = "llvm -mcpu=x86-64 -num-cores=1";
  AgentThread agent(redis, other);
  WaitForAgents(redis, 1);
  try {
    RemoteRunner remote(config);
    FAIL() << "an agent of another target was taken";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(agent.ClassId()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x86-64"), std::string::npos) << e.what();
  }
  config.target = "llvm -mcpu=x86-64 -num-cores=1";
  config.device_class = "ffffffffffffffff";
  EXPECT_THROW(RemoteRunner{config}, UserError);
  config.device_class = agent.ClassId();
  EXPECT_NO_THROW(RemoteRunner{config});
}

TEST(DevicePool, AgentsRunOnlyJobsSignedByAnAllowedKey) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  pool::SigningKey key = pool::GenerateSigningKey();
  pool::SigningKey stranger = pool::GenerateSigningKey();
  AgentConfig config;
  config.allowed_keys = {key.public_hex()};
  AgentThread agent(redis, config);
  WaitForAgents(redis, 1);
  auto measure = [&](std::optional<pool::SigningKey> signer) {
    RemoteRunnerConfig tuner = Tuner(redis);
    tuner.key = signer;
    return MeasureOnPool(tuner, {ParsePrimFunc(kGemm)}).front();
  };
  MeasureResult unsigned_job = measure(std::nullopt);
  EXPECT_EQ(unsigned_job.status, MeasureStatus::kRunnerLost);
  EXPECT_NE(unsigned_job.message.find("not signed"), std::string::npos) << unsigned_job.message;
  MeasureResult foreign = measure(stranger);
  EXPECT_EQ(foreign.status, MeasureStatus::kRunnerLost);
  EXPECT_NE(foreign.message.find("not in the allowed keys"), std::string::npos) << foreign.message;
  MeasureResult good = measure(key);
  EXPECT_EQ(good.status, MeasureStatus::kOk) << good.message;
}

// Sends `job` straight to the class's stream, as someone who reached the broker could, and
// returns the agent's answer.
pool::JobResult SendRaw(const RedisServer& redis, const pool::Job& job) {
  RedisClient client(ParseBrokerUrl(redis.url()));
  std::string stream = pool::JobsKey(job.device_class);
  client.Command({"XGROUP", "CREATE", stream, pool::kGroup, "0", "MKSTREAM"}, true);
  std::vector<std::string> fields = pool::JobFields(job);
  std::vector<std::string_view> xadd = {"XADD", stream, "*"};
  for (const std::string& f : fields) xadd.push_back(f);
  client.Command(xadd);
  for (int i = 0; i < 100; ++i) {
    RedisReply r = client.Command({"XREAD", "BLOCK", "100", "STREAMS", job.reply_to, "0-0"});
    if (r.size() > 0) return pool::ParseResult(pool::FieldsOf(r[0][1][0][1]));
  }
  ADD_FAILURE() << "no answer to job " << job.id;
  return {};
}

TEST(DevicePool, TamperedJobsJobsOfAnotherClassAndDamagedBlobsAreRefused) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  pool::SigningKey key = pool::GenerateSigningKey();
  AgentConfig config;
  config.allowed_keys = {key.public_hex()};
  AgentThread agent(redis, config);
  WaitForAgents(redis, 1);
  RedisClient client(ParseBrokerUrl(redis.url()));
  std::string object = "not really an object";
  std::string sha = pool::Sha256Hex(object);
  client.Command({"SET", pool::BlobKey(sha), "something else"});

  pool::Job job;
  job.device_class = agent.ClassId();
  job.object_sha = sha;
  job.task_sha = sha;
  job.func_name = "f";
  job.target = kTarget;
  job.id = "t:1";
  job.reply_to = "tirtune:results:t1";
  pool::SignJob(job, key);
  pool::Job tampered = job;
  tampered.func_name = "g";
  pool::JobResult r = SendRaw(redis, tampered);
  EXPECT_EQ(r.result.status, MeasureStatus::kRunnerLost);
  EXPECT_NE(r.result.message.find("does not match its contents"), std::string::npos)
      << r.result.message;

  // The right class's stream, another class in the signed job.
  pool::Job elsewhere = job;
  elsewhere.id = "t:2";
  elsewhere.reply_to = "tirtune:results:t2";
  elsewhere.device_class = "ffffffffffffffff";
  pool::SignJob(elsewhere, key);
  RedisClient c2(ParseBrokerUrl(redis.url()));
  std::vector<std::string> fields = pool::JobFields(elsewhere);
  std::string stream = pool::JobsKey(agent.ClassId());
  std::vector<std::string_view> xadd = {"XADD", stream, "*"};
  for (const std::string& f : fields) xadd.push_back(f);
  c2.Command(xadd);
  RedisReply answer;
  for (int i = 0; i < 100 && answer.size() == 0; ++i) {
    answer = c2.Command({"XREAD", "BLOCK", "100", "STREAMS", elsewhere.reply_to, "0-0"});
  }
  ASSERT_GT(answer.size(), 0u);
  pool::JobResult other = pool::ParseResult(pool::FieldsOf(answer[0][1][0][1]));
  EXPECT_NE(other.result.message.find("for device class ffffffffffffffff"), std::string::npos)
      << other.result.message;

  pool::Job damaged = job;
  damaged.id = "t:3";
  damaged.reply_to = "tirtune:results:t3";
  pool::SignJob(damaged, key);
  pool::JobResult d = SendRaw(redis, damaged);
  EXPECT_EQ(d.result.status, MeasureStatus::kRunnerLost);
  EXPECT_NE(d.result.message.find("does not match its SHA-256"), std::string::npos)
      << d.result.message;
}

TEST(DevicePool, AWrongPasswordAndAnUnreachableBrokerAreClearErrors) {
  RedisServer redis(RedisServer::Config{{"requirepass", "right-password"}});
  ASSERT_TRUE(redis.ok()) << redis.error();
  BrokerAddress address = ParseBrokerUrl(redis.url());
  address.password = "wrong-password";
  try {
    RedisClient client(address);
    FAIL() << "a wrong password was accepted";
  } catch (const BrokerError& e) {
    EXPECT_NE(std::string(e.what()).find("refused the credentials"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("wrong-password"), std::string::npos) << e.what();
  }
  address.password = "right-password";
  EXPECT_NO_THROW(RedisClient{address});
  redis.Stop();
  try {
    RedisClient client(address);
    FAIL() << "a stopped broker was reached";
  } catch (const BrokerError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach the broker"), std::string::npos) << e.what();
  }
}

TEST(DevicePool, TwoTunersShareOnePool) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  AgentThread a(redis, Unsigned()), b(redis, Unsigned());
  WaitForAgents(redis, 2);
  std::vector<std::vector<MeasureResult>> results(2);
  std::vector<std::thread> tuners;
  for (int t = 0; t < 2; ++t) {
    tuners.emplace_back([&, t] {
      results[t] = MeasureOnPool(
          Tuner(redis), std::vector<PrimFunc>(12, ParsePrimFunc(t == 0 ? kGemm : kGemmIkj)));
    });
  }
  for (std::thread& t : tuners) t.join();
  for (const auto& run : results) {
    ASSERT_EQ(run.size(), 12u);
    for (const MeasureResult& r : run) EXPECT_EQ(r.status, MeasureStatus::kOk) << r.message;
  }
}

// scripts/pool_users.acl with its passwords filled in.
std::string AclFile(const std::string& dir) {
  std::ifstream in(std::string(TIRTUNE_SOURCE_DIR) + "/scripts/pool_users.acl");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (auto [from, to] : {std::pair<std::string, std::string>{"TUNER_PASSWORD", "tuner-pw"},
                          {"AGENT_PASSWORD", "agent-pw"}}) {
    text.replace(text.find(from), from.size(), to);
  }
  std::string path = dir + "/users.acl";
  std::ofstream(path) << text;
  return path;
}

TEST(DevicePool, TheAclUsersCanDoTheirWorkAndNoMore) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tirtune-acl-test";
  std::filesystem::create_directories(dir);
  RedisServer redis(RedisServer::Config{{"aclfile", AclFile(dir.string())}});
  ASSERT_TRUE(redis.ok()) << redis.error();
  AgentConfig agent_config = Unsigned();
  agent_config.broker.user = "agent";
  agent_config.broker.password = "agent-pw";
  AgentThread agent(redis, agent_config);
  RemoteRunnerConfig tuner = Tuner(redis);
  tuner.broker.user = "tuner";
  tuner.broker.password = "tuner-pw";
  {
    RedisClient client(tuner.broker);
    for (int i = 0; i < 500 && LiveAgents(client).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  MeasureResult r = MeasureOnPool(tuner, {ParsePrimFunc(kGemm)}).front();
  EXPECT_EQ(r.status, MeasureStatus::kOk) << r.message;

  // An agent's password cannot send jobs; a tuner's cannot take them.
  BrokerAddress as_agent = tuner.broker;
  as_agent.user = "agent";
  as_agent.password = "agent-pw";
  RedisClient agent_client(as_agent);
  std::string stream = pool::JobsKey(agent.ClassId());
  RedisReply refused = agent_client.Command({"XADD", stream, "*", "job", "x"}, true);
  EXPECT_TRUE(refused.is_error());
  EXPECT_NE(refused.str().find("NOPERM"), std::string::npos) << refused.str();
  RedisClient tuner_client(tuner.broker);
  RedisReply taken = tuner_client.Command(
      {"XREADGROUP", "GROUP", pool::kGroup, "thief", "STREAMS", stream, ">"}, true);
  EXPECT_TRUE(taken.is_error());
  // Nobody logs in as the default user.
  EXPECT_THROW(RedisClient{ParseBrokerUrl(redis.url())}.Command({"KEYS", "*"}), BrokerError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tirtune
