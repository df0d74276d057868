// TimeFunction: the number of calls per repeat comes from the warm-up (one repeat's time of
// calls) so that a repeat lasts `min_repeat_ms`; with cache flushing every repeat is a single call
// after a flush; with cold constants every call is timed alone after they were evicted.
#include "tirtune/measure/timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "../common/scoped_env.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

void Spin(double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(TimeFunction, ARepeatOfAShortCallRunsItSeveralTimes) {
  int calls = 0;
  TimerConfig config;
  config.repeat = 3;
  config.min_repeat_ms = 5;
  TimingResult r = TimeFunction(
      [&] {
        ++calls;
        Spin(1e-4);
      },
      config);
  ASSERT_EQ(r.seconds.size(), 3u);
  EXPECT_GT(r.number, 1);
  // Warm-up lasted a repeat's time: more calls than `warmup` asks for.
  EXPECT_GT(calls - 3 * r.number, config.warmup);
  for (double s : r.seconds) EXPECT_GT(s, 0);
}

TEST(TimeFunction, AFunctionWhoseFirstCallsAreSlowIsTimedOnItsLaterCalls) {
  int calls = 0;
  TimerConfig config;
  config.repeat = 3;
  config.min_repeat_ms = 5;
  // Five calls of 0.5 ms (a library starting up), then calls of 0.02 ms.
  TimingResult r = TimeFunction([&] { Spin(++calls <= 5 ? 5e-4 : 2e-5); }, config);
  // `number` follows the fast calls: a repeat of 5 ms holds far more than the 10 slow ones.
  EXPECT_GT(r.number, 10);
}

TEST(TimeFunction, FlushingMakesEveryRepeatOneCall) {
  int calls = 0;
  TimerConfig config;
  config.repeat = 4;
  config.min_repeat_ms = 5;
  config.flush_cache = true;
  TimingResult r = TimeFunction(
      [&] {
        ++calls;
        Spin(1e-4);
      },
      config);
  EXPECT_EQ(r.number, 1);
  ASSERT_EQ(r.seconds.size(), 4u);
  EXPECT_EQ(calls, config.warmup + 4);
}

TEST(TimeFunction, ColdConstantsTimeEachCallAfterEvictingThem) {
  std::vector<float> weights(1 << 16, 1.5f);
  int calls = 0;
  double sum = 0;
  TimerConfig config;
  config.warmup = 2;
  config.repeat = 3;
  config.min_repeat_ms = 2;
  config.cold_constants = true;
  TimingResult r = TimeFunction(
      [&] {
        ++calls;
        for (float w : weights) sum += w;
        Spin(1e-4);
      },
      config, {{weights.data(), weights.size() * sizeof(float)}});
  ASSERT_EQ(r.seconds.size(), 3u);
  EXPECT_GT(r.number, 1);  // 0.1 ms calls, repeats of 2 ms
  // Warm-up is exactly `warmup` calls here: no warm-up "until a repeat's time".
  EXPECT_EQ(calls, config.warmup + 3 * r.number);
  EXPECT_EQ(sum, 1.5 * weights.size() * calls);  // eviction keeps the contents
  for (double s : r.seconds) EXPECT_GE(s, 1e-4);
}

TEST(TimeFunction, ColdConstantsWithoutConstantsIsTheWarmTiming) {
  int calls = 0;
  TimerConfig config;
  config.repeat = 3;
  config.min_repeat_ms = 5;
  config.cold_constants = true;
  TimingResult r = TimeFunction(
      [&] {
        ++calls;
        Spin(1e-4);
      },
      config);
  EXPECT_GT(r.number, 1);
  EXPECT_GT(calls - 3 * r.number, config.warmup);  // the warm timing's long warm-up
}

TEST(EvictFromCaches, KeepsTheContentsOfAnUnalignedRange) {
  std::vector<char> bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  EvictFromCaches({bytes.data() + 3, 997});
  EvictFromCaches({bytes.data(), 0});
  for (size_t i = 0; i < bytes.size(); ++i) ASSERT_EQ(bytes[i], static_cast<char>(i * 7));
}

TEST(LastLevelCacheBytes, ReadsTheHostOrTheOverride) {
  testing::ScopedEnv cache("TIRTUNE_LAST_LEVEL_CACHE_BYTES");
  cache.Unset();
  // Where sysfs lists the caches, the last level is at least as large as every other one.
  if (std::filesystem::exists("/sys/devices/system/cpu/cpu0/cache/index0/size")) {
    EXPECT_GE(LastLevelCacheBytes(), 4096);
  }
  cache.Set("33554432");
  EXPECT_EQ(LastLevelCacheBytes(), 33554432);
  // As sysfs writes sizes, and as people type them.
  cache.Set("32768K");
  EXPECT_EQ(LastLevelCacheBytes(), 33554432);
  cache.Set("32M");
  EXPECT_EQ(LastLevelCacheBytes(), 33554432);
  cache.Set("1G");
  EXPECT_EQ(LastLevelCacheBytes(), int64_t{1} << 30);
  for (const char* bad : {"", "0", "-5", "0M", "32MB", "1e9", "M", "99999999999999G"}) {
    cache.Set(bad);
    EXPECT_THROW(LastLevelCacheBytes(), UserError) << bad;
  }
}

}  // namespace
}  // namespace tirtune
