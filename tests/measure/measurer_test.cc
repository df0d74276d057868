// The whole measurement pipeline under planted faults: 1,000 candidates of one task, 10% of them
// faulty (rejected by lowering, rejected by code generation (float8), a segfault, an endless loop,
// garbage output), measured in batches as the tuner does. Every candidate ends with its own kind,
// the good ones all measure ok with samples, and the workers are respawned after each crash or
// hang.
#include "tirtune/measure/measurer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "planted_faults.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/ir/parser.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;  // the planted-fault kernels

RunnerConfig FastRunners() {
  RunnerConfig config;
  config.num_workers = 2;
  config.timeout_s = 1;
  config.timer.warmup = 1;
  config.timer.repeat = 2;
  config.timer.min_repeat_ms = 0.05;
  return config;
}

TEST(Measurer, TheReferenceOfASmallTaskIsTheInterpreterAndCoversOnlyOutputs) {
  MeasureTask task = MakeMeasureTask(ParsePrimFunc(kGemm), Target::Host(), 5);
  EXPECT_EQ(task.reference_source, "interpreter");
  ASSERT_EQ(task.expected.size(), 3u);
  EXPECT_FALSE(task.expected[0].defined());
  EXPECT_FALSE(task.expected[1].defined());
  EXPECT_TRUE(task.expected[2].defined());
}

// A kernel that reads its weight packed (transform_layout): the builder reports the layout, the
// runner draws the weight as the reference did and packs it, and the result verifies. The same
// kernel handed the weight unpacked computes garbage, and verification says so.
TEST(Measurer, AKernelReadingAPackedWeightIsVerifiedOnThePackedDraw) {
  PrimFunc gemm = MakeWorkload("gemm:16,12,8").func;
  std::vector<int64_t> b_shape;
  for (const Expr& e : gemm->params[1]->shape) b_shape.push_back(*AsConstInt(e));
  ASSERT_EQ(b_shape.size(), 2u);
  ASSERT_EQ(b_shape[1] % 4, 0);
  // B[k, j] as [j / 4, k, j % 4].
  PackedLayout layout{b_shape, {{1, 4, b_shape[1] / 4}, {0, 1, b_shape[0]}, {1, 1, 4}}};
  Schedule sch(gemm);
  sch.TransformLayout(1, layout);
  Measurer measurer(BuilderConfig{}, FastRunners());
  MeasureTask task = MakeMeasureTask(gemm, Target::Host(), 5);
  std::vector<MeasureResult> results = measurer.Measure(task, {sch.func()});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, MeasureStatus::kOk) << results[0].message;

  BuildResult built = measurer.builder().BuildOne(sch.func(), Target::Host());
  ASSERT_TRUE(built.ok()) << built.message;
  ASSERT_EQ(built.packed_layouts.count(1), 1u);
  EXPECT_EQ(PackedLayout::FromJson(built.packed_layouts.at(1), "B"), layout);
  MeasureCandidate unpacked = CandidateFor(task, built);
  EXPECT_FALSE(unpacked.args[1].layout.empty());
  unpacked.args[1].layout.clear();
  MeasureResult wrong = measurer.runner().MeasureOne(unpacked);
  EXPECT_EQ(wrong.status, MeasureStatus::kWrongResult) << wrong.message;
}

// A library composite that states a small constant's value (a GELU's sqrt(2)): the reference,
// interpreted or compiled, divides by that value, not by a random number, and so does every run.
TEST(Measurer, ConstantsALibraryStatesKeepTheirValuesInTheReference) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def scaled(X: Buffer((8,), float32), c: Buffer((), float32), Y: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(8):
            with block("Y"):
                vi = axis.spatial(8, i)
                reads(X[vi], c[])
                writes(Y[vi])
                Y[vi] = X[vi] / c[]
)");
  const std::string library = R"({"args": [{"name": "X", "constant": false},
                                           {"name": "c", "constant": true, "value": [2.0]}]})";
  std::vector<NDArray> inputs = MakeRandomArgs(f, 5);
  for (double below : {1e9, 0.0}) {  // interpreted, then compiled
    ReferenceConfig reference;
    reference.interpret_below_flops = below;
    MeasureTask task = MakeMeasureTask(f, Target::Host(), 5, reference, library);
    EXPECT_EQ(task.library, library);
    EXPECT_EQ(task.args[1].values, std::vector<double>{2.0});
    EXPECT_TRUE(task.args[0].values.empty());
    for (int64_t i = 0; i < 8; ++i) {
      EXPECT_FLOAT_EQ(task.expected[2].GetDouble(i), inputs[0].GetDouble(i) / 2)
          << task.reference_source;
    }
    Measurer measurer(BuilderConfig{}, FastRunners());
    EXPECT_EQ(measurer.Measure(task, {f})[0].status, MeasureStatus::kOk);
  }
  // A statement that does not fit is passed over: the parameter stays random.
  for (const char* odd : {R"({"args": [{"value": 3}]})", R"({"args": [{}, {"value": [1, 2]}]})",
                          R"({"args": [{}, {"value": [null]}]})", R"({"args": 5})"}) {
    MeasureTask task = MakeMeasureTask(f, Target::Host(), 5, {}, odd);
    EXPECT_TRUE(task.args[0].values.empty() && task.args[1].values.empty()) << odd;
  }
  EXPECT_THROW(MakeMeasureTask(f, Target::Host(), 5, {}, "{not json"), UserError);
}

// A record's device says how it was timed, and reads back as that timing.
TEST(Measurer, ARecordsDeviceSaysHowItWasTimed) {
  const std::string host = HostDeviceDescription();
  for (RecordTiming timing :
       {RecordTiming::kWarm, RecordTiming::kColdWeights, RecordTiming::kFlushedCaches}) {
    EXPECT_EQ(RecordTimingOf(TimedDevice(host, timing)), timing);
  }
  EXPECT_EQ(TimedDevice(host, RecordTiming::kWarm), host + ", warm");
  EXPECT_EQ(TimedDevice("CPU (2 cores) on host-a", RecordTiming::kColdWeights),
            "CPU (2 cores) on host-a, cold weights");
  TimerConfig timer;
  EXPECT_EQ(TimingOf(timer), RecordTiming::kWarm);
  timer.cold_constants = true;
  EXPECT_EQ(TimingOf(timer), RecordTiming::kColdWeights);
  timer.flush_cache = true;  // a flush evicts everything, the weights included
  EXPECT_EQ(TimingOf(timer), RecordTiming::kFlushedCaches);
  // Records stored before timings were written down say nothing of theirs.
  EXPECT_EQ(RecordTimingOf("AMD EPYC 9B45 (2 cores)"), std::nullopt);
  EXPECT_EQ(RecordTimingOf(""), std::nullopt);
}

TEST(Measurer, ATaskKnowsItsLongestReduction) {
  EXPECT_EQ(MakeMeasureTask(MakeWorkload("gemm:8,8,32").func, Target::Host()).reduction_length, 32);
  EXPECT_EQ(LongestReduction(MakeWorkload("norm:1,16,32").func), 16 * 32);
  EXPECT_EQ(LongestReduction(MakeWorkload("relu:1,4,4,8").func), 1);
}

TEST(Measurer, ALargeTaskIsVerifiedAgainstTheUnscheduledFunctionCompiled) {
  Workload w = MakeWorkload("gemm:64,64,64");
  ReferenceConfig reference;
  reference.interpret_below_flops = 1e5;
  MeasureTask task = MakeMeasureTask(w.func, Target::Host(), 5, reference);
  EXPECT_EQ(task.reference_source, "unscheduled function, compiled");
  Measurer measurer(BuilderConfig{}, FastRunners());
  std::vector<MeasureResult> results = measurer.Measure(task, {w.func});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, MeasureStatus::kOk) << results[0].message;
}

// The compiled reference runs its outer loops in parallel: what it computes is what the
// interpreter computes, for a GEMM (a parallel row loop), a padded convolution with a batch of
// one (two nests, the parallel loop past the unit batch loop) and a softmax (reductions).
TEST(Measurer, TheCompiledReferenceAgreesWithTheInterpreter) {
  for (const char* spec : {"gemm:48,40,32", "conv2d:1,10,10,8,8,3,1,1", "softmax:16,64"}) {
    PrimFunc f = MakeWorkload(spec).func;
    ReferenceConfig compiled;
    compiled.interpret_below_flops = 0;
    Reference got = ComputeReference(f, 3, Target::Host(), compiled);
    ASSERT_EQ(got.source, "unscheduled function, compiled");
    std::vector<NDArray> want = InterpretWithRandomInputs(f, 3);
    for (size_t p = 0; p < want.size(); ++p) {
      if (!got.expected[p].defined()) continue;
      for (int64_t i = 0; i < want[p].size(); ++i) {
        ASSERT_NEAR(got.expected[p].GetDouble(i), want[p].GetDouble(i),
                    1e-4 * (1 + std::fabs(want[p].GetDouble(i))))
            << spec << " parameter " << p << " element " << i;
      }
    }
  }
}

TEST(Measurer, AReferenceThatCrashesOrHangsIsAUserErrorAndTheTunerLives) {
  ReferenceConfig compiled;
  compiled.interpret_below_flops = 0;  // the compiled path, in a runner process
  compiled.timeout_s = 1;
  try {
    MakeMeasureTask(ParsePrimFunc(kSegfault), Target::Host(), 5, compiled);
    FAIL() << "a crashing reference was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("SIGSEGV"), std::string::npos) << e.what();
  }
  try {
    MakeMeasureTask(ParsePrimFunc(kEndless), Target::Host(), 5, compiled);
    FAIL() << "an endless reference was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("timeout"), std::string::npos) << e.what();
  }
  // The same path gives the interpreter's numbers for a good function.
  MeasureTask interpreted = MakeMeasureTask(ParsePrimFunc(kGemm), Target::Host(), 5);
  MeasureTask in_runner = MakeMeasureTask(ParsePrimFunc(kGemm), Target::Host(), 5, compiled);
  ASSERT_TRUE(in_runner.expected[2].defined());
  for (int64_t i = 0; i < in_runner.expected[2].size(); ++i) {
    ASSERT_NEAR(in_runner.expected[2].GetDouble(i), interpreted.expected[2].GetDouble(i), 1e-4);
  }
}

// Ctrl-C while a compiled reference runs: the worker is stopped and ComputeReference says so
// (it used to wait for the run to end, up to its 600 s limit).
TEST(Measurer, AReferenceRunEndsWhenTheStopFlagIsSet) {
  std::atomic<bool> stop{false};
  ReferenceConfig compiled;
  compiled.interpret_below_flops = 0;
  compiled.stop = &stop;
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.store(true);
  });
  try {
    MakeMeasureTask(ParsePrimFunc(kEndless), Target::Host(), 5, compiled);
    ADD_FAILURE() << "an endless reference ended";
  } catch (const Interrupted& e) {
    EXPECT_NE(std::string(e.what()).find("interrupted"), std::string::npos) << e.what();
  }
  ctrl_c.join();
}

enum class Plant { kGood, kGoodIkj, kBadAlign, kFloat8, kSegfault, kEndless, kGarbage };

MeasureStatus ExpectedStatus(Plant p) {
  switch (p) {
    case Plant::kGood:
    case Plant::kGoodIkj:
      return MeasureStatus::kOk;
    case Plant::kBadAlign:
    case Plant::kFloat8:
      return MeasureStatus::kBuildError;
    case Plant::kSegfault:
      return MeasureStatus::kRuntimeError;
    case Plant::kEndless:
      return MeasureStatus::kTimeout;
    case Plant::kGarbage:
      return MeasureStatus::kWrongResult;
  }
  return MeasureStatus::kRunnerLost;
}

TEST(Measurer, AThousandCandidatesWithTenPercentPlantedFaultsAreAllAccountedFor) {
  const std::map<Plant, PrimFunc> funcs = {
      {Plant::kGood, ParsePrimFunc(kGemm)},         {Plant::kGoodIkj, ParsePrimFunc(kGemmIkj)},
      {Plant::kBadAlign, ParsePrimFunc(kBadAlign)}, {Plant::kFloat8, ThroughFloat8()},
      {Plant::kSegfault, ParsePrimFunc(kSegfault)}, {Plant::kEndless, ParsePrimFunc(kEndless)},
      {Plant::kGarbage, ParsePrimFunc(kGarbage)}};
  // 100 faults spread through the run: every tenth candidate, cycling through the kinds (the
  // endless loops, which each cost a timeout, are rarer).
  std::vector<Plant> plan;
  const Plant faults[] = {Plant::kSegfault, Plant::kGarbage, Plant::kBadAlign, Plant::kFloat8,
                          Plant::kSegfault, Plant::kGarbage, Plant::kBadAlign, Plant::kFloat8,
                          Plant::kGarbage,  Plant::kEndless};
  for (int i = 0; i < 1000; ++i) {
    if (i % 10 == 7) {
      plan.push_back(faults[(i / 10) % 10]);
    } else {
      plan.push_back(i % 2 == 0 ? Plant::kGood : Plant::kGoodIkj);
    }
  }

  MeasureTask task = MakeMeasureTask(funcs.at(Plant::kGood), Target::Host(), 11);
  Measurer measurer(BuilderConfig{}, FastRunners());
  std::map<MeasureStatus, int> seen;
  constexpr size_t kBatch = 64;
  for (size_t begin = 0; begin < plan.size(); begin += kBatch) {
    std::vector<PrimFunc> batch;
    for (size_t i = begin; i < std::min(plan.size(), begin + kBatch); ++i) {
      batch.push_back(funcs.at(plan[i]));
    }
    std::vector<MeasureResult> results = measurer.Measure(task, batch);
    ASSERT_EQ(results.size(), batch.size());
    for (size_t j = 0; j < results.size(); ++j) {
      const MeasureResult& r = results[j];
      Plant p = plan[begin + j];
      ASSERT_EQ(r.status, ExpectedStatus(p))
          << "candidate " << begin + j << ": " << MeasureStatusName(r.status) << ": " << r.message;
      ++seen[r.status];
      if (r.ok()) {
        EXPECT_EQ(r.seconds.size(), 2u);
        EXPECT_GT(r.median, 0);
      } else {
        EXPECT_FALSE(r.message.empty()) << "candidate " << begin + j;
      }
      if (p == Plant::kSegfault) {
        EXPECT_EQ(r.signal_name, "SIGSEGV");
      }
      if (p == Plant::kGarbage) {
        EXPECT_GT(r.max_abs_error, 1);
      }
    }
  }
  EXPECT_EQ(seen[MeasureStatus::kOk], 900);
  EXPECT_EQ(seen[MeasureStatus::kBuildError], 40);
  EXPECT_EQ(seen[MeasureStatus::kRuntimeError], 20);
  EXPECT_EQ(seen[MeasureStatus::kWrongResult], 30);
  EXPECT_EQ(seen[MeasureStatus::kTimeout], 10);
  // Two first starts, then one respawn per crash and per timeout.
  EXPECT_EQ(static_cast<RunnerPool&>(measurer.runner()).spawn_count(), 2 + 20 + 10);
  EXPECT_GT(measurer.total_times().build, 0);
  EXPECT_GT(measurer.total_times().run, 0);
}

}  // namespace
}  // namespace tirtune
