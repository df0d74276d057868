// Timing a function in this process: warm-up, `number` calls per repeat chosen from the warm-up
// so a repeat lasts at least `min_repeat_ms`, `repeat` repeats; or, flushing caches, one call per
// repeat after each flush; or, with cold constants, each call timed alone after its constant
// parameters were evicted from the caches.
#pragma once

#include <functional>
#include <vector>

#include "tirtune/support/byte_range.h"

namespace tirtune {

struct TimerConfig {
  /// Calls before timing starts (at least one is made; the fastest sets `number`). Warm (not
  /// flushing, constants not cold), warm-up goes on until it has lasted `min_repeat_ms`.
  /// Default 1.
  int warmup = 1;
  /// Timed repeats; each gives one sample. Default 5.
  int repeat = 5;
  /// A repeat runs the function `number` times, `number` chosen from the fastest warm-up call so
  /// that one repeat lasts at least this long. Default 50 ms.
  double min_repeat_ms = 50;
  /// Write a buffer larger than the last-level cache before every repeat, and make every
  /// repeat one call (`min_repeat_ms` is ignored): each sample is a call on cold caches, as a
  /// kernel runs inside a model whose other layers evicted its weights. Default false.
  bool flush_cache = false;
  /// Before every call, evict the kernel's constant parameters (a model's weights,
  /// ArgSpec::constant) from every cache level, the rest staying warm; each call is timed on
  /// its own, the evictions untimed, a repeat being `number` such calls (at most 4,096: a repeat
  /// of calls under a few microseconds may last less than `min_repeat_ms`), after exactly
  /// `warmup` calls. Each call then reads its weights from memory and its activations from
  /// cache, as inside a model, whose other layers' weights pushed this one's out. A function
  /// without constants is timed warm. Default false.
  bool cold_constants = false;
};

/// Writes back and invalidates every cache line of `range` in every cache level.
void EvictFromCaches(const ByteRange& range);

/// The bytes of the last-level cache CPU 0 shares (the highest level sysfs lists under
/// /sys/devices/system/cpu/cpu0/cache; sysconf where there is none), 0 when unknown. The
/// environment variable TIRTUNE_LAST_LEVEL_CACHE_BYTES overrides it (a virtual machine whose
/// cache is shared with other guests, or tests): bytes, or KiB, MiB or GiB with the suffix K, M or
/// G ("32M"). UserError for a value of it that is none of these.
int64_t LastLevelCacheBytes();

struct TimingResult {
  /// Seconds per call, one sample per repeat.
  std::vector<double> seconds;
  double median = 0;
  /// Calls per repeat.
  int number = 1;
  /// Coefficient of variation of the samples.
  double cv = 0;
};

/// Times `fn`. With `config.cold_constants`, `constants` are evicted before every call
/// (warm-up calls included); without it they are ignored.
TimingResult TimeFunction(const std::function<void()>& fn, const TimerConfig& config = {},
                          const std::vector<ByteRange>& constants = {});

/// The result of samples (seconds per call) timed elsewhere (a GPU's events): their median and
/// coefficient of variation.
TimingResult SummarizeSamples(std::vector<double> seconds, int number);

}  // namespace tirtune
