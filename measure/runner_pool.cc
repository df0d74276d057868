// The parent side of the runner: spawning workers, sending candidates, and turning every way a
// worker can fail (a signal, a hang, a vanished process) into a MeasureResult status.
#include "tirtune/measure/runner_pool.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "sibling_program.h"
#include "tirtune/support/error.h"

extern char** environ;

namespace tirtune {
namespace {

using Clock = std::chrono::steady_clock;

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGSYS:
      return "SIGSYS";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal " + std::to_string(sig);
  }
}

enum class ReadOutcome { kOk, kEof, kTimeout, kInterrupted };

// How long one poll may wait: until the deadline, or 0.1 s at a time while a stop flag is to be
// watched.
int PollMilliseconds(std::chrono::milliseconds left, const std::atomic<bool>* stop) {
  return static_cast<int>(std::min<int64_t>(left.count(), stop != nullptr ? 100 : 1 << 30));
}

// Reads exactly `n` bytes unless end of file, `deadline` or the stop flag comes first.
ReadOutcome ReadBefore(int fd, char* data, size_t n, Clock::time_point deadline,
                       const std::atomic<bool>* stop) {
  while (n > 0) {
    if (stop != nullptr && stop->load()) return ReadOutcome::kInterrupted;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return ReadOutcome::kTimeout;
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, PollMilliseconds(left, stop));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ReadOutcome::kEof;
    if (ready == 0) continue;
    ssize_t k = read(fd, data, n);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) return ReadOutcome::kEof;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return ReadOutcome::kOk;
}

ReadOutcome ReadFrameBefore(int fd, Clock::time_point deadline, const std::atomic<bool>* stop,
                            std::string* payload) {
  unsigned char header[8];
  ReadOutcome r = ReadBefore(fd, reinterpret_cast<char*>(header), 8, deadline, stop);
  if (r != ReadOutcome::kOk) return r;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(header[i]) << (8 * i);
  if (n > (uint64_t{1} << 36)) return ReadOutcome::kEof;
  payload->assign(n, '\0');
  return ReadBefore(fd, payload->data(), n, deadline, stop);
}

// Writes the frame of `payload` unless the peer goes away or `deadline` comes first: a worker
// that stops reading (stopped, wedged) must not block the tuner past the candidate's timeout.
ReadOutcome WriteFrameBefore(int fd, const std::string& payload, Clock::time_point deadline,
                             const std::atomic<bool>* stop) {
  std::string frame(8, '\0');
  uint64_t n = payload.size();
  for (int i = 0; i < 8; ++i) frame[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  frame += payload;
  size_t sent = 0;
  while (sent < frame.size()) {
    if (stop != nullptr && stop->load()) return ReadOutcome::kInterrupted;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return ReadOutcome::kTimeout;
    pollfd p{fd, POLLOUT, 0};
    int ready = poll(&p, 1, PollMilliseconds(left, stop));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ReadOutcome::kEof;
    if (ready == 0) continue;
    ssize_t k = send(fd, frame.data() + sent, frame.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (k <= 0) return ReadOutcome::kEof;
    sent += static_cast<size_t>(k);
  }
  return ReadOutcome::kOk;
}

MeasureResult Status(MeasureStatus status, std::string message) {
  MeasureResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

// RunRequest::slow_cutoff_seconds under `cutoff` when the fastest median known is `known`
// (0: none). A first run shorter than a repeat is never cut: it is cheap to time properly, and
// its own time may include one-off costs (thread start-up, page faults) that would misrank it.
double CutAfter(const SlowCutoff& cutoff, double known, const TimerConfig& timer) {
  if (cutoff.factor <= 0) return 0;
  double cut = cutoff.long_run_seconds;
  if (known > 0) cut = cut > 0 ? std::min(cut, cutoff.factor * known) : cutoff.factor * known;
  return cut > 0 ? std::max(cut, timer.min_repeat_ms / 1000) : 0;
}

// The tirtune-runner next to the running program (an installed or bundled copy), else the one
// built with this library.
std::string DefaultRunnerPath() {
#ifdef TIRTUNE_RUNNER_DEFAULT_PATH
  return SiblingProgram("tirtune-runner", TIRTUNE_RUNNER_DEFAULT_PATH);
#else
  return SiblingProgram("tirtune-runner", "tirtune-runner");
#endif
}

}  // namespace

// One worker process and the parent's end of its socket.
class RunnerPool::Worker {
 public:
  Worker(std::string path, std::vector<int> cpus, bool sandbox, int cuda_device)
      : path_(std::move(path)),
        cpus_(std::move(cpus)),
        sandbox_(sandbox),
        cuda_device_(cuda_device) {}
  ~Worker() { Stop(); }

  int pid() const { return pid_; }
  int spawns() const { return spawns_; }
  /// Ends the process, if one runs; the next Measure starts another.
  void Stop() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    if (pid_ != 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = 0;
  }

  MeasureResult Measure(const RunRequest& request, double timeout_s,
                        const std::atomic<bool>* stop) {
    if (stop != nullptr && stop->load()) {
      return Status(MeasureStatus::kRunnerLost, "interrupted: the worker was stopped");
    }
    if (pid_ == 0) {
      if (std::string error = Start(); !error.empty()) {
        return Status(MeasureStatus::kRunnerLost, error);
      }
    }
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(timeout_s));
    std::string reply_bytes;
    ReadOutcome outcome = WriteFrameBefore(fd_, SerializeRequest(request), deadline, stop);
    if (outcome == ReadOutcome::kOk) outcome = ReadFrameBefore(fd_, deadline, stop, &reply_bytes);
    if (outcome == ReadOutcome::kInterrupted) {
      Stop();
      return Status(MeasureStatus::kRunnerLost, "interrupted: the worker was stopped");
    }
    if (outcome == ReadOutcome::kTimeout) {
      Stop();
      Start();
      return Status(MeasureStatus::kTimeout,
                    fmt::format("no reply within {:.3g} s; the worker was killed", timeout_s));
    }
    if (outcome == ReadOutcome::kEof) {
      MeasureResult lost = Reap();
      Start();
      return lost;
    }
    RunReply reply;
    try {
      reply = DeserializeReply(reply_bytes);
    } catch (const std::exception& e) {
      Stop();
      Start();
      return Status(MeasureStatus::kRunnerLost, e.what());
    }
    // A worker whose CUDA context a kernel poisoned exits after this reply: start afresh.
    if (reply.restart) Stop();
    MeasureResult result;
    result.message = reply.message;
    result.max_abs_error = reply.max_abs_error;
    result.max_rel_error = reply.max_rel_error;
    switch (reply.kind) {
      case ReplyKind::kOk:
        result.status = MeasureStatus::kOk;
        result.seconds = reply.timing.seconds;
        result.median = reply.timing.median;
        result.number = reply.timing.number;
        result.outputs = std::move(reply.outputs);
        break;
      case ReplyKind::kRuntimeError:
        result.status = MeasureStatus::kRuntimeError;
        break;
      case ReplyKind::kWrongResult:
        result.status = MeasureStatus::kWrongResult;
        break;
    }
    return result;
  }

 private:
  // Spawns the worker; returns an error message, empty on success.
  std::string Start() {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      return std::string("socketpair: ") + std::strerror(errno);
    }
    std::vector<std::string> args = {path_};
    if (!cpus_.empty()) {
      std::string list;
      for (int cpu : cpus_) list += (list.empty() ? "" : ",") + std::to_string(cpu);
      args.push_back("--cpus");
      args.push_back(list);
    }
    if (sandbox_) args.push_back("--sandbox");
    if (cuda_device_ >= 0) {
      args.push_back("--cuda-device");
      args.push_back(std::to_string(cuda_device_));
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    pid_t pid = 0;
    // The worker gets its own process group: a Ctrl-C at the terminal is for the tuner (which
    // stops after its batch), not for the kernel being measured.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    int rc = posix_spawn(&pid, path_.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      return "cannot start " + path_ + ": " + std::strerror(rc);
    }
    pid_ = pid;
    fd_ = fds[0];
    ++spawns_;
    return "";
  }

  // After end of file: waits for the worker and names how it ended.
  MeasureResult Reap() {
    close(fd_);
    fd_ = -1;
    int status = 0;
    pid_t got = 0;
    for (int i = 0; i < 200 && got == 0; ++i) {
      got = waitpid(pid_, &status, WNOHANG);
      if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (got == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    pid_ = 0;
    if (got > 0 && WIFSIGNALED(status) &&
        (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
      // Someone stopped the worker; the candidate is not to blame.
      return Status(MeasureStatus::kRunnerLost,
                    "the worker was stopped by " + SignalName(WTERMSIG(status)));
    }
    if (got > 0 && WIFSIGNALED(status)) {
      MeasureResult result = Status(MeasureStatus::kRuntimeError, "");
      result.signal_name = SignalName(WTERMSIG(status));
      result.message = "the worker was killed by " + result.signal_name;
      return result;
    }
    if (got > 0 && WIFEXITED(status)) {
      return Status(MeasureStatus::kRunnerLost,
                    "the worker exited with code " + std::to_string(WEXITSTATUS(status)));
    }
    return Status(MeasureStatus::kRunnerLost, "the worker closed its connection");
  }

  std::string path_;
  std::vector<int> cpus_;
  bool sandbox_ = false;
  pid_t pid_ = 0;
  int fd_ = -1;
  int spawns_ = 0;
  int cuda_device_ = -1;
};

RunnerPool::RunnerPool(RunnerConfig config) : config_(std::move(config)) {
  if (config_.runner_path.empty()) config_.runner_path = DefaultRunnerPath();
  if (config_.num_workers < 1) throw UserError("RunnerConfig.num_workers must be positive");
  if (!config_.cpu_sets.empty() &&
      config_.cpu_sets.size() != static_cast<size_t>(config_.num_workers)) {
    throw UserError("RunnerConfig.cpu_sets needs one CPU list per worker");
  }
  if (!config_.cuda_devices.empty() &&
      config_.cuda_devices.size() != static_cast<size_t>(config_.num_workers)) {
    throw UserError("RunnerConfig.cuda_devices needs one device per worker");
  }
  for (int i = 0; i < config_.num_workers; ++i) {
    std::vector<int> cpus = config_.cpu_sets.empty() ? std::vector<int>{} : config_.cpu_sets[i];
    int device = config_.cuda_devices.empty() ? -1 : config_.cuda_devices[i];
    workers_.push_back(std::make_unique<Worker>(config_.runner_path, std::move(cpus),
                                                config_.sandbox, device));
  }
}

RunnerPool::~RunnerPool() = default;

std::string RunnerPool::Describe() const {
  return fmt::format("local runner ({} worker{})", workers_.size(),
                     workers_.size() == 1 ? "" : "s");
}

void RunnerPool::StartAfresh() {
  for (const auto& w : workers_) w->Stop();
}

void RunnerPool::SetTiming(const TimerConfig& timer, double timeout_s) {
  config_.timer = timer;
  config_.timeout_s = timeout_s;
}

std::vector<MeasureResult> RunnerPool::Measure(const std::vector<MeasureCandidate>& candidates,
                                               const SlowCutoff& cutoff,
                                               const MeasureCallback& on_result) {
  std::vector<MeasureResult> results(candidates.size());
  std::atomic<size_t> next{0};
  // The fastest median so far (0: none), shared by the workers.
  std::atomic<double> best{cutoff.best_seconds};
  auto drain = [&](Worker& worker) {
    for (size_t i = next++; i < candidates.size(); i = next++) {
      const MeasureCandidate& c = candidates[i];
      double known = best.load();
      RunRequest request{c.object,
                         c.func_name,
                         c.target,
                         c.args,
                         c.seed,
                         config_.timer,
                         CutAfter(cutoff, known, config_.timer),
                         c.reduction_length,
                         c.expected,
                         c.return_outputs,
                         c.library};
      double timeout = config_.timeout_s;
      if (cutoff.factor > 0 && known > 0) {
        timeout = std::min(timeout, cutoff.grace_s + 2 * cutoff.factor * known);
      }
      results[i] = worker.Measure(request, timeout, config_.stop);
      if (results[i].ok()) {
        double seen = best.load();
        while ((seen == 0 || results[i].median < seen) &&
               !best.compare_exchange_weak(seen, results[i].median)) {
        }
      }
      if (on_result) on_result(i, results[i]);
    }
  };
  size_t active = std::min(workers_.size(), candidates.size());
  if (active <= 1) {
    drain(*workers_.front());
    return results;
  }
  std::vector<std::thread> threads;
  for (size_t w = 0; w < active; ++w) threads.emplace_back(drain, std::ref(*workers_[w]));
  for (std::thread& t : threads) t.join();
  return results;
}

int RunnerPool::spawn_count() const {
  int total = 0;
  for (const auto& w : workers_) total += w->spawns();
  return total;
}

std::vector<int> RunnerPool::worker_pids() const {
  std::vector<int> pids;
  for (const auto& w : workers_) pids.push_back(w->pid());
  return pids;
}

}  // namespace tirtune
