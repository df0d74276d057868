// `tirtune-agent`: a device-pool worker. It dials out to the broker, announces its device class
// with a heartbeat that expires when it dies, takes the jobs of its class one at a time through
// the stream's consumer group, checks each job's signature, fetches the job's blobs (checking
// their SHA-256), measures the candidate in an isolated `tirtune-runner` pinned to its CPUs, and
// answers on the tuner's result stream. A job left behind by a dead agent is reclaimed once its
// lease lapses; one that two agents died running is answered as device_lost, not run again.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "tirtune/measure/pool_protocol.h"
#include "tirtune/measure/redis_client.h"

namespace tirtune {

struct AgentConfig {
  BrokerAddress broker;
  /// The canonical target it measures for (its device class's target).
  std::string target;
  /// CPUs the runner is pinned to; empty: not pinned.
  std::vector<int> cpus;
  /// Cores it measures on (the class's fingerprint); default: the target's -num-cores.
  int cores = 0;
  /// For a `cuda` target: the GPU it measures on (its class is the GPU's, GpuDeviceClass; the
  /// GPU's architecture must be the target's). Default 0.
  int cuda_device = 0;
  /// Empty: the tirtune-runner built with this library.
  std::string runner_path;
  /// Run kernels in sandboxed runners (no network, no new privileges; RunnerConfig::sandbox).
  /// Default true.
  bool sandbox = true;
  /// Hex Ed25519 public keys whose jobs it runs (ReadAllowedKeys).
  std::vector<std::string> allowed_keys;
  /// Run unsigned jobs too (a trusted network only). Default false.
  bool allow_unsigned = false;
  /// Default "HOST:PID".
  std::string agent_id;
  /// How often it renews its heartbeat and the lease of the job in flight, and how long each
  /// lasts without renewal. Defaults 2 s, 10 s, 10 s.
  double heartbeat_s = 2;
  double ttl_s = 10;
  double lease_s = 10;
  /// How long to keep trying to reach a lost broker before exiting. Default: forever (0).
  double reconnect_s = 0;
  /// Blobs kept in memory, in bytes. Default 256 MiB.
  size_t blob_cache_bytes = size_t{256} << 20;
  /// Receives log lines.
  std::function<void(const std::string&)> log;
};

/// What an agent did.
struct AgentStats {
  int64_t jobs = 0;
  int64_t refused = 0;    // unsigned, tampered, of another class, bad blobs
  int64_t reclaimed = 0;  // taken over from a dead agent
};

/// Runs the agent until `stop` is set (after the job in flight is answered). BrokerError when
/// the broker stays unreachable past `reconnect_s`.
AgentStats RunAgent(const AgentConfig& config, const std::atomic<bool>& stop);

}  // namespace tirtune
