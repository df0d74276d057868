// The local Runner: a pool of isolated `tirtune-runner` worker processes on this host. Each
// candidate is loaded, verified against its expected outputs and timed in a worker.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tirtune/measure/runner.h"

namespace tirtune {

struct RunnerConfig {
  /// Worker processes; candidates are spread over them. Default 1.
  int num_workers = 1;
  /// The `tirtune-runner` executable. Default (empty): the one built with this library.
  std::string runner_path;
  /// Empty, or one CPU list per worker, passed as `--cpus` (sched_setaffinity). Default empty.
  std::vector<std::vector<int>> cpu_sets;
  /// Run each worker without network, new privileges or core dumps (`tirtune-runner --sandbox`):
  /// for kernels compiled elsewhere (device-pool agents). Default false.
  bool sandbox = false;
  /// Wall-clock limit for one candidate (load, verification and timing), in seconds; past it the
  /// worker is killed and respawned. Default 30.
  double timeout_s = 30;
  /// How each candidate is timed. Default TimerConfig{}.
  TimerConfig timer;
  /// When set and it becomes true (a signal handler's flag), the candidate being sent or waited
  /// for is given up within 0.1 s: its worker is killed (and started again for the next one),
  /// and the result is kRunnerLost "interrupted". Default none.
  const std::atomic<bool>* stop = nullptr;
  /// Empty, or one CUDA device ordinal per worker (`tirtune-runner --cuda-device N`): the device
  /// a worker measures `cuda` candidates on, one worker per GPU. Default empty (device 0).
  std::vector<int> cuda_devices;
};

/// A pool of `tirtune-runner` workers, started with posix_spawn when first needed and respawned
/// after a crash or a timeout. Measure is not reentrant: call it from one thread at a time.
class RunnerPool : public Runner {
 public:
  explicit RunnerPool(RunnerConfig config);
  ~RunnerPool();
  RunnerPool(const RunnerPool&) = delete;
  RunnerPool& operator=(const RunnerPool&) = delete;

  /// Measures every candidate, in parallel over the workers; one result per candidate, in order.
  std::vector<MeasureResult> Measure(const std::vector<MeasureCandidate>& candidates,
                                     const SlowCutoff& cutoff = {},
                                     const MeasureCallback& on_result = {}) override;
  using Runner::MeasureOne;
  std::string Describe() const override;
  /// Stops every live worker; the next Measure starts new ones.
  void StartAfresh() override;

  /// Changes how the next candidates are timed and how long each may take (a device-pool agent
  /// takes both from each job).
  void SetTiming(const TimerConfig& timer, double timeout_s);

  /// Workers started so far, the first ones included.
  int spawn_count() const;
  /// The process ids of the live workers (0 for one not running).
  std::vector<int> worker_pids() const;

 private:
  class Worker;
  RunnerConfig config_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace tirtune
