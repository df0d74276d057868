// TimeFunction: number/repeat timing with a steady clock and an optional cache flush.
#include "tirtune/measure/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tirtune {
namespace {

double SecondsOf(const std::function<void()>& fn, int number) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < number; ++i) fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Writes 256 MiB so that the next call starts with cold caches.
void FlushCaches() {
  static std::vector<int64_t> buffer(size_t{32} << 20);
  for (size_t i = 0; i < buffer.size(); i += 8) buffer[i] += 1;
}

}  // namespace

TimingResult TimeFunction(const std::function<void()>& fn, const TimerConfig& config) {
  // The warm-up calls are timed too: the fastest of them sets `number` directly, instead of a
  // doubling search that would cost about as much as the repeats themselves. Without flushing,
  // warm-up goes on past `warmup` calls until it has lasted one repeat: a function whose first
  // calls are slow (a library starting its threads, memory faulted in) would otherwise get a
  // `number` of a few calls and repeats that time mostly its start.
  const double min_seconds = config.min_repeat_ms / 1000.0;
  double per_call = 0;
  double warm = 0;
  for (int i = 0; i < std::max(1, config.warmup) ||
                  (!config.flush_cache && warm < min_seconds && i < (1 << 16));
       ++i) {
    double t = SecondsOf(fn, 1);
    per_call = i == 0 ? t : std::min(per_call, t);
    warm += t;
  }
  TimingResult result;
  // With flushing, every sample is one call: the caches would be warm again after the first of
  // several calls, and the repeat would time mostly warm calls.
  if (per_call < min_seconds && !config.flush_cache) {
    double wanted = std::ceil(min_seconds / std::max(per_call, 1e-9));
    result.number = static_cast<int>(std::min(wanted, double{1 << 24}));
  }
  std::vector<double> seconds;
  for (int r = 0; r < std::max(1, config.repeat); ++r) {
    if (config.flush_cache) FlushCaches();
    seconds.push_back(SecondsOf(fn, result.number) / result.number);
  }
  return SummarizeSamples(std::move(seconds), result.number);
}

TimingResult SummarizeSamples(std::vector<double> seconds, int number) {
  TimingResult result;
  result.number = number;
  result.seconds = std::move(seconds);
  std::vector<double> sorted = result.seconds;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  if (n == 0) return result;
  result.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  double mean = 0, var = 0;
  for (double s : sorted) mean += s / n;
  for (double s : sorted) var += (s - mean) * (s - mean) / n;
  result.cv = mean > 0 ? std::sqrt(var) / mean : 0;
  return result;
}

}  // namespace tirtune
