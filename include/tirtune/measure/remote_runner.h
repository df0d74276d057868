// The device pool's Runner on the tuner's side: every candidate becomes a signed job on the
// broker's stream of one device class, its object and its task's inputs and expected outputs
// travel as content-addressed blobs (once per task, not per candidate), and `tirtune-agent`s of
// that class measure the jobs in their isolated runners and answer on this session's result
// stream. A lost broker is reconnected to, and the jobs it forgot are sent again; results of a
// job already answered are dropped.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tirtune/measure/pool_protocol.h"
#include "tirtune/measure/redis_client.h"
#include "tirtune/measure/runner.h"

namespace tirtune {

struct RemoteRunnerConfig {
  BrokerAddress broker;
  /// The canonical target the candidates are compiled for.
  std::string target;
  /// A device class id; empty (the default): the only live class whose target is `target`.
  std::string device_class;
  /// Per candidate, as RunnerConfig::timeout_s: the agent enforces it. Default 30 s.
  double timeout_s = 30;
  TimerConfig timer;
  /// Signs every job; unset: jobs go unsigned, and only agents started with --allow-unsigned
  /// take them.
  std::optional<pool::SigningKey> key;
  /// How long to keep trying to reach a lost broker before the run stops. Default 60 s.
  double reconnect_s = 60;
  /// How long a run may see no live agent of its class (agents restarting, a broker restart
  /// between heartbeats) before it stops. At the start there must be one. Default 10 s.
  double no_agent_grace_s = 10;
  /// Jobs sent ahead per live agent (more keeps agents busy, fewer keeps the slow-candidate
  /// cutoff fresh). Default 2.
  int jobs_per_agent = 2;
};

/// A live agent as it announces itself.
struct AgentInfo {
  std::string id;
  std::string device_class;
  std::string class_text;
  std::string device;
  std::string host;
  int64_t jobs_done = 0;
  double busy_seconds = 0;
  double started_at = 0;
  /// The job it is measuring; empty when idle.
  std::string current_job;
};

/// The live agents (their heartbeat key not expired); drops the expired ones from the index.
std::vector<AgentInfo> LiveAgents(RedisClient& client);

class RemoteRunner : public Runner {
 public:
  /// Connects and picks the device class; UserError when the broker cannot be reached or no live
  /// agent measures for the target (naming the live classes).
  explicit RemoteRunner(RemoteRunnerConfig config);
  ~RemoteRunner() override;

  std::vector<MeasureResult> Measure(const std::vector<MeasureCandidate>& candidates,
                                     const SlowCutoff& cutoff = {},
                                     const MeasureCallback& on_result = {}) override;
  std::string Describe() const override;

  const std::string& device_class() const { return class_id_; }
  /// Jobs sent again after the broker lost them (a restart) or lost a blob.
  int resent() const { return resent_; }
  /// Results dropped as duplicates of an answered job.
  int duplicates() const { return duplicates_; }

 private:
  struct Blob {
    std::string sha;
    std::string bytes;
  };
  void Connect();
  void Reconnect(const std::string& why);
  std::string ChooseClass();
  int LiveAgentsOfClass();
  void Upload(const std::vector<const Blob*>& blobs);
  const Blob& TaskBlobOf(const MeasureCandidate& c);

  RemoteRunnerConfig config_;
  std::unique_ptr<RedisClient> client_;
  std::string run_id_;
  std::string session_;
  std::string class_id_;
  std::string class_text_;
  std::set<std::string> uploaded_;
  struct TaskBlobEntry {
    std::string key;  // TaskKeyOf: the task's seed, arguments and array addresses
    std::vector<NDArray> arrays;
    std::unique_ptr<Blob> blob;  // stable address: jobs in flight point to it
  };
  std::vector<TaskBlobEntry> task_blobs_;
  int64_t next_job_ = 0;
  int resent_ = 0;
  int duplicates_ = 0;
};

}  // namespace tirtune
