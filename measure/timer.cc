// TimeFunction: number/repeat timing with a steady clock, an optional cache flush, or the
// constant parameters evicted before every call.
#include "tirtune/measure/timer.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tirtune/support/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

// Each call timed alone after `constants` were evicted; `number` calls per repeat as in the warm
// timing, chosen from the fastest warm-up call.
TimingResult TimeWithColdConstants(const std::function<void()>& fn, const TimerConfig& config,
                                   const std::vector<ByteRange>& constants) {
  auto cold_call = [&] {
    for (const ByteRange& r : constants) EvictFromCaches(r);
    return SecondsOf(fn, 1);
  };
  double per_call = cold_call();
  for (int i = 1; i < config.warmup; ++i) per_call = std::min(per_call, cold_call());
  const double min_seconds = config.min_repeat_ms / 1000.0;
  int number = 1;
  if (per_call < min_seconds) {
    number = static_cast<int>(
        std::min(std::ceil(min_seconds / std::max(per_call, 1e-9)), double{1 << 12}));
  }
  std::vector<double> seconds;
  for (int r = 0; r < std::max(1, config.repeat); ++r) {
    double sum = 0;
    for (int n = 0; n < number; ++n) sum += cold_call();
    seconds.push_back(sum / number);
  }
  return SummarizeSamples(std::move(seconds), number);
}

// A size as sysfs writes it and people type it: a positive integer of bytes, or of KiB, MiB or
// GiB with the suffix K, M or G ("32768K", "32M"); 0 for anything else.
int64_t ParseCacheSize(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long number = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || number <= 0) return 0;
  const std::string unit(end);
  int shift = 0;
  if (unit == "K" || unit == "k")
    shift = 10;
  else if (unit == "M" || unit == "m")
    shift = 20;
  else if (unit == "G" || unit == "g")
    shift = 30;
  else if (!unit.empty())
    return 0;
  if (number > (INT64_MAX >> shift)) return 0;
  return static_cast<int64_t>(number) << shift;
}

}  // namespace

int64_t LastLevelCacheBytes() {
  if (const char* forced = std::getenv("TIRTUNE_LAST_LEVEL_CACHE_BYTES"); forced != nullptr) {
    const int64_t bytes = ParseCacheSize(forced);
    if (bytes <= 0) {
      throw UserError(fmt::format(
          "TIRTUNE_LAST_LEVEL_CACHE_BYTES must be a positive number of bytes, with K, M or G for "
          "KiB, MiB or GiB (e.g. 33554432 or 32M), not '{}'",
          forced));
    }
    return bytes;
  }
  // sysfs: index*/level and index*/size ("32768K"); the highest level wins.
  int best_level = 0;
  int64_t best_bytes = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream level_file(dir + "level");
    std::ifstream size_file(dir + "size");
    int level = 0;
    std::string size_text;
    if (!(level_file >> level) || !(size_file >> size_text)) continue;
    const int64_t size = ParseCacheSize(size_text);
    if (level > best_level && size > 0) {
      best_level = level;
      best_bytes = size;
    }
  }
  if (best_bytes > 0) return best_bytes;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    if (long bytes = sysconf(name); bytes > 0) return bytes;
  }
  return 0;
}

void EvictFromCaches(const ByteRange& range) {
  if (range.bytes == 0) return;
  constexpr uintptr_t kLine = 64;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(range.data) + range.bytes;
#if defined(__x86_64__)
  for (uintptr_t a = begin; a < end; a += kLine) _mm_clflush(reinterpret_cast<const void*>(a));
  _mm_mfence();
#elif defined(__aarch64__)
  for (uintptr_t a = begin; a < end; a += kLine) asm volatile("dc civac, %0" : : "r"(a) : "memory");
  asm volatile("dsb ish" : : : "memory");
#else
#error "EvictFromCaches: no cache-line eviction for this architecture"
#endif
}

TimingResult TimeFunction(const std::function<void()>& fn, const TimerConfig& config,
                          const std::vector<ByteRange>& constants) {
  if (config.cold_constants && !constants.empty()) {
    return TimeWithColdConstants(fn, config, constants);
  }
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
