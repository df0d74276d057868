// What travels through a device pool's broker: the keys, device classes, jobs (one candidate each,
// signed by the tuner), results, and content-addressed blobs (compiled objects and a task's
// inputs and expected outputs, named by their SHA-256, sent once however many jobs use them).
//
//   tirtune:agents               set of agent ids (each live one has tirtune:agent:ID)
//   tirtune:agent:ID             hash: class, class_text, device, host, pid, jobs, busy_s, current;
//                                expires unless the agent's heartbeat renews it
//   tirtune:jobs:CLASS           stream of jobs of one device class, consumer group "agents"
//   tirtune:results:SESSION      stream of one tuner session's results
//   tirtune:blob:SHA256          bytes, expiring after a day
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tirtune/measure/runner.h"
#include "tirtune/measure/runner_protocol.h"
#include "tirtune/runtime/cuda_driver.h"
#include "tirtune/support/sha256.h"

namespace tirtune::pool {

inline constexpr std::string_view kAgents = "tirtune:agents";
inline constexpr std::string_view kGroup = "agents";
std::string AgentKey(std::string_view agent_id);
std::string JobsKey(std::string_view class_id);
std::string ResultsKey(std::string_view session);
std::string BlobKey(std::string_view sha256_hex);

/// The SHA-256 of `bytes`, as 64 lowercase hex digits (support/sha256.h).
using ::tirtune::Sha256Hex;

/// A kind of device whose timings may be compared: the canonical target plus a fingerprint of
/// the hardware (CPU model, its flags, the cores measured on). One job stream per class, so that
/// timings never mix across hardware.
struct DeviceClass {
  std::string target;
  std::string fingerprint;
  /// The first 16 hex digits of SHA-256(target, fingerprint): names the class's stream.
  std::string id() const;
  /// "llvm -mcpu=znver5 -num-cores=2 on AMD EPYC 9B45 (2 cores)".
  std::string text;
};

/// This host's class when measuring for `target` (canonical) on `cores` cores.
DeviceClass HostDeviceClass(const std::string& target, int cores);

/// The class of a GPU measuring for a `cuda` target: its name, compute capability, SMs, memory
/// and clock ("cuda -arch=sm_90 on NVIDIA H200 (132 SMs)").
DeviceClass GpuDeviceClass(const std::string& target, const cuda::DeviceInfo& device);

/// An Ed25519 key: 32 public bytes, and the 64-byte secret for a signer.
struct SigningKey {
  std::string public_key;  // raw bytes
  std::string secret_key;  // raw bytes; empty for a public key only
  std::string public_hex() const;
};
/// A new key pair.
SigningKey GenerateSigningKey();
/// Reads a key file written by WriteSigningKey ("tirtune-ed25519-secret HEX" or
/// "tirtune-ed25519-public HEX" lines); UserError naming the file and what is wrong.
SigningKey ReadSigningKey(const std::string& path);
/// Every public key of an allowlist file (one "tirtune-ed25519-public HEX" per line, # comments).
std::vector<std::string> ReadAllowedKeys(const std::string& path);
/// Writes the secret (mode 0600) and public key files.
void WriteSigningKey(const SigningKey& key, const std::string& secret_path,
                     const std::string& public_path);

/// One candidate to measure on a device of `device_class`.
struct Job {
  std::string id;  // unique per tuner session: SESSION:N
  std::string device_class;
  std::string reply_to;    // the results stream
  std::string object_sha;  // the compiled object's blob
  std::string task_sha;    // the task blob (TaskBlob)
  std::string func_name;
  std::string target;
  TimerConfig timer;
  double timeout_s = 30;
  SlowCutoff cutoff;
  /// Hex public key of the signer and the hex Ed25519 signature of SigningText(); empty: unsigned.
  std::string signer;
  std::string signature;
};

/// The job as stream fields (name, value, name, value, ...).
std::vector<std::string> JobFields(const Job& job);
/// The job from stream fields; UserError naming the missing or malformed field.
Job ParseJob(const std::vector<std::pair<std::string, std::string>>& fields);
/// What the signature covers: every field but the signature, in a fixed order.
std::string SigningText(const Job& job);
void SignJob(Job& job, const SigningKey& key);
/// Empty when `job` is signed by one of `allowed` (hex public keys) and untampered; otherwise why
/// not.
std::string CheckSignature(const Job& job, const std::vector<std::string>& allowed);

/// A task's inputs and expected outputs: a RunRequest without object, as bytes.
std::string TaskBlob(const MeasureCandidate& candidate);
/// The request that measures `object` for `job`, from the task blob's bytes; UserError for bad
/// bytes.
RunRequest RequestFor(const Job& job, const std::string& task_blob, std::string object);

/// What an agent says about a job.
struct JobResult {
  std::string job_id;
  MeasureResult result;
  /// The agent lacked a blob (the broker lost it): the tuner sends the blobs and the job again.
  bool resend = false;
  std::string agent;
};
std::vector<std::string> ResultFields(const JobResult& result);
JobResult ParseResult(const std::vector<std::pair<std::string, std::string>>& fields);

/// Stream entry fields of a reply element [id, [f, v, f, v...]] as pairs.
template <typename View>
std::vector<std::pair<std::string, std::string>> FieldsOf(const View& entry_fields) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i + 1 < entry_fields.size(); i += 2) {
    out.emplace_back(entry_fields[i].str(), entry_fields[i + 1].str());
  }
  return out;
}

}  // namespace tirtune::pool
