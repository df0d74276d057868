// TimeFunction: the number of calls per repeat comes from the warm-up so that a repeat lasts
// `min_repeat_ms`; with cache flushing every repeat is a single call after a flush.
#include "tirtune/measure/timer.h"

#include <gtest/gtest.h>

#include <chrono>

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
  EXPECT_EQ(calls, config.warmup + 3 * r.number);
  for (double s : r.seconds) EXPECT_GT(s, 0);
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

}  // namespace
}  // namespace tirtune
