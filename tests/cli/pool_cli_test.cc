// The device pool from the command line, as a user runs it: `tirtune-agent`, `tirtune pool
// status`, `tirtune pool keygen`, and `tune`/`time --runner redis://...`, with the errors a user
// meets (no agent of the target, a password in the URL, a broker that is down).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "../common/cli_run.h"
#include "../common/redis_server.h"

extern char** environ;

namespace {

using Result = tirtune::testing::CliResult;

class PoolCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(redis_.ok()) << redis_.error();
    dir_ = std::filesystem::temp_directory_path() /
           ("tirtune_pool_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    for (pid_t pid : agents_) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  Result Run(const std::string& args) { return tirtune::testing::RunCli(TIRTUNE_BIN, args, dir_); }
  void StartAgent(std::vector<std::string> extra) {
    std::vector<std::string> args = {
        TIRTUNE_AGENT_BIN, "--broker", redis_.url(), "--heartbeat", "0.1", "--ttl", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    agents_.push_back(pid);
    for (int i = 0; i < 300; ++i) {
      Result r = Run("pool status --broker " + redis_.url() + " --json");
      if (r.exit_code == 0 && r.Json()["agents"].size() == agents_.size()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << "the agent did not announce itself";
  }

  tirtune::testing::RedisServer redis_;
  std::filesystem::path dir_;
  std::vector<pid_t> agents_;
};

TEST_F(PoolCli, SignedTuningThroughAnAgentStoresEveryTrialWithItsDevice) {
  Result keys = Run("pool keygen -o " + (dir_ / "tuner.key").string());
  ASSERT_EQ(keys.exit_code, 0) << keys.err;
  StartAgent(
      {"--allowed-keys", (dir_ / "tuner.key.pub").string(), "--target", "llvm -num-cores=1"});
  Result status = Run("pool status --broker " + redis_.url() + " --json");
  ASSERT_EQ(status.exit_code, 0) << status.err;
  nlohmann::json s = status.Json();
  ASSERT_EQ(s["classes"].size(), 1u);
  EXPECT_EQ(s["classes"][0]["agents"], 1);
  std::string db = (dir_ / "t.db").string();
  Result tune =
      Run("tune --workload gemm:16,16,16 --trials 8 --trials-per-round 4 --population "
          "16 --target \"llvm -num-cores=1\" --runner " +
          redis_.url() + " --key " + (dir_ / "tuner.key").string() + " --db " + db + " --json");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  EXPECT_EQ(tune.Json()["tasks"][0]["trials"], 8);
  EXPECT_EQ(tune.Json()["tasks"][0]["statuses"]["ok"], 8) << tune.out;
  Result shown = Run("db best --db " + db + " --json");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find(" on "), std::string::npos) << shown.out;
  Result timed =
      Run("time --workload gemm:16,16,16 --target \"llvm -num-cores=1\" --runner " + redis_.url() +
          " --key " + (dir_ / "tuner.key").string() + " --min-repeat-ms 1 --json");
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_GT(timed.Json()["gflops"].get<double>(), 0);
  EXPECT_NE(timed.Json()["device"].get<std::string>().find(" on "), std::string::npos);
}

TEST_F(PoolCli, UserMistakesGetClearMessages) {
  StartAgent({"--allow-unsigned", "--target", "llvm -num-cores=1"});
  Result no_class =
      Run("time --workload gemm:8,8,8 --target \"llvm -num-cores=2\" --runner " + redis_.url());
  EXPECT_EQ(no_class.exit_code, 1);
  EXPECT_NE(no_class.err.find("live classes:"), std::string::npos) << no_class.err;
  EXPECT_NE(no_class.err.find("-num-cores=1"), std::string::npos) << no_class.err;

  Result password = Run("pool status --broker redis://me:secret@127.0.0.1:1");
  EXPECT_EQ(password.exit_code, 1);
  EXPECT_NE(password.err.find("password"), std::string::npos) << password.err;

  redis_.Stop();
  Result down = Run("pool status --broker " + redis_.url());
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.err.find("cannot reach the broker"), std::string::npos) << down.err;

  Result agent = tirtune::testing::RunCli(TIRTUNE_AGENT_BIN, "--broker " + redis_.url(), dir_);
  EXPECT_EQ(agent.exit_code, 1);
  EXPECT_NE(agent.err.find("--allowed-keys"), std::string::npos) << agent.err;
}

}  // namespace
