// The tuner's side of a device pool: choosing the class, sending blobs and jobs, collecting
// results, and surviving a broker that goes away or restarts.
#include "tirtune/measure/remote_runner.h"

#include <fmt/format.h>
#include <sodium.h>

#include <algorithm>
#include <map>
#include <thread>

namespace tirtune {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (sodium_init() < 0) throw InternalError("libsodium failed to initialize");
  randombytes_buf(raw.data(), raw.size());
  std::string hex;
  for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
  return hex;
}

std::string ClassList(const std::vector<AgentInfo>& agents) {
  std::map<std::string, std::pair<std::string, int>> classes;
  for (const AgentInfo& a : agents) {
    classes[a.device_class].first = a.class_text;
    ++classes[a.device_class].second;
  }
  if (classes.empty()) return "none (no agent is running)";
  std::string text;
  for (const auto& [id, c] : classes) {
    text += fmt::format("{}{} ({}, {} agent{})", text.empty() ? "" : "; ", id, c.first, c.second,
                        c.second == 1 ? "" : "s");
  }
  return text;
}

MeasureResult Lost(const std::string& message) {
  MeasureResult r;
  r.status = MeasureStatus::kRunnerLost;
  r.message = message;
  return r;
}

// A key naming the task data a candidate carries; candidates of one task share their arrays.
std::string TaskKeyOf(const MeasureCandidate& c) {
  std::string key = fmt::format("{}:{}:", c.seed, c.reduction_length);
  for (const ArgSpec& a : c.args) key += a.name + ",";
  for (const NDArray& e : c.expected) {
    key += fmt::format("{}:{},", e.defined() ? e.raw() : nullptr, e.defined() ? e.nbytes() : 0);
  }
  return key + c.library;
}

}  // namespace

std::vector<AgentInfo> LiveAgents(RedisClient& client) {
  std::vector<AgentInfo> live;
  RedisReply members = client.Command({"SMEMBERS", pool::kAgents});
  std::vector<std::string> ids;
  for (size_t i = 0; i < members.size(); ++i) ids.push_back(members[i].str());
  std::sort(ids.begin(), ids.end());
  std::vector<std::string> keys;
  std::vector<std::vector<std::string_view>> commands;
  for (const std::string& id : ids) keys.push_back(pool::AgentKey(id));
  for (const std::string& k : keys) commands.push_back({"HGETALL", k});
  if (commands.empty()) return live;
  std::vector<RedisReply> replies = client.Pipeline(commands);
  for (size_t i = 0; i < ids.size(); ++i) {
    const RedisReply& r = replies[i];
    if (r.size() == 0) {
      // Its heartbeat expired: the agent is gone.
      client.Command({"SREM", pool::kAgents, ids[i]});
      continue;
    }
    std::map<std::string, std::string> f;
    for (size_t j = 0; j + 1 < r.size(); j += 2) f[r[j].str()] = r[j + 1].str();
    AgentInfo a;
    a.id = ids[i];
    a.device_class = f["class"];
    a.class_text = f["class_text"];
    a.device = f["device"];
    a.host = f["host"];
    a.current_job = f["current"];
    a.jobs_done = std::atoll(f["jobs"].c_str());
    a.busy_seconds = std::atof(f["busy_s"].c_str());
    a.started_at = std::atof(f["started"].c_str());
    live.push_back(std::move(a));
  }
  return live;
}

RemoteRunner::RemoteRunner(RemoteRunnerConfig config) : config_(std::move(config)) {
  if (config_.jobs_per_agent < 1) throw UserError("jobs per agent must be positive");
  session_ = RandomHex(8);
  Connect();
  class_id_ = ChooseClass();
}

RemoteRunner::~RemoteRunner() {
  if (client_ == nullptr) return;
  try {
    // The task blobs go too; another tuner still using one gets it sent again (resend).
    std::vector<std::vector<std::string_view>> commands;
    std::string results = pool::ResultsKey(session_);
    std::vector<std::string> keys;
    for (const TaskBlobEntry& t : task_blobs_) keys.push_back(pool::BlobKey(t.blob->sha));
    commands.push_back({"DEL", results});
    for (const std::string& k : keys) commands.push_back({"DEL", k});
    client_->Pipeline(commands);
  } catch (const std::exception&) {
    // The broker is gone; the stream expires by itself.
  }
}

void RemoteRunner::Connect() {
  client_ = std::make_unique<RedisClient>(config_.broker, /*timeout_s=*/5, /*io_timeout_s=*/30);
  run_id_ = client_->RunId();
}

void RemoteRunner::Reconnect(const std::string& why) {
  client_.reset();
  auto start = Clock::now();
  std::string last = why;
  while (SecondsSince(start) < config_.reconnect_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    try {
      std::string old_run = run_id_;
      Connect();
      if (run_id_ != old_run) uploaded_.clear();  // a restarted broker forgot the blobs
      return;
    } catch (const BrokerError& e) {
      last = e.what();
    }
  }
  throw BrokerError(
      fmt::format("lost the broker for {:.0f} s, giving up: {}", config_.reconnect_s, last));
}

std::string RemoteRunner::ChooseClass() {
  std::vector<AgentInfo> agents = LiveAgents(*client_);
  std::string live = ClassList(agents);
  if (!config_.device_class.empty()) {
    for (const AgentInfo& a : agents) {
      if (a.device_class != config_.device_class) continue;
      class_text_ = a.class_text;
      return a.device_class;
    }
    TT_USER_ERROR("no live agent of device class {} on {}; live classes: {}", config_.device_class,
                  config_.broker.str(), live);
  }
  std::map<std::string, std::string> matching;
  for (const AgentInfo& a : agents) {
    if (a.class_text.rfind(config_.target + " on ", 0) == 0)
      matching[a.device_class] = a.class_text;
  }
  if (matching.empty()) {
    TT_USER_ERROR("no live agent on {} measures for target '{}'; live classes: {}",
                  config_.broker.str(), config_.target, live);
  }
  if (matching.size() > 1) {
    TT_USER_ERROR(
        "several device classes on {} measure for target '{}': {}; choose one with "
        "--device-class ID (timings of different hardware are not mixed)",
        config_.broker.str(), config_.target, live);
  }
  class_text_ = matching.begin()->second;
  return matching.begin()->first;
}

int RemoteRunner::LiveAgentsOfClass() {
  int n = 0;
  for (const AgentInfo& a : LiveAgents(*client_)) n += a.device_class == class_id_;
  return n;
}

std::string RemoteRunner::Describe() const {
  return fmt::format("device pool {}, class {} ({})", config_.broker.str(), class_id_, class_text_);
}

const RemoteRunner::Blob& RemoteRunner::TaskBlobOf(const MeasureCandidate& c) {
  std::string key = TaskKeyOf(c);
  for (const TaskBlobEntry& t : task_blobs_) {
    if (t.key == key) return *t.blob;
  }
  if (task_blobs_.size() >= 8) task_blobs_.erase(task_blobs_.begin());
  TaskBlobEntry t;
  t.key = key;
  t.arrays = c.expected;  // keeps the arrays, and so the addresses in the key, alive
  t.blob = std::make_unique<Blob>();
  t.blob->bytes = pool::TaskBlob(c);
  t.blob->sha = pool::Sha256Hex(t.blob->bytes);
  task_blobs_.push_back(std::move(t));
  return *task_blobs_.back().blob;
}

void RemoteRunner::Upload(const std::vector<const Blob*>& blobs) {
  std::vector<std::string> keys;
  std::vector<const Blob*> todo;
  for (const Blob* b : blobs) {
    if (uploaded_.count(b->sha)) continue;
    todo.push_back(b);
    keys.push_back(pool::BlobKey(b->sha));
  }
  if (todo.empty()) return;
  std::vector<std::vector<std::string_view>> commands;
  for (size_t i = 0; i < todo.size(); ++i) {
    // Objects are deleted once answered and task blobs when the runner ends; the expiry only
    // bounds what a tuner that died leaves behind (a job that waits longer is sent again).
    commands.push_back({"SET", keys[i], todo[i]->bytes, "EX", "3600"});
  }
  client_->Pipeline(commands);
  for (const Blob* b : todo) uploaded_.insert(b->sha);
}

std::vector<MeasureResult> RemoteRunner::Measure(const std::vector<MeasureCandidate>& candidates,
                                                 const SlowCutoff& cutoff,
                                                 const MeasureCallback& on_result) {
  std::vector<MeasureResult> results(candidates.size());
  if (candidates.empty()) return results;
  const std::string stream = pool::JobsKey(class_id_);
  const std::string reply_to = pool::ResultsKey(session_);

  // Every candidate's job and blobs, made once; a job id is sent again after a broker restart.
  struct Pending {
    pool::Job job;
    Blob object;
    const Blob* task = nullptr;
    int sends = 0;
    bool sent_ok = false;
  };
  std::vector<Pending> jobs(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const MeasureCandidate& c = candidates[i];
    Pending& p = jobs[i];
    p.object.bytes = c.object;
    p.object.sha = pool::Sha256Hex(c.object);
    p.task = &TaskBlobOf(c);
    p.job.id = fmt::format("{}:{}", session_, next_job_++);
    p.job.device_class = class_id_;
    p.job.reply_to = reply_to;
    p.job.object_sha = p.object.sha;
    p.job.task_sha = p.task->sha;
    p.job.func_name = c.func_name;
    p.job.target = c.target;
    p.job.timer = config_.timer;
    p.job.timeout_s = config_.timeout_s;
    p.job.cutoff = cutoff;
  }
  std::map<std::string, size_t> outstanding;  // job id -> candidate
  std::map<std::string, int> object_uses;     // object blob -> jobs of the batch not answered
  for (const Pending& p : jobs) ++object_uses[p.object.sha];
  size_t next = 0, finished = 0;
  double best = cutoff.best_seconds;
  std::string last_id = "0-0";  // the results stream from its start

  auto send = [&](size_t i) {
    Pending& p = jobs[i];
    Upload({&p.object, p.task});
    if (p.sends == 0) {
      p.job.cutoff.best_seconds = best;  // the batch's own results count as they come in
      if (config_.key) pool::SignJob(p.job, *config_.key);
    }
    std::vector<std::string> fields = pool::JobFields(p.job);
    std::vector<std::string_view> xadd = {"XADD", stream, "MAXLEN", "~", "100000", "*"};
    for (const std::string& f : fields) xadd.push_back(f);
    // Outstanding before it is sent: a send the broker may have missed is sent again after a
    // reconnect (sent_ok false), and a duplicate is dropped by its id.
    outstanding[p.job.id] = i;
    p.sent_ok = false;
    ++p.sends;
    client_->Command(xadd);
    p.sent_ok = true;
  };
  auto finish = [&](size_t i, MeasureResult r) {
    if (r.ok() && (best == 0 || r.median < best)) best = r.median;
    results[i] = std::move(r);
    ++finished;
    if (on_result) on_result(i, results[i]);
    // An object no job of the batch still needs leaves the broker.
    if (--object_uses[jobs[i].object.sha] == 0 && uploaded_.erase(jobs[i].object.sha)) {
      try {
        client_->Command({"DEL", pool::BlobKey(jobs[i].object.sha)});
      } catch (const BrokerError&) {
        // It expires; the next command finds the broken connection and reconnects.
      }
    }
  };

  auto ensure_group = [&] {
    // The group reads from the stream's start, so jobs sent before an agent joined are not missed.
    client_->Command({"XGROUP", "CREATE", stream, pool::kGroup, "0", "MKSTREAM"},
                     /*allow_error=*/true);
  };
  int live = 1;
  auto last_check = Clock::now(), last_live = Clock::now();
  // The first pass sets the streams up like a recovery does: the broker may go away at any step.
  bool recover = true, restarted = false;
  while (finished < candidates.size()) {
    try {
      if (recover) {
        // At the start, and after a reconnect. The results stream exists before any result does,
        // so that reading from its beginning sees them all. A restarted broker forgot the jobs,
        // the group and the results: everything outstanding is sent again; otherwise only a
        // send that may not have arrived.
        ensure_group();
        client_->Command({"XADD", reply_to, "*", "job", "", "status", "hello"});
        client_->Command({"EXPIRE", reply_to, "86400"});
        live = std::max(1, LiveAgentsOfClass());
        if (restarted) last_id = "0-0";
        std::vector<size_t> again;
        for (const auto& [id, i] : outstanding) {
          if (restarted || !jobs[i].sent_ok) again.push_back(i);
        }
        for (size_t i : again) {
          ++resent_;
          send(i);
        }
        recover = restarted = false;
      }
      while (next < candidates.size() &&
             outstanding.size() < static_cast<size_t>(config_.jobs_per_agent * live)) {
        send(next++);
      }
      RedisReply got =
          client_->Command({"XREAD", "COUNT", "64", "BLOCK", "500", "STREAMS", reply_to, last_id});
      for (size_t s = 0; s < got.size(); ++s) {
        RedisReply::View entries = got[s][1];
        for (size_t e = 0; e < entries.size(); ++e) {
          last_id = entries[e][0].str();
          std::vector<std::pair<std::string, std::string>> fields = pool::FieldsOf(entries[e][1]);
          if (fields.size() >= 2 && fields[1].second == "hello") continue;
          pool::JobResult jr;
          try {
            jr = pool::ParseResult(fields);
          } catch (const UserError&) {
            continue;  // not a result of ours; the job will be answered or reclaimed
          }
          auto it = outstanding.find(jr.job_id);
          if (it == outstanding.end()) {
            ++duplicates_;
            continue;
          }
          size_t i = it->second;
          if (jr.resend) {
            outstanding.erase(it);
            if (jobs[i].sends >= 4) {
              finish(i, Lost("the broker lost this job's blobs four times: " + jr.result.message));
              continue;
            }
            uploaded_.erase(jobs[i].object.sha);
            uploaded_.erase(jobs[i].task->sha);
            ++resent_;
            send(i);
            continue;
          }
          outstanding.erase(it);
          finish(i, std::move(jr.result));
        }
      }
      if (SecondsSince(last_check) >= 1) {
        last_check = Clock::now();
        live = LiveAgentsOfClass();
        if (live > 0) last_live = Clock::now();
        if (live == 0 && SecondsSince(last_live) > config_.no_agent_grace_s) {
          std::string classes = ClassList(LiveAgents(*client_));
          TT_USER_ERROR(
              "the device pool {} has had no live agent of class {} ({}) for {:.0f} s; {} "
              "candidate(s) unmeasured; live classes: {}",
              config_.broker.str(), class_id_, class_text_, config_.no_agent_grace_s,
              candidates.size() - finished, classes);
        }
      }
    } catch (const BrokerError& e) {
      std::string old_run = run_id_;
      Reconnect(e.what());
      restarted = restarted || run_id_ != old_run;
      recover = true;
    }
  }
  return results;
}

}  // namespace tirtune
