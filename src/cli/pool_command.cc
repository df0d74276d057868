// `tirtune pool status`: a device pool's live agents, their classes, queues and throughput; and
// `tirtune pool keygen`: a key pair for signing jobs.
#include <fmt/core.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "runner_options.h"
#include "tirtune/measure/pool_protocol.h"
#include "tirtune/measure/remote_runner.h"

namespace tirtune::cli {
namespace {

struct PoolCli {
  std::string broker;
  std::string password_file;
  std::string output;
};

struct ClassQueue {
  std::string text;
  int agents = 0;
  int64_t queued = 0;     // sent, not yet taken by an agent
  int64_t in_flight = 0;  // taken, not yet answered
};

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The group's field `name` of an XINFO GROUPS entry (a flat name/value list); -1 when absent.
int64_t GroupField(RedisReply::View group, std::string_view name) {
  for (size_t i = 0; i + 1 < group.size(); i += 2) {
    if (group[i].view() == name) return group[i + 1].is_nil() ? -1 : group[i + 1].integer();
  }
  return -1;
}

void RunStatus(const PoolCli& opts, const GlobalOptions& global) {
  BrokerAddress address = ParseBrokerUrl(opts.broker);
  address.password = BrokerPassword(opts.password_file, global);
  RedisClient client(address);
  std::vector<AgentInfo> agents = LiveAgents(client);
  std::map<std::string, ClassQueue> classes;
  for (const AgentInfo& a : agents) {
    classes[a.device_class].text = a.class_text;
    ++classes[a.device_class].agents;
  }
  for (auto& [id, q] : classes) {
    RedisReply groups = client.Command({"XINFO", "GROUPS", pool::JobsKey(id)}, true);
    if (groups.is_error()) continue;
    for (size_t g = 0; g < groups.size(); ++g) {
      q.in_flight = std::max<int64_t>(0, GroupField(groups[g], "pending"));
      q.queued = std::max<int64_t>(0, GroupField(groups[g], "lag"));
    }
  }
  double now = UnixNow();
  auto rate = [&](const AgentInfo& a) {
    double up = now - a.started_at;
    return up > 0 ? a.jobs_done / up : 0.0;
  };
  if (global.json) {
    nlohmann::json j = {{"broker", address.str()},
                        {"agents", nlohmann::json::array()},
                        {"classes", nlohmann::json::array()}};
    for (const AgentInfo& a : agents) {
      j["agents"].push_back({{"id", a.id},
                             {"class", a.device_class},
                             {"device", a.device},
                             {"host", a.host},
                             {"jobs", a.jobs_done},
                             {"busy_seconds", a.busy_seconds},
                             {"uptime_seconds", now - a.started_at},
                             {"candidates_per_second", rate(a)},
                             {"current_job", a.current_job}});
    }
    for (const auto& [id, q] : classes) {
      j["classes"].push_back({{"class", id},
                              {"description", q.text},
                              {"agents", q.agents},
                              {"queued", q.queued},
                              {"in_flight", q.in_flight}});
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{}: {} live agent(s), {} device class(es)\n", address.str(), agents.size(),
             classes.size());
  for (const auto& [id, q] : classes) {
    fmt::print("\nclass {}: {}\n  {} agent(s), {} job(s) queued, {} in flight\n", id, q.text,
               q.agents, q.queued, q.in_flight);
    for (const AgentInfo& a : agents) {
      if (a.device_class != id) continue;
      fmt::print("  {:<28} {:>6} job(s), {:6.2f} candidates/s, busy {:3.0f}%{}\n", a.id,
                 a.jobs_done, rate(a),
                 now > a.started_at ? 100 * a.busy_seconds / (now - a.started_at) : 0.0,
                 a.current_job.empty() ? "" : ", measuring " + a.current_job);
    }
  }
}

void RunKeygen(const PoolCli& opts, const GlobalOptions& global) {
  pool::SigningKey key = pool::GenerateSigningKey();
  pool::WriteSigningKey(key, opts.output, opts.output + ".pub");
  if (global.json) {
    fmt::print("{}\n", nlohmann::json{{"secret_key_file", opts.output},
                                      {"public_key_file", opts.output + ".pub"},
                                      {"public_key", key.public_hex()}}
                           .dump(2));
    return;
  }
  fmt::print("wrote {} (secret: the tuner's --key) and {}.pub (for the agents' --allowed-keys)\n",
             opts.output, opts.output);
}

}  // namespace

void AddPoolCommand(CLI::App& app, const GlobalOptions& global) {
  CLI::App* pool = app.add_subcommand("pool", "device pools: agents and queues, signing keys");
  pool->require_subcommand(1);
  auto opts = std::make_shared<PoolCli>();
  CLI::App* status = pool->add_subcommand("status", "live agents, their classes and queues");
  status->add_option("--broker", opts->broker, "redis://[USER@]HOST:PORT")->required();
  status->add_option("--password-file", opts->password_file,
                     "a file whose first line is the broker password "
                     "(default: TIRTUNE_BROKER_PASSWORD)");
  status->callback([opts, &global] { RunStatus(*opts, global); });
  CLI::App* keygen = pool->add_subcommand("keygen", "a key pair that signs a tuner's jobs");
  keygen->add_option("-o,--output", opts->output, "the secret key file (NAME.pub: the public one)")
      ->required();
  keygen->callback([opts, &global] { RunKeygen(*opts, global); });
}

}  // namespace tirtune::cli
