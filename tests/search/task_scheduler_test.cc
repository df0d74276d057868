// Task schedulers: round-robin cycles over live tasks; gradient-based runs one round-robin pass,
// then favours the task whose weighted latency promises the most, and skips terminated tasks.
#include "tirtune/search/task_scheduler.h"

#include <gtest/gtest.h>

#include <limits>

namespace tirtune {
namespace {

TEST(RoundRobin, CyclesOverLiveTasks) {
  auto s = MakeRoundRobin(3);
  EXPECT_EQ(s->NextTask(), 0);
  EXPECT_EQ(s->NextTask(), 1);
  EXPECT_EQ(s->NextTask(), 2);
  EXPECT_EQ(s->NextTask(), 0);
  s->Terminate(1);
  EXPECT_EQ(s->NextTask(), 2);
  EXPECT_EQ(s->NextTask(), 0);
  s->Terminate(0);
  s->Terminate(2);
  EXPECT_EQ(s->NextTask(), -1);
}

TEST(GradientBased, OneRoundRobinPassThenTheHeaviestLatency) {
  auto s = MakeGradientBased({1, 10});
  EXPECT_EQ(s->NextTask(), 0);
  s->Notify(0, 1e-3);
  EXPECT_EQ(s->NextTask(), 1);
  s->Notify(1, 1e-3);
  // Same latency, ten times the uses: task 1 counts more.
  for (int i = 0; i < 5; ++i) {
    int t = s->NextTask();
    EXPECT_EQ(t, 1);
    s->Notify(t, 1e-3);
  }
  s->Terminate(1);
  EXPECT_EQ(s->NextTask(), 0);
  s->Terminate(0);
  EXPECT_EQ(s->NextTask(), -1);
}

TEST(GradientBased, ATaskWithoutAValidKernelGoesLast) {
  auto s = MakeGradientBased({1, 1});
  EXPECT_EQ(s->NextTask(), 0);
  s->Notify(0, std::numeric_limits<double>::infinity());
  EXPECT_EQ(s->NextTask(), 1);
  s->Notify(1, 2e-3);
  EXPECT_EQ(s->NextTask(), 1);
}

// A resumed task enters with its stored best (Notify before its turn): the first pass is for the
// others, then the gradient decides among all.
TEST(GradientBased, ATaskNotifiedBeforeItsTurnSkipsTheFirstPass) {
  auto s = MakeGradientBased({1, 1, 1});
  s->Notify(0, 5e-3);
  s->Notify(2, 1e-3);
  EXPECT_EQ(s->NextTask(), 1);
  s->Notify(1, 1e-3);
  EXPECT_EQ(s->NextTask(), 0);  // the largest weighted latency
}

}  // namespace
}  // namespace tirtune
