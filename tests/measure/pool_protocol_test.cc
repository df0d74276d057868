// The device pool's wire format without a broker: broker URLs, hashes, jobs and results as
// stream fields, and job signatures.
#include "tirtune/measure/pool_protocol.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tirtune/measure/agent.h"
#include "tirtune/measure/redis_client.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields Pairs(const std::vector<std::string>& flat) {
  Fields out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace_back(flat[i], flat[i + 1]);
  return out;
}

pool::Job SampleJob() {
  pool::Job j;
  j.id = "abc:7";
  j.device_class = "0123456789abcdef";
  j.reply_to = "tirtune:results:abc";
  j.object_sha = pool::Sha256Hex("object");
  j.task_sha = pool::Sha256Hex("task");
  j.func_name = "gemm";
  j.target = "llvm -mcpu=znver5 -num-cores=2";
  j.timer.repeat = 3;
  j.timer.min_repeat_ms = 10;
  j.timeout_s = 12.5;
  j.cutoff.factor = 20;
  j.cutoff.best_seconds = 1.25e-4;
  return j;
}

TEST(PoolProtocol, Sha256IsTheStandardOne) {
  EXPECT_EQ(pool::Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(PoolProtocol, BrokerUrlsGiveHostPortAndUserButNeverAPassword) {
  BrokerAddress a = ParseBrokerUrl("redis://tuner@10.1.2.3:6400");
  EXPECT_EQ(a.host, "10.1.2.3");
  EXPECT_EQ(a.port, 6400);
  EXPECT_EQ(a.user, "tuner");
  EXPECT_EQ(ParseBrokerUrl("redis://localhost").port, 6379);
  try {
    ParseBrokerUrl("redis://tuner:secret@host:1");
    FAIL() << "a password in the URL was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("password"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ParseBrokerUrl("http://host:1"), UserError);
  EXPECT_THROW(ParseBrokerUrl("redis://host:99999"), UserError);
  EXPECT_THROW(ParseBrokerUrl("redis://:1"), UserError);
}

TEST(PoolProtocol, AJobRoundTripsThroughStreamFields) {
  pool::Job j = SampleJob();
  pool::Job back = pool::ParseJob(Pairs(pool::JobFields(j)));
  EXPECT_EQ(back.id, j.id);
  EXPECT_EQ(back.object_sha, j.object_sha);
  EXPECT_EQ(back.timer.repeat, 3);
  EXPECT_EQ(back.timeout_s, 12.5);
  EXPECT_EQ(back.cutoff.best_seconds, 1.25e-4);
  EXPECT_EQ(pool::SigningText(back), pool::SigningText(j));
}

TEST(PoolProtocol, TheTimersColdWeightsTravel) {
  pool::Job j = SampleJob();
  j.timer.cold_constants = true;
  EXPECT_TRUE(pool::ParseJob(Pairs(pool::JobFields(j))).timer.cold_constants);
  EXPECT_FALSE(pool::ParseJob(Pairs(pool::JobFields(SampleJob()))).timer.cold_constants);
  Fields f = Pairs(pool::JobFields(SampleJob()));
  for (const char* bad : {"1,3,10,0", "1,3,10,0,1,9"}) {  // the fields of version 1; one too many
    for (auto& p : f) {
      if (p.first == "timer") p.second = bad;
    }
    EXPECT_THROW(pool::ParseJob(f), UserError) << bad;
  }
}

TEST(PoolProtocol, AMalformedJobNamesTheField) {
  Fields f = Pairs(pool::JobFields(SampleJob()));
  Fields missing;
  for (auto& p : f) {
    if (p.first != "timer") missing.push_back(p);
  }
  try {
    pool::ParseJob(missing);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'timer'"), std::string::npos) << e.what();
  }
  for (auto& p : f) {
    if (p.first == "object") p.second = "not-a-hash";
  }
  EXPECT_THROW(pool::ParseJob(f), UserError);
}

TEST(PoolProtocol, SignedJobsVerifyAndAnyChangeIsCaught) {
  pool::SigningKey key = pool::GenerateSigningKey();
  pool::SigningKey other = pool::GenerateSigningKey();
  pool::Job j = SampleJob();
  EXPECT_NE(pool::CheckSignature(j, {key.public_hex()}).find("not signed"), std::string::npos);
  pool::SignJob(j, key);
  EXPECT_EQ(pool::CheckSignature(j, {key.public_hex()}), "");
  EXPECT_NE(pool::CheckSignature(j, {other.public_hex()}).find("not in the allowed keys"),
            std::string::npos);
  pool::Job tampered = j;
  tampered.func_name = "evil";
  EXPECT_NE(pool::CheckSignature(tampered, {key.public_hex()}).find("does not match"),
            std::string::npos);
  tampered = j;
  tampered.object_sha = pool::Sha256Hex("another object");
  EXPECT_NE(pool::CheckSignature(tampered, {key.public_hex()}), "");
}

TEST(PoolProtocol, KeyFilesRoundTripAndBadOnesAreNamed) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tirtune-keys-test";
  std::filesystem::create_directories(dir);
  pool::SigningKey key = pool::GenerateSigningKey();
  pool::WriteSigningKey(key, (dir / "k").string(), (dir / "k.pub").string());
  pool::SigningKey secret = pool::ReadSigningKey((dir / "k").string());
  EXPECT_EQ(secret.public_hex(), key.public_hex());
  EXPECT_EQ(secret.secret_key, key.secret_key);
  EXPECT_EQ(pool::ReadAllowedKeys((dir / "k.pub").string()),
            std::vector<std::string>{key.public_hex()});
  std::ofstream((dir / "bad.pub")) << "tirtune-ed25519-public 1234\n";
  try {
    pool::ReadAllowedKeys((dir / "bad.pub").string());
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pool::ReadSigningKey((dir / "missing").string()), UserError);
  std::filesystem::remove_all(dir);
}

TEST(PoolProtocol, AResultRoundTripsWithItsSamples) {
  pool::JobResult r;
  r.job_id = "abc:1";
  r.agent = "host:1";
  r.result.status = MeasureStatus::kOk;
  r.result.seconds = {1e-3, 2e-3, 1.5e-3};
  r.result.median = 1.5e-3;
  r.result.number = 10;
  r.result.device = "CPU (2 cores) on host";
  pool::JobResult back = pool::ParseResult(Pairs(pool::ResultFields(r)));
  EXPECT_EQ(back.result.seconds, r.result.seconds);
  EXPECT_EQ(back.result.device, r.result.device);
  EXPECT_FALSE(back.resend);
  r.result = MeasureResult{};
  r.result.status = MeasureStatus::kDeviceLost;
  EXPECT_EQ(pool::ParseResult(Pairs(pool::ResultFields(r))).result.status,
            MeasureStatus::kDeviceLost);
  r.resend = true;
  EXPECT_TRUE(pool::ParseResult(Pairs(pool::ResultFields(r))).resend);
}

TEST(PoolProtocol, DeviceClassesDifferByTargetAndCores) {
  pool::DeviceClass a = pool::HostDeviceClass("llvm -mcpu=znver5 -num-cores=2", 2);
  pool::DeviceClass b = pool::HostDeviceClass("llvm -mcpu=znver5 -num-cores=1", 1);
  EXPECT_EQ(a.id().size(), 16u);
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(a.id(), pool::HostDeviceClass("llvm -mcpu=znver5 -num-cores=2", 2).id());
  EXPECT_EQ(a.text.rfind("llvm -mcpu=znver5 -num-cores=2 on ", 0), 0u) << a.text;
}

// A GPU's class: the GPU's name, architecture, SMs, memory and clock; another GPU (or the same
// one with another target) is another class.
TEST(PoolProtocol, GpuDeviceClassesAreTheGpusAndTheTarget) {
  cuda::DeviceInfo h200;
  h200.name = "NVIDIA H200";
  h200.cc_major = 9;
  h200.sm_count = 132;
  h200.memory_bytes = int64_t{143} << 30;
  h200.clock_khz = 1980000;
  cuda::DeviceInfo h100 = h200;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.memory_bytes = int64_t{80} << 30;
  pool::DeviceClass a = pool::GpuDeviceClass("cuda -arch=sm_90", h200);
  EXPECT_EQ(a.text, "cuda -arch=sm_90 on NVIDIA H200 (132 SMs)");
  EXPECT_NE(a.fingerprint.find("sm_90"), std::string::npos) << a.fingerprint;
  EXPECT_NE(a.id(), pool::GpuDeviceClass("cuda -arch=sm_90", h100).id());
  EXPECT_NE(a.id(), pool::GpuDeviceClass("cuda -arch=sm_90 -max-threads-per-block=512", h200).id());
  EXPECT_EQ(a.id(), pool::GpuDeviceClass("cuda -arch=sm_90", h200).id());
}

// An agent for a cuda target needs a GPU of that architecture; without one it says so before it
// ever reaches the broker.
TEST(PoolAgent, ACudaAgentWithoutAGpuSaysSo) {
  std::string why;
  if (cuda::CudaDriverAvailable(&why)) GTEST_SKIP() << "a GPU is present";
  AgentConfig config;
  config.broker = ParseBrokerUrl("redis://127.0.0.1:1");
  config.target = "cuda -arch=sm_90";
  config.allow_unsigned = true;
  std::atomic<bool> stop{false};
  try {
    RunAgent(config, stop);
    FAIL() << "the agent ran";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("an agent for cuda -arch=sm_90 needs a GPU"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tirtune
