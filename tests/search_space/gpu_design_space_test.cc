// The CUDA design space as a whole, over every workload of the operator library at its small
// shape: the space yields at least 50 valid samples (replayed, postprocessed and accepted by
// VerifyGpuCode), each of which lowers to kernels that compute the interpreter's numbers in the
// GPU-semantics executor (threads phase by phase, races and warp divergence detected); mutated
// samples replay to correct kernels or are rejected cleanly. The share of samples the
// postprocessors reject is recorded per workload (and printed). Then GEMM specifics.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "../lower/gpu_check.h"
#include "tirtune/codegen/target.h"
#include "tirtune/interp/gpu_executor.h"
#include "tirtune/search/space.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

constexpr int kWantValid = 50;
constexpr int kMaxAttempts = 1500;

Target Sm90() { return Target::Parse("cuda -arch=sm_90"); }

std::string SmallSpec(const WorkloadDef& def) {
  std::string spec = def.name + ":";
  for (size_t i = 0; i < def.small_shape.size(); ++i) {
    spec += (i == 0 ? "" : ",") + std::to_string(def.small_shape[i]);
  }
  return spec;
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) names.push_back(def.name);
  return names;
}

// Why the lowered kernels of `scheduled` do not compute what `original` computes; empty when
// they do.
std::string CheckOnGpuExecutor(const PrimFunc& original, const PrimFunc& scheduled) {
  GpuModule module;
  try {
    module = LowerGpu(scheduled, Sm90().gpu);
  } catch (const std::exception& e) {
    return std::string("LowerGpu refused a verified sample: ") + e.what();
  }
  try {
    return testing::CompareWithInterpreter(original, module);
  } catch (const GpuRaceError& e) {
    return std::string("race: ") + e.what();
  }
}

// Samples the space of `spec` until kWantValid are valid (or kMaxAttempts), checking each
// valid sample and one mutation of it on the executor; prints and records the rejected share.
void CheckSpace(const std::string& spec) {
  const PrimFunc f = MakeWorkload(spec).func;
  SpaceGenerator gen = SpaceGenerator::For(Sm90());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, /*seed=*/1);
  ASSERT_GE(spaces.size(), 1u);
  std::vector<Trace> traces;
  for (const Schedule& space : spaces) traces.push_back(WithoutDecisions(space.trace()));

  RandomEngine rng(42);
  int valid = 0, attempts = 0, mutated = 0;
  std::map<std::string, int> rejections;
  for (; attempts < kMaxAttempts && valid < kWantValid; ++attempts) {
    const Trace& trace = traces[attempts % traces.size()];
    std::optional<Schedule> sample = gen.ReplayAndPostprocess(f, trace, 1000 + attempts);
    if (!sample) {
      ++rejections[gen.WhyRejected(f, trace, 1000 + attempts)];
      continue;
    }
    ++valid;
    ASSERT_EQ(CheckOnGpuExecutor(f, sample->func()), "") << sample->trace().ToText();
    Mutator& mutator = *gen.mutators()[valid % gen.mutators().size()].mutator;
    std::optional<Trace> changed = mutator.Apply(f, sample->trace(), rng);
    if (!changed) continue;
    std::optional<Schedule> replayed = gen.ReplayAndPostprocess(f, *changed, 7);
    if (!replayed) continue;
    ++mutated;
    ASSERT_EQ(CheckOnGpuExecutor(f, replayed->func()), "") << mutator.name() << "\n"
                                                            << replayed->trace().ToText();
  }
  std::string why;
  for (const auto& [reason, count] : rejections) why += fmt::format("\n  {} x {}", count, reason);
  EXPECT_GE(valid, kWantValid) << spaces.size() << " spaces, " << attempts << " attempts" << why;
  ::testing::Test::RecordProperty("spaces", static_cast<int>(spaces.size()));
  ::testing::Test::RecordProperty("valid_samples", valid);
  ::testing::Test::RecordProperty("attempts", attempts);
  ::testing::Test::RecordProperty("valid_mutations", mutated);
  fmt::print("{}: {} spaces, {} valid of {} samples ({:.0f}% rejected), {} valid mutations{}\n",
             spec, spaces.size(), valid, attempts,
             100.0 * (attempts - valid) / std::max(attempts, 1), mutated, why);
}

class EveryWorkloadOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryWorkloadOnGpu, YieldsFiftyValidSamplesThatComputeTheSameOutputs) {
  CheckSpace(SmallSpec(*FindWorkload(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(Workloads, EveryWorkloadOnGpu, ::testing::ValuesIn(WorkloadNames()),
                         [](const auto& info) { return info.param; });

// The reductions again at shapes where CrossThreadReduction has powers of two to share out
// (the small shapes' reductions are 3 to 7 long).
class ReductionsOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(ReductionsOnGpu, YieldFiftyValidSamplesThatComputeTheSameOutputs) { CheckSpace(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Shapes, ReductionsOnGpu,
                         ::testing::Values("softmax:4,256", "norm:2,8,16", "layer_norm:4,64",
                                           "global_avg_pool2d:1,4,8,16", "dense:4,128,8"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == ':' || c == ',') c = '_';
                           }
                           return name;
                         });

// The statements of `module`'s kernels, printed.
std::string KernelText(const PrimFunc& scheduled) {
  return PrintGpuModule(LowerGpu(scheduled, Sm90().gpu));
}

// A valid sample of `f`'s spaces for each seed in [0, n).
std::vector<Schedule> Samples(const PrimFunc& f, int n) {
  SpaceGenerator gen = SpaceGenerator::For(Sm90());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, 1);
  std::vector<Schedule> out;
  for (int seed = 0; seed < n; ++seed) {
    const Schedule& space = spaces[seed % spaces.size()];
    std::optional<Schedule> s = gen.ReplayAndPostprocess(f, WithoutDecisions(space.trace()), seed);
    if (s) out.push_back(std::move(*s));
  }
  return out;
}

TEST(GemmOnGpu, OneKernelWithSharedTilesALocalAccumulatorAndBoundLoops) {
  const PrimFunc f = MakeWorkload("gemm:128,128,128").func;
  std::vector<Schedule> samples = Samples(f, 20);
  ASSERT_GE(samples.size(), 10u);
  for (const Schedule& s : samples) {
    GpuModule module = LowerGpu(s.func(), Sm90().gpu);
    ASSERT_EQ(module.kernels.size(), 1u) << PrintGpuModule(module);
    std::string text = PrintGpuModule(module);
    EXPECT_NE(text.find("A_shared"), std::string::npos) << text;
    EXPECT_NE(text.find("B_shared"), std::string::npos) << text;
    EXPECT_NE(text.find("C_local"), std::string::npos) << text;
    EXPECT_NE(text.find("sync_threads()"), std::string::npos) << text;
  }
}

TEST(GemmOnGpu, AReluEpilogueIsFoldedIntoTheWriteBack) {
  // dense = GEMM + bias + ReLU? cbr: conv + bias + ReLU; both end in one kernel.
  for (const char* spec : {"cbr:1,8,8,16,16,3,1,1", "dense:4,128,8"}) {
    const PrimFunc f = MakeWorkload(spec).func;
    std::vector<Schedule> samples = Samples(f, 10);
    ASSERT_FALSE(samples.empty()) << spec;
    for (const Schedule& s : samples) {
      GpuModule module = LowerGpu(s.func(), Sm90().gpu);
      EXPECT_EQ(module.kernels.size(), 1u) << spec << "\n" << PrintGpuModule(module);
    }
  }
}

TEST(SoftmaxOnGpu, SomeSamplesReduceAcrossThreadsWithWarpShuffles) {
  const PrimFunc f = MakeWorkload("softmax:64,1024").func;
  SpaceGenerator gen = SpaceGenerator::For(Sm90());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, 1);
  EXPECT_GE(spaces.size(), 2u);  // each reduction serial or across threads
  int shuffling = 0;
  for (const Schedule& s : Samples(f, 16)) {
    if (KernelText(s.func()).find("warp_shuffle_xor") != std::string::npos) ++shuffling;
  }
  EXPECT_GT(shuffling, 0);
}

}  // namespace
}  // namespace tirtune
