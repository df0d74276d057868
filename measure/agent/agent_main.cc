// `tirtune-agent --broker redis://HOST:PORT [--cpus 0,1] [--allowed-keys FILE]`: a device-pool
// worker (see agent.h). The broker password comes from --password-file or the environment
// (TIRTUNE_BROKER_PASSWORD), never from the command line. SIGTERM or Ctrl-C: answer the job in
// flight, then leave.
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tirtune/codegen/target.h"
#include "tirtune/measure/agent.h"

namespace {

std::atomic<bool> g_stop{false};

void OnStop(int) { g_stop.store(true); }

std::vector<int> ParseCpus(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    size_t dash = item.find('-');
    try {
      size_t used = 0;
      int lo = std::stoi(item.substr(0, dash), &used);
      int hi = dash == std::string::npos ? lo : std::stoi(item.substr(dash + 1));
      if (lo < 0 || hi < lo || hi > 4095) throw std::out_of_range("range");
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    } catch (const std::exception&) {
      throw tirtune::UserError(
          fmt::format("bad --cpus '{}': expected a list like 0,1 or 0-3", text));
    }
  }
  return cpus;
}

std::string ReadPassword(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw tirtune::UserError(fmt::format("cannot read the password file '{}'", path));
  std::string password;
  std::getline(in, password);
  return password;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tirtune-agent: measures a device pool's jobs of this device's class"};
  std::string broker, password_file, target, cpus, allowed_keys, agent_id, runner;
  bool allow_unsigned = false, no_sandbox = false;
  tirtune::AgentConfig config;
  app.add_option("--broker", broker, "redis://[USER@]HOST:PORT")->required();
  app.add_option("--password-file", password_file,
                 "file whose first line is the broker password (or TIRTUNE_BROKER_PASSWORD)");
  app.add_option("--target", target, "the target measured for; default: the host on its CPUs");
  app.add_option("--cpus", cpus, "CPUs to pin the runner to, e.g. 0,1 or 0-3");
  app.add_option("--allowed-keys", allowed_keys,
                 "tuner public keys whose jobs run here (tirtune pool keygen's .pub files)");
  app.add_flag("--allow-unsigned", allow_unsigned,
               "also run unsigned jobs (trusted networks only)");
  app.add_flag("--no-sandbox", no_sandbox,
               "run kernels with the network and privileges of the agent (default: without)");
  app.add_option("--cuda-device", config.cuda_device,
                 "with a cuda target: the GPU to measure on (its architecture must be the "
                 "target's)")
      ->capture_default_str();
  app.add_option("--id", agent_id, "the agent's name; default HOST:PID");
  app.add_option("--runner", runner, "the tirtune-runner executable; default: the one built here");
  app.add_option("--heartbeat", config.heartbeat_s, "seconds between heartbeats")
      ->capture_default_str();
  app.add_option("--ttl", config.ttl_s, "seconds an announcement lives without a heartbeat")
      ->capture_default_str();
  app.add_option("--lease", config.lease_s,
                 "seconds a job may go without renewal before another agent takes it")
      ->capture_default_str();
  app.add_option("--reconnect", config.reconnect_s,
                 "seconds to keep trying a lost broker before exiting (0: forever)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    config.broker = tirtune::ParseBrokerUrl(broker);
    if (!password_file.empty()) {
      config.broker.password = ReadPassword(password_file);
    } else if (const char* env = std::getenv("TIRTUNE_BROKER_PASSWORD")) {
      config.broker.password = env;
    }
    if (!cpus.empty()) config.cpus = ParseCpus(cpus);
    tirtune::Target t = target.empty() ? tirtune::Target::Host() : tirtune::Target::Parse(target);
    if (target.empty() && !config.cpus.empty()) t.num_cores = static_cast<int>(config.cpus.size());
    config.target = t.str();
    config.cores = t.num_cores;
    if (!allowed_keys.empty()) config.allowed_keys = tirtune::pool::ReadAllowedKeys(allowed_keys);
    config.allow_unsigned = allow_unsigned;
    config.sandbox = !no_sandbox;
    config.agent_id = agent_id;
    config.runner_path = runner;
    config.log = [](const std::string& line) { fmt::print(stderr, "tirtune-agent: {}\n", line); };
    struct sigaction action = {};
    action.sa_handler = OnStop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    signal(SIGPIPE, SIG_IGN);
    tirtune::RunAgent(config, g_stop);
    return 0;
  } catch (const tirtune::UserError& e) {
    fmt::print(stderr, "tirtune-agent: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tirtune-agent: internal error: {}\n", e.what());
    return 70;
  }
}
