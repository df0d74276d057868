// Encoding of the device pool's jobs, results and blobs, device classes, and job signatures
// (Ed25519 through libsodium).
#include "tirtune/measure/pool_protocol.h"

#include <fmt/format.h>
#include <sodium.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "tirtune/support/error.h"
#include "tirtune/support/sha256.h"

namespace tirtune::pool {
namespace {

// Version 2: the timer's cold_constants, task blobs in runner request format TRQ6.
constexpr std::string_view kProtocol = "2";
constexpr std::string_view kSecretTag = "tirtune-ed25519-secret";
constexpr std::string_view kPublicTag = "tirtune-ed25519-public";

void InitSodium() {
  static const bool ok = sodium_init() >= 0;
  if (!ok) throw InternalError("libsodium failed to initialize");
}

std::string Hex(std::string_view bytes) {
  std::string out(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                 bytes.size());
  out.pop_back();
  return out;
}

// `hex` as bytes, or empty when it is not exactly `n` bytes of hex.
std::string Unhex(std::string_view hex, size_t n) {
  std::string out(n, '\0');
  size_t len = 0;
  const char* end = nullptr;
  if (hex.size() != 2 * n ||
      sodium_hex2bin(reinterpret_cast<unsigned char*>(out.data()), n, hex.data(), hex.size(),
                     nullptr, &len, &end) != 0 ||
      len != n) {
    return "";
  }
  return out;
}

std::string Number(double v) { return fmt::format("{:.17g}", v); }

double ParseNumber(std::string_view field, const std::string& text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    TT_USER_ERROR("bad field '{}': '{}' is not a number", field, text.substr(0, 40));
  }
  return v;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  if (text.empty()) return parts;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) parts.push_back(item);
  return parts;
}

// Looks fields up by name, naming the missing one.
class FieldMap {
 public:
  FieldMap(const std::vector<std::pair<std::string, std::string>>& fields, std::string_view what)
      : what_(what) {
    for (const auto& [k, v] : fields) map_[k] = v;
  }
  const std::string& Get(std::string_view name) const {
    auto it = map_.find(std::string(name));
    if (it == map_.end()) TT_USER_ERROR("bad {}: no field '{}'", what_, name);
    return it->second;
  }
  std::string GetOr(std::string_view name, std::string fallback) const {
    auto it = map_.find(std::string(name));
    return it == map_.end() ? fallback : it->second;
  }
  double Number(std::string_view name) const { return ParseNumber(name, Get(name)); }

 private:
  std::map<std::string, std::string> map_;
  std::string_view what_;
};

std::string TimerText(const TimerConfig& t) {
  return fmt::format("{},{},{},{},{}", t.warmup, t.repeat, Number(t.min_repeat_ms),
                     t.flush_cache ? 1 : 0, t.cold_constants ? 1 : 0);
}

TimerConfig ParseTimer(const std::string& text) {
  std::vector<std::string> p = SplitCommas(text);
  if (p.size() != 5) TT_USER_ERROR("bad field 'timer': '{}'", text.substr(0, 40));
  TimerConfig t;
  t.warmup = static_cast<int>(ParseNumber("timer", p[0]));
  t.repeat = static_cast<int>(ParseNumber("timer", p[1]));
  t.min_repeat_ms = ParseNumber("timer", p[2]);
  t.flush_cache = p[3] == "1";
  t.cold_constants = p[4] == "1";
  if (t.warmup < 0 || t.warmup > 1000 || t.repeat < 1 || t.repeat > 10000 || t.min_repeat_ms < 0 ||
      t.min_repeat_ms > 60000) {
    TT_USER_ERROR("bad field 'timer': '{}' is out of range", text);
  }
  return t;
}

std::string CutoffText(const SlowCutoff& c) {
  return fmt::format("{},{},{},{}", Number(c.factor), Number(c.best_seconds),
                     Number(c.long_run_seconds), Number(c.grace_s));
}

SlowCutoff ParseCutoff(const std::string& text) {
  std::vector<std::string> p = SplitCommas(text);
  if (p.size() != 4) TT_USER_ERROR("bad field 'cutoff': '{}'", text.substr(0, 40));
  SlowCutoff c;
  c.factor = ParseNumber("cutoff", p[0]);
  c.best_seconds = ParseNumber("cutoff", p[1]);
  c.long_run_seconds = ParseNumber("cutoff", p[2]);
  c.grace_s = ParseNumber("cutoff", p[3]);
  if (c.factor < 0 || c.best_seconds < 0 || c.long_run_seconds < 0 || c.grace_s < 0) {
    TT_USER_ERROR("bad field 'cutoff': '{}' has a negative number", text);
  }
  return c;
}

std::optional<MeasureStatus> ParseStatus(std::string_view name) {
  for (MeasureStatus s :
       {MeasureStatus::kOk, MeasureStatus::kBuildError, MeasureStatus::kRuntimeError,
        MeasureStatus::kTimeout, MeasureStatus::kWrongResult, MeasureStatus::kRunnerLost,
        MeasureStatus::kDeviceLost}) {
    if (name == MeasureStatusName(s)) return s;
  }
  return std::nullopt;
}

std::string ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream in(path);
  if (!in) TT_USER_ERROR("cannot read the {} '{}'", what, path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string AgentKey(std::string_view agent_id) {
  return fmt::format("tirtune:agent:{}", agent_id);
}
std::string JobsKey(std::string_view class_id) { return fmt::format("tirtune:jobs:{}", class_id); }
std::string ResultsKey(std::string_view session) {
  return fmt::format("tirtune:results:{}", session);
}
std::string BlobKey(std::string_view sha) { return fmt::format("tirtune:blob:{}", sha); }

std::string DeviceClass::id() const { return Sha256Hex(target + "\n" + fingerprint).substr(0, 16); }

DeviceClass HostDeviceClass(const std::string& target, int cores) {
  std::string model = "unknown CPU", flags;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(std::min(line.size(), colon + 2));
    if (line.rfind("model name", 0) == 0 && model == "unknown CPU") model = value;
    if (line.rfind("flags", 0) == 0 && flags.empty()) flags = value;
  }
  // The flags in a fixed order: the same CPU reports them the same way, whatever the kernel.
  std::vector<std::string> sorted;
  std::stringstream ss(flags);
  for (std::string f; ss >> f;) sorted.push_back(f);
  std::sort(sorted.begin(), sorted.end());
  std::string flag_text;
  for (const std::string& f : sorted) flag_text += f + " ";
  DeviceClass c;
  c.target = target;
  c.fingerprint =
      fmt::format("{}; {} cores; flags {}", model, cores, Sha256Hex(flag_text).substr(0, 12));
  c.text = fmt::format("{} on {} ({} cores)", target, model, cores);
  return c;
}

DeviceClass GpuDeviceClass(const std::string& target, const cuda::DeviceInfo& device) {
  DeviceClass c;
  c.target = target;
  c.fingerprint = fmt::format("{}; {}; {} SMs; {} MiB; {} MHz", device.name, device.Arch(),
                              device.sm_count, device.memory_bytes >> 20,
                              device.clock_khz / 1000);
  c.text = fmt::format("{} on {} ({} SMs)", target, device.name, device.sm_count);
  return c;
}

std::string SigningKey::public_hex() const { return Hex(public_key); }

SigningKey GenerateSigningKey() {
  InitSodium();
  SigningKey key;
  key.public_key.assign(crypto_sign_PUBLICKEYBYTES, '\0');
  key.secret_key.assign(crypto_sign_SECRETKEYBYTES, '\0');
  crypto_sign_keypair(reinterpret_cast<unsigned char*>(key.public_key.data()),
                      reinterpret_cast<unsigned char*>(key.secret_key.data()));
  return key;
}

SigningKey ReadSigningKey(const std::string& path) {
  std::stringstream in(ReadWholeFile(path, "key file"));
  std::string tag, hex;
  in >> tag >> hex;
  SigningKey key;
  if (tag == kSecretTag) {
    key.secret_key = Unhex(hex, crypto_sign_SECRETKEYBYTES);
    if (key.secret_key.empty())
      TT_USER_ERROR("bad key file '{}': the secret key is not 64 hex bytes", path);
    key.public_key = key.secret_key.substr(32);  // libsodium's secret key ends with the public one
  } else if (tag == kPublicTag) {
    key.public_key = Unhex(hex, crypto_sign_PUBLICKEYBYTES);
    if (key.public_key.empty())
      TT_USER_ERROR("bad key file '{}': the public key is not 32 hex bytes", path);
  } else {
    TT_USER_ERROR(
        "bad key file '{}': it should start with '{}' or '{}' (made by tirtune pool keygen)", path,
        kSecretTag, kPublicTag);
  }
  return key;
}

std::vector<std::string> ReadAllowedKeys(const std::string& path) {
  std::stringstream in(ReadWholeFile(path, "allowed-keys file"));
  std::vector<std::string> keys;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    std::stringstream ls(line);
    std::string tag, hex;
    if (!(ls >> tag) || tag[0] == '#') continue;
    ls >> hex;
    if (tag != kPublicTag || Unhex(hex, crypto_sign_PUBLICKEYBYTES).empty()) {
      TT_USER_ERROR(
          "bad allowed-keys file '{}', line {}: expected '{} HEX' (a .pub file of tirtune "
          "pool keygen)",
          path, line_number, kPublicTag);
    }
    keys.push_back(hex);
  }
  if (keys.empty()) TT_USER_ERROR("the allowed-keys file '{}' has no key", path);
  return keys;
}

void WriteSigningKey(const SigningKey& key, const std::string& secret_path,
                     const std::string& public_path) {
  {
    std::ofstream out(secret_path, std::ios::trunc);
    if (!out) TT_USER_ERROR("cannot write the key file '{}'", secret_path);
    out << kSecretTag << " " << Hex(key.secret_key) << "\n";
  }
  chmod(secret_path.c_str(), 0600);
  std::ofstream out(public_path, std::ios::trunc);
  if (!out) TT_USER_ERROR("cannot write the key file '{}'", public_path);
  out << kPublicTag << " " << key.public_hex() << "\n";
}

std::vector<std::string> JobFields(const Job& j) {
  return {"v",         std::string(kProtocol),
          "job",       j.id,
          "class",     j.device_class,
          "reply",     j.reply_to,
          "object",    j.object_sha,
          "task",      j.task_sha,
          "func",      j.func_name,
          "target",    j.target,
          "timer",     TimerText(j.timer),
          "timeout",   Number(j.timeout_s),
          "cutoff",    CutoffText(j.cutoff),
          "signer",    j.signer,
          "signature", j.signature};
}

Job ParseJob(const std::vector<std::pair<std::string, std::string>>& fields) {
  FieldMap f(fields, "job");
  if (f.Get("v") != kProtocol) {
    TT_USER_ERROR("bad job: protocol version '{}', this agent speaks {}", f.Get("v").substr(0, 20),
                  kProtocol);
  }
  Job j;
  j.id = f.Get("job");
  j.device_class = f.Get("class");
  j.reply_to = f.Get("reply");
  j.object_sha = f.Get("object");
  j.task_sha = f.Get("task");
  j.func_name = f.Get("func");
  j.target = f.Get("target");
  j.timer = ParseTimer(f.Get("timer"));
  j.timeout_s = f.Number("timeout");
  if (!(j.timeout_s > 0 && j.timeout_s <= 86400))
    TT_USER_ERROR("bad job: timeout {} s", j.timeout_s);
  j.cutoff = ParseCutoff(f.Get("cutoff"));
  j.signer = f.GetOr("signer", "");
  j.signature = f.GetOr("signature", "");
  if (j.reply_to.rfind("tirtune:results:", 0) != 0) {
    TT_USER_ERROR("bad job: reply stream '{}' is not a tirtune results stream",
                  j.reply_to.substr(0, 60));
  }
  for (const std::string* sha : {&j.object_sha, &j.task_sha}) {
    if (sha->size() != 64 || sha->find_first_not_of("0123456789abcdef") != std::string::npos) {
      TT_USER_ERROR("bad job: '{}' is not a SHA-256", sha->substr(0, 70));
    }
  }
  return j;
}

std::string SigningText(const Job& j) {
  std::vector<std::string> fields = JobFields(j);
  std::string text = "tirtune-job\n";
  for (size_t i = 0; i + 1 < fields.size(); i += 2) {
    if (fields[i] == "signature") continue;
    text += fields[i] + "=" + fields[i + 1] + "\n";
  }
  return text;
}

void SignJob(Job& job, const SigningKey& key) {
  InitSodium();
  TT_ICHECK(key.secret_key.size() == crypto_sign_SECRETKEYBYTES, "signing without a secret key");
  job.signer = key.public_hex();
  job.signature.clear();
  std::string text = SigningText(job);
  unsigned char sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(text.data()),
                       text.size(), reinterpret_cast<const unsigned char*>(key.secret_key.data()));
  job.signature = Hex(std::string_view(reinterpret_cast<const char*>(sig), sizeof sig));
}

std::string CheckSignature(const Job& job, const std::vector<std::string>& allowed) {
  InitSodium();
  if (job.signature.empty()) return "the job is not signed";
  if (std::find(allowed.begin(), allowed.end(), job.signer) == allowed.end()) {
    return fmt::format("the job is signed by key {}…, which is not in the allowed keys",
                       job.signer.substr(0, 16));
  }
  std::string sig = Unhex(job.signature, crypto_sign_BYTES);
  std::string pk = Unhex(job.signer, crypto_sign_PUBLICKEYBYTES);
  std::string text = SigningText(job);
  if (sig.empty() || pk.empty() ||
      crypto_sign_verify_detached(reinterpret_cast<const unsigned char*>(sig.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()), text.size(),
                                  reinterpret_cast<const unsigned char*>(pk.data())) != 0) {
    return "the job's signature does not match its contents (tampered or damaged)";
  }
  return "";
}

std::string TaskBlob(const MeasureCandidate& c) {
  RunRequest r;
  r.args = c.args;
  r.seed = c.seed;
  r.reduction_length = c.reduction_length;
  r.expected = c.expected;
  r.library = c.library;
  return SerializeRequest(r);
}

RunRequest RequestFor(const Job& job, const std::string& task_blob, std::string object) {
  RunRequest r = DeserializeRequest(task_blob);
  r.object = std::move(object);
  r.func_name = job.func_name;
  r.target = job.target;
  r.timer = job.timer;
  return r;
}

std::vector<std::string> ResultFields(const JobResult& j) {
  const MeasureResult& r = j.result;
  std::string secs;
  for (double s : r.seconds) secs += (secs.empty() ? "" : ",") + Number(s);
  return {"job",     j.job_id,
          "status",  j.resend ? std::string("resend") : std::string(MeasureStatusName(r.status)),
          "message", r.message,
          "signal",  r.signal_name,
          "abs",     Number(r.max_abs_error),
          "rel",     Number(r.max_rel_error),
          "secs",    secs,
          "median",  Number(r.median),
          "number",  std::to_string(r.number),
          "device",  r.device,
          "agent",   j.agent};
}

JobResult ParseResult(const std::vector<std::pair<std::string, std::string>>& fields) {
  FieldMap f(fields, "result");
  JobResult j;
  j.job_id = f.Get("job");
  j.agent = f.GetOr("agent", "");
  const std::string& status = f.Get("status");
  if (status == "resend") {
    j.resend = true;
  } else if (std::optional<MeasureStatus> s = ParseStatus(status)) {
    j.result.status = *s;
  } else {
    TT_USER_ERROR("bad result: unknown status '{}'", status.substr(0, 40));
  }
  MeasureResult& r = j.result;
  r.message = f.GetOr("message", "");
  r.signal_name = f.GetOr("signal", "");
  r.max_abs_error = f.Number("abs");
  r.max_rel_error = f.Number("rel");
  for (const std::string& s : SplitCommas(f.Get("secs")))
    r.seconds.push_back(ParseNumber("secs", s));
  r.median = f.Number("median");
  r.number = static_cast<int>(f.Number("number"));
  r.device = f.GetOr("device", "");
  if (!j.resend && r.ok() && r.seconds.empty()) {
    TT_USER_ERROR("bad result: status ok without samples");
  }
  return j;
}

}  // namespace tirtune::pool
