// Task schedulers: which task of a multi-task tuning run gets the next batch of trials.
// RoundRobin cycles over the live tasks; GradientBased (the default) picks the task whose weighted
// latency is expected to drop the most (MetaSchedule's simplified Ansor gradient), after one
// round-robin pass over the tasks it has no latency of (Notify before the first NextTask gives a
// resumed task its stored best: it joins the gradient at once).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tirtune {

class TaskScheduler {
 public:
  virtual ~TaskScheduler() = default;
  virtual std::string name() const = 0;
  /// The next task to give a batch to, or -1 when every task is done.
  virtual int NextTask() = 0;
  /// After a batch of `task`: its best latency so far in seconds (+infinity when none is valid).
  virtual void Notify(int task, double best_seconds) = 0;
  /// `task` will get no more batches (budget reached or space exhausted).
  virtual void Terminate(int task) = 0;
};

/// `weights[i]`: how many times task i's function is used (its latency counts that often).
std::unique_ptr<TaskScheduler> MakeRoundRobin(size_t num_tasks);
std::unique_ptr<TaskScheduler> MakeGradientBased(std::vector<double> weights, double alpha = 0.2,
                                                 int window_size = 3, uint64_t seed = 1);

}  // namespace tirtune
