// TimeFunction: the number of calls per repeat comes from the warm-up (one repeat's time of
// calls) so that a repeat lasts `min_repeat_ms`; with cache flushing every repeat is a single call
// after a flush.
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

}  // namespace
}  // namespace tirtune
