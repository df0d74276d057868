// The agent's loop: announce, take a job (a stale one first), check it, fetch its blobs, measure
// it in the local runner, answer, acknowledge; and a heartbeat thread that keeps the agent's
// announcement and the lease on the job in flight alive.
#include "tirtune/measure/agent.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "tirtune/codegen/target.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/runner_pool.h"
#include "tirtune/runtime/cuda_driver.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A job taken from the stream.
struct Taken {
  std::string entry_id;
  std::vector<std::pair<std::string, std::string>> fields;
};

class Agent {
 public:
  Agent(const AgentConfig& config, const std::atomic<bool>& stop)
      : config_(config), stop_(stop), pool_(LocalConfig(config)) {
    if (Target t = Target::Parse(config.target); t.is_cuda()) {
      // A GPU agent: its class is its GPU's, which must be the one the target compiles for.
      cuda::DeviceInfo device;
      try {
        device = cuda::QueryDevice(config.cuda_device);
      } catch (const cuda::CudaUnavailable& e) {
        TT_USER_ERROR("an agent for {} needs a GPU: {}", config.target, e.what());
      }
      if (device.Arch() != t.arch) {
        TT_USER_ERROR("an agent for {} cannot measure on CUDA device {}: it is {} ({})",
                      config.target, config.cuda_device, device.name, device.Arch());
      }
      class_ = pool::GpuDeviceClass(config.target, device);
    } else {
      // The target's core count, unless told otherwise: the class a tuner of that target looks
      // for.
      int cores = config.cores > 0 ? config.cores : t.num_cores;
      class_ = pool::HostDeviceClass(config.target, cores);
    }
    class_id_ = class_.id();
    stream_ = pool::JobsKey(class_id_);
    host_ = HostName();
    id_ = config.agent_id.empty() ? fmt::format("{}:{}", host_, getpid()) : config.agent_id;
    device_ = fmt::format("{} on {}", class_.text.substr(class_.text.find(" on ") + 4), host_);
  }

  AgentStats Run() {
    Connect();
    Log(fmt::format("agent {} measures class {} ({}) for {}", id_, class_id_, class_.text,
                    config_.broker.str()));
    std::thread heartbeat([this] { Heartbeat(); });
    try {
      while (!stop_.load()) {
        try {
          std::optional<Taken> job = ClaimStale();
          bool reclaimed = job.has_value();
          if (!job) job = ReadNew();
          if (job) Handle(*job, reclaimed);
        } catch (const BrokerError& e) {
          Log(fmt::format("lost the broker: {}; reconnecting", e.what()));
          client_.reset();
          Connect();
        }
      }
    } catch (...) {
      StopHeartbeat(heartbeat);
      throw;
    }
    StopHeartbeat(heartbeat);
    try {
      if (client_ == nullptr) Connect();
      client_->Pipeline({{"DEL", pool::AgentKey(id_)}, {"SREM", pool::kAgents, id_}});
    } catch (const std::exception&) {
      // The announcement expires by itself.
    }
    Log(fmt::format("agent {} stopped after {} job(s)", id_, stats_.jobs));
    return stats_;
  }

 private:
  static RunnerConfig LocalConfig(const AgentConfig& config) {
    RunnerConfig r;
    r.runner_path = config.runner_path;
    r.sandbox = config.sandbox;
    if (!config.cpus.empty()) r.cpu_sets = {config.cpus};
    if (Target::Parse(config.target).is_cuda()) r.cuda_devices = {config.cuda_device};
    return r;
  }

  void Log(const std::string& line) const {
    if (config_.log) config_.log(line);
  }

  // Connects (again), retrying until `reconnect_s` passes (0: forever) or the agent is stopped.
  void Connect() {
    auto start = Clock::now();
    for (int attempt = 0;; ++attempt) {
      try {
        client_ = std::make_unique<RedisClient>(config_.broker, 5, 30);
        EnsureGroup();
        return;
      } catch (const BrokerError& e) {
        client_.reset();
        if ((config_.reconnect_s > 0 && SecondsSince(start) > config_.reconnect_s) ||
            (stop_.load() && attempt > 0)) {
          throw;
        }
        if (attempt == 0) Log(fmt::format("{}; retrying", e.what()));
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(250 * (attempt + 1), 2000)));
      }
    }
  }

  void EnsureGroup() {
    client_->Command({"XGROUP", "CREATE", stream_, pool::kGroup, "0", "MKSTREAM"},
                     /*allow_error=*/true);
  }

  static std::optional<Taken> FirstEntry(RedisReply::View entries) {
    for (size_t i = 0; i < entries.size(); ++i) {
      RedisReply::View e = entries[i];
      if (e.is_nil() || e.size() < 2 || e[1].is_nil()) continue;
      return Taken{e[0].str(), pool::FieldsOf(e[1])};
    }
    return std::nullopt;
  }

  // A job whose agent stopped renewing its lease (it died or hangs).
  std::optional<Taken> ClaimStale() {
    std::string idle = std::to_string(static_cast<int64_t>(config_.lease_s * 1000));
    RedisReply r = client_->Command(
        {"XAUTOCLAIM", stream_, pool::kGroup, id_, idle, "0-0", "COUNT", "1"}, true);
    if (r.is_error()) {
      if (r.str().find("NOGROUP") != std::string::npos) EnsureGroup();
      return std::nullopt;
    }
    return FirstEntry(r[1]);
  }

  std::optional<Taken> ReadNew() {
    RedisReply r = client_->Command({"XREADGROUP", "GROUP", pool::kGroup, id_, "COUNT", "1",
                                     "BLOCK", "1000", "STREAMS", stream_, ">"},
                                    true);
    if (r.is_error()) {
      // A restarted broker forgot the group.
      if (r.str().find("NOGROUP") != std::string::npos) EnsureGroup();
      return std::nullopt;
    }
    if (r.is_nil() || r.size() == 0) return std::nullopt;
    return FirstEntry(r[0][1]);
  }

  // How many times the entry was delivered (1 for a fresh one).
  int64_t Deliveries(const std::string& entry_id) {
    RedisReply r = client_->Command({"XPENDING", stream_, pool::kGroup, entry_id, entry_id, "1"});
    if (r.size() == 0) return 1;
    return r[0][3].integer();
  }

  // The blob named `sha`, from the cache or the broker; nullopt when the broker has lost it.
  std::optional<std::string> Blob(const std::string& sha, std::string* why) {
    if (auto it = cache_.find(sha); it != cache_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.second);
      return it->second.first;
    }
    RedisReply r = client_->Command({"GET", pool::BlobKey(sha)});
    if (r.is_nil()) return std::nullopt;
    std::string bytes = r.str();
    if (pool::Sha256Hex(bytes) != sha) {
      *why = fmt::format("blob {} does not match its SHA-256 (damaged or replaced on the broker)",
                         sha.substr(0, 16));
      return std::string();
    }
    cached_bytes_ += bytes.size();
    lru_.push_front(sha);
    cache_[sha] = {bytes, lru_.begin()};
    while (cached_bytes_ > config_.blob_cache_bytes && lru_.size() > 1) {
      auto last = cache_.find(lru_.back());
      cached_bytes_ -= last->second.first.size();
      cache_.erase(last);
      lru_.pop_back();
    }
    return bytes;
  }

  void Handle(const Taken& taken, bool reclaimed) {
    if (reclaimed) ++stats_.reclaimed;
    pool::Job job;
    try {
      job = pool::ParseJob(taken.fields);
    } catch (const UserError& e) {
      // Nobody to answer: drop it.
      Log(fmt::format("dropped entry {}: {}", taken.entry_id, e.what()));
      ++stats_.refused;
      client_->Command({"XACK", stream_, pool::kGroup, taken.entry_id});
      return;
    }
    pool::JobResult answer;
    answer.job_id = job.id;
    answer.agent = id_;
    MeasureResult& result = answer.result;
    result.device = device_;
    auto refuse = [&](const std::string& why) {
      ++stats_.refused;
      result.status = MeasureStatus::kRunnerLost;
      result.message = fmt::format("agent {} refused the job: {}", id_, why);
      Log(fmt::format("job {}: refused: {}", job.id, why));
    };
    std::string why;
    if (int64_t n = Deliveries(taken.entry_id); n >= 3) {
      result.status = MeasureStatus::kDeviceLost;
      result.message = fmt::format(
          "the job was taken by {} agents that stopped before answering; not run again", n - 1);
    } else if (job.device_class != class_id_) {
      refuse(fmt::format("it is for device class {}, this agent measures class {}",
                         job.device_class, class_id_));
    } else if (!(config_.allow_unsigned && job.signature.empty()) &&
               !(why = pool::CheckSignature(job, config_.allowed_keys)).empty()) {
      refuse(why);
    } else {
      SetCurrent(taken.entry_id, job.id);
      auto start = Clock::now();
      Measure(job, answer, &why);
      busy_seconds_.store(busy_seconds_.load() + SecondsSince(start));
      SetCurrent("", "");
      if (!why.empty()) refuse(why);
    }
    Reply(job, answer, taken.entry_id);
    ++stats_.jobs;
    jobs_done_.store(stats_.jobs);
  }

  void Measure(const pool::Job& job, pool::JobResult& answer, std::string* why) {
    std::optional<std::string> object = Blob(job.object_sha, why);
    std::optional<std::string> task = why->empty() ? Blob(job.task_sha, why) : std::string();
    if (!why->empty()) return;
    if (!object || !task) {
      answer.resend = true;
      answer.result.message = "the broker lost a blob of the job";
      return;
    }
    MeasureCandidate c;
    try {
      RunRequest request = pool::RequestFor(job, *task, std::move(*object));
      c.object = std::move(request.object);
      c.func_name = request.func_name;
      c.target = request.target;
      c.args = std::move(request.args);
      c.seed = request.seed;
      c.expected = std::move(request.expected);
      c.reduction_length = request.reduction_length;
      c.library = std::move(request.library);
    } catch (const UserError& e) {
      *why = fmt::format("bad task blob {}: {}", job.task_sha.substr(0, 16), e.what());
      return;
    }
    pool_.SetTiming(job.timer, job.timeout_s);
    std::string device = answer.result.device;
    answer.result = pool_.Measure({c}, job.cutoff).front();
    answer.result.device = device;
  }

  // Answers and acknowledges, reconnecting as often as it takes: a measured result is not lost
  // to a broker restart.
  void Reply(const pool::Job& job, const pool::JobResult& answer, const std::string& entry_id) {
    std::vector<std::string> fields = pool::ResultFields(answer);
    std::vector<std::string_view> xadd = {"XADD", job.reply_to, "MAXLEN", "~", "100000", "*"};
    for (const std::string& f : fields) xadd.push_back(f);
    for (;;) {
      try {
        client_->Pipeline(
            {xadd, {"EXPIRE", job.reply_to, "86400"}, {"XACK", stream_, pool::kGroup, entry_id}});
        return;
      } catch (const BrokerError& e) {
        Log(fmt::format("lost the broker while answering job {}: {}; reconnecting", job.id,
                        e.what()));
        client_.reset();
        Connect();
      }
    }
  }

  void SetCurrent(const std::string& entry_id, const std::string& job_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    current_entry_ = entry_id;
    current_job_ = job_id;
  }

  // Renews the announcement and the lease of the job in flight, on its own connection.
  void Heartbeat() {
    std::unique_ptr<RedisClient> client;
    double started = UnixNow();
    std::string ttl_ms = std::to_string(static_cast<int64_t>(config_.ttl_s * 1000));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!heartbeat_stop_) {
      std::string entry = current_entry_, job = current_job_;
      int64_t jobs = jobs_done_.load();
      double busy = busy_seconds_.load();
      lock.unlock();
      try {
        if (client == nullptr) client = std::make_unique<RedisClient>(config_.broker, 2, 10);
        std::string key = pool::AgentKey(id_);
        std::string jobs_text = std::to_string(jobs), busy_text = fmt::format("{:.3f}", busy);
        std::string started_text = fmt::format("{:.3f}", started), pid = std::to_string(getpid());
        std::vector<std::vector<std::string_view>> commands = {
            {"HSET",   key,       "class",   class_id_,    "class_text", class_.text, "device",
             device_,  "host",    host_,     "pid",        pid,          "jobs",      jobs_text,
             "busy_s", busy_text, "started", started_text, "current",    job},
            {"PEXPIRE", key, ttl_ms},
            {"SADD", pool::kAgents, id_}};
        if (!entry.empty()) {
          // Resets the entry's idle time without counting a delivery: the lease is renewed.
          commands.push_back({"XCLAIM", stream_, pool::kGroup, id_, "0", entry, "JUSTID"});
        }
        client->Pipeline(commands);
      } catch (const BrokerError&) {
        client.reset();  // the main loop reports it; try again next beat
      }
      lock.lock();
      beat_.wait_for(lock, std::chrono::duration<double>(config_.heartbeat_s),
                     [this] { return heartbeat_stop_; });
    }
  }

  void StopHeartbeat(std::thread& t) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      heartbeat_stop_ = true;
    }
    beat_.notify_all();
    t.join();
  }

  const AgentConfig& config_;
  const std::atomic<bool>& stop_;
  RunnerPool pool_;
  pool::DeviceClass class_;
  std::string class_id_, stream_, id_, device_, host_;
  std::unique_ptr<RedisClient> client_;
  AgentStats stats_;
  // What the heartbeat announces, written by the main loop.
  std::atomic<int64_t> jobs_done_{0};
  std::atomic<double> busy_seconds_{0};
  std::map<std::string, std::pair<std::string, std::list<std::string>::iterator>> cache_;
  std::list<std::string> lru_;
  size_t cached_bytes_ = 0;
  std::mutex mutex_;
  std::condition_variable beat_;
  bool heartbeat_stop_ = false;
  std::string current_entry_, current_job_;
};

}  // namespace

AgentStats RunAgent(const AgentConfig& config, const std::atomic<bool>& stop) {
  if (config.heartbeat_s <= 0 || config.ttl_s <= config.heartbeat_s ||
      config.lease_s <= config.heartbeat_s) {
    TT_USER_ERROR(
        "the heartbeat ({} s) must be positive and shorter than the TTL ({} s) and the "
        "lease ({} s)",
        config.heartbeat_s, config.ttl_s, config.lease_s);
  }
  if (config.allowed_keys.empty() && !config.allow_unsigned) {
    TT_USER_ERROR(
        "no allowed tuner key: give --allowed-keys FILE (public keys of `tirtune pool "
        "keygen`), or --allow-unsigned on a trusted network");
  }
  return Agent(config, stop).Run();
}

}  // namespace tirtune
