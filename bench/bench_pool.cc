// Device-pool throughput (docs/BENCHMARKS.md, "Device pools"): the same GEMM 256³ candidates
// (the hand-written schedule with varied register tiles, compiled once for one core) measured
//   1. by the local runner pool (one worker pinned to CPU 0),
//   2. by one tirtune-agent (pinned to CPU 0) through a Redis server on loopback,
//   3. by two agents (CPUs 0 and 1),
// in batches of 64 as the tuner sends them. Prints candidates per second of each and the ratios
// (2/1, to be >= 0.9; 3/2, to be >= 1.7), and the bytes the broker moved per job.
// Usage: bench_pool [candidates=200]
#include <fmt/core.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "../tests/common/redis_server.h"
#include "common/gemm_tiling.h"
#include "tirtune/measure/builder.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/remote_runner.h"
#include "tirtune/te/workload_registry.h"

extern char** environ;

namespace tirtune {
namespace {

using Clock = std::chrono::steady_clock;

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

pid_t SpawnAgent(const std::string& url, int cpu) {
  std::vector<std::string> args = {TIRTUNE_AGENT_BIN,  "--broker", url,
                                   "--allow-unsigned", "--cpus",   std::to_string(cpu)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    throw UserError("cannot start " + args[0]);
  }
  return pid;
}

// Candidates per second of measuring `candidates` on `runner`, in batches of 64.
double Rate(Runner& runner, const std::vector<MeasureCandidate>& candidates) {
  auto start = Clock::now();
  int ok = 0;
  for (size_t begin = 0; begin < candidates.size(); begin += 64) {
    std::vector<MeasureCandidate> batch(
        candidates.begin() + begin, candidates.begin() + std::min(candidates.size(), begin + 64));
    for (const MeasureResult& r : runner.Measure(batch)) ok += r.ok();
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (ok != static_cast<int>(candidates.size())) {
    fmt::print(stderr, "warning: {} of {} candidates failed\n", candidates.size() - ok,
               candidates.size());
  }
  return candidates.size() / seconds;
}

int64_t BrokerBytes(const std::string& url, const char* field) {
  RedisClient client(ParseBrokerUrl(url));
  std::string info = client.Command({"INFO", "stats"}).str();
  size_t at = info.find(field);
  return at == std::string::npos ? 0 : std::atoll(info.c_str() + at + std::strlen(field) + 1);
}

}  // namespace
}  // namespace tirtune

int main(int argc, char** argv) {
  using namespace tirtune;
  int count = argc > 1 ? std::atoi(argv[1]) : 200;
  Target target = Target::Host();
  target.num_cores = 1;
  Workload w = MakeWorkload("gemm:256,256,256");
  const int64_t tiles_i[] = {1, 2, 4, 8, 16};
  const int64_t tiles_j[] = {8, 16, 32, 64};
  std::vector<PrimFunc> funcs;
  for (int n = 0; n < count; ++n) {
    funcs.push_back(bench::ScheduleGemm(w.func, tiles_i[n % 5], tiles_j[(n / 5) % 4]));
  }
  MeasureTask task = MakeMeasureTask(w.func, target);
  std::vector<BuildResult> built = Builder(BuilderConfig{}).Build(funcs, target);
  std::vector<MeasureCandidate> candidates;
  for (BuildResult& b : built) {
    if (!b.ok()) {
      fmt::print(stderr, "build failed: {}\n", b.message);
      return 1;
    }
    candidates.push_back(CandidateFor(task, std::move(b)));
  }
  TimerConfig timer = TuningTimerConfig();

  RunnerConfig local_config;
  local_config.timer = timer;
  local_config.cpu_sets = {{0}};
  RunnerPool local(local_config);
  double local_rate = Rate(local, candidates);

  testing::RedisServer redis;
  if (!redis.ok()) {
    fmt::print(stderr, "{}\n", redis.error());
    return 1;
  }
  RemoteRunnerConfig remote_config;
  remote_config.broker = ParseBrokerUrl(redis.url());
  remote_config.target = target.str();
  remote_config.timer = timer;
  std::vector<pid_t> agents = {SpawnAgent(redis.url(), 0)};
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  double one_rate = 0, two_rate = 0;
  int64_t in_before = BrokerBytes(redis.url(), "total_net_input_bytes");
  int64_t out_before = BrokerBytes(redis.url(), "total_net_output_bytes");
  {
    RemoteRunner remote(remote_config);
    one_rate = Rate(remote, candidates);
  }
  int64_t in_bytes = BrokerBytes(redis.url(), "total_net_input_bytes") - in_before;
  int64_t out_bytes = BrokerBytes(redis.url(), "total_net_output_bytes") - out_before;
  agents.push_back(SpawnAgent(redis.url(), 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  {
    RemoteRunner remote(remote_config);
    two_rate = Rate(remote, candidates);
  }
  for (pid_t pid : agents) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
  nlohmann::json j = {{"bench", "device_pool"},
                      {"cpu", CpuModel()},
                      {"workload", w.spec},
                      {"target", target.str()},
                      {"candidates", count},
                      {"local_per_second", local_rate},
                      {"one_agent_per_second", one_rate},
                      {"two_agents_per_second", two_rate},
                      {"one_agent_vs_local", one_rate / local_rate},
                      {"two_agents_vs_one", two_rate / one_rate},
                      {"broker_bytes_in_per_job", static_cast<double>(in_bytes) / count},
                      {"broker_bytes_out_per_job", static_cast<double>(out_bytes) / count},
                      {"object_bytes_mean", [&] {
                         double sum = 0;
                         for (const MeasureCandidate& c : candidates) sum += c.object.size();
                         return sum / count;
                       }()}};
  fmt::print("{}\n", j.dump());
  fmt::print(stderr,
             "{}: local {:.2f}/s, one agent {:.2f}/s ({:.3f}x local), two agents {:.2f}/s "
             "({:.2f}x one)\n",
             CpuModel(), local_rate, one_rate, one_rate / local_rate, two_rate,
             two_rate / one_rate);
  return 0;
}
