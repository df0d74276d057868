// RoundRobin and GradientBased task schedulers.
#include "tirtune/search/task_scheduler.h"

#include <cmath>
#include <limits>

#include "tirtune/schedule/random.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

class RoundRobin : public TaskScheduler {
 public:
  explicit RoundRobin(size_t n) : alive_(n, true) {}
  std::string name() const override { return "round-robin"; }

  int NextTask() override {
    for (size_t step = 0; step < alive_.size(); ++step) {
      size_t t = (next_ + step) % alive_.size();
      if (alive_[t]) {
        next_ = t + 1;
        return static_cast<int>(t);
      }
    }
    return -1;
  }
  void Notify(int, double) override {}
  void Terminate(int task) override { alive_[task] = false; }

 private:
  std::vector<bool> alive_;
  size_t next_ = 0;
};

class GradientBased : public TaskScheduler {
 public:
  GradientBased(std::vector<double> weights, double alpha, int window, uint64_t seed)
      : weights_(std::move(weights)),
        alpha_(alpha),
        window_(window),
        rng_(seed),
        alive_(weights_.size(), true),
        history_(weights_.size()) {}
  std::string name() const override { return "gradient"; }

  int NextTask() override {
    // Step 1. One round-robin pass first, so every task has a latency (a task notified before
    // its turn, as a resumed one with its stored best, has one).
    while (warmup_ < alive_.size()) {
      size_t t = warmup_++;
      if (alive_[t] && history_[t].empty()) return static_cast<int>(t);
    }
    // Step 2. The live task with the largest expected gain.
    std::vector<int> best;
    double best_grad = -std::numeric_limits<double>::infinity();
    for (size_t t = 0; t < alive_.size(); ++t) {
      if (!alive_[t]) continue;
      double g = Gradient(t);
      if (g > best_grad) {
        best_grad = g;
        best = {static_cast<int>(t)};
      } else if (g == best_grad) {
        best.push_back(static_cast<int>(t));
      }
    }
    if (best.empty()) return -1;
    return best[rng_.UniformInt(0, static_cast<int64_t>(best.size()))];
  }

  void Notify(int task, double best_seconds) override { history_[task].push_back(best_seconds); }
  void Terminate(int task) override { alive_[task] = false; }

 private:
  // (alpha * recent improvement per batch + (1 - alpha) * best / batches) * weight.
  double Gradient(size_t t) const {
    const std::vector<double>& h = history_[t];
    if (h.empty() || !std::isfinite(h.back())) return -1e9;
    size_t n = h.size();
    double g1 = 0;
    if (n >= static_cast<size_t>(window_) + 1) {
      double before = h[n - 1 - window_];
      if (std::isfinite(before)) g1 = (before - h[n - 1]) / window_;
    }
    double g2 = h[n - 1] / static_cast<double>(n);
    return (alpha_ * g1 + (1 - alpha_) * g2) * weights_[t];
  }

  std::vector<double> weights_;
  double alpha_;
  int window_;
  RandomEngine rng_;
  std::vector<bool> alive_;
  std::vector<std::vector<double>> history_;
  size_t warmup_ = 0;
};

}  // namespace

std::unique_ptr<TaskScheduler> MakeRoundRobin(size_t num_tasks) {
  return std::make_unique<RoundRobin>(num_tasks);
}

std::unique_ptr<TaskScheduler> MakeGradientBased(std::vector<double> weights, double alpha,
                                                 int window_size, uint64_t seed) {
  if (window_size < 1) throw UserError("the gradient task scheduler needs a window of at least 1");
  return std::make_unique<GradientBased>(std::move(weights), alpha, window_size, seed);
}

}  // namespace tirtune
