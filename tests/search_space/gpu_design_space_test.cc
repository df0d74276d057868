// The CUDA design space as a whole, over every workload of the operator library at its small
// shape: the space yields at least 50 valid samples (replayed, postprocessed and accepted by
// VerifyGpuCode), each of which lowers to kernels that compute the interpreter's numbers in the
// GPU-semantics executor (threads phase by phase, races and warp divergence detected); mutated
// samples replay to correct kernels or are rejected cleanly; the valid samples' kernels compile
// (NVRTC, where installed) within the static gates. The share of samples the postprocessors
// reject is recorded per workload (and printed). Then GEMM, epilogue and softmax specifics.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../common/gpu_gemm_sample.h"
#include "../lower/gpu_check.h"
#include "space_check.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/codegen/target.h"
#include "tirtune/interp/gpu_executor.h"
#include "tirtune/ir/functor.h"
#include "tirtune/search/space.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using testing::SmallSpec;
using testing::WorkloadNames;

constexpr int kWantValid = 50;
constexpr int kMaxAttempts = 1500;

Target Sm90() { return Target::Parse("cuda -arch=sm_90"); }

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

// The static gates (no spills; registers, shared memory within the limits) on the kernels of
// every sample: all of them compiled as one NVRTC program (each kernel renamed after its sample),
// which costs far less than one compilation each. Returns how many samples fail them; an
// empty `why` when NVRTC is not installed (then nothing is checked).
int SamplesFailingTheGates(const std::vector<GpuModule>& samples, std::string* why) {
  if (!CudaCompilerAvailable(why)) return 0;
  why->clear();
  GpuModule all;
  all.name = "samples";
  std::vector<size_t> owner;
  for (size_t i = 0; i < samples.size(); ++i) {
    for (GpuKernel k : samples[i].kernels) {
      k.name = fmt::format("s{}_{}", i, k.name);
      all.kernels.push_back(std::move(k));
      owner.push_back(i);
    }
  }
  CudaBinary binary = CompileCuda(all, Sm90());
  std::set<size_t> failing;
  for (const std::string& problem : CheckResourceGates(all, binary, Sm90().gpu)) {
    for (size_t k = 0; k < all.kernels.size(); ++k) {
      if (problem.rfind(all.kernels[k].name + ":", 0) == 0) failing.insert(owner[k]);
    }
    *why += "\n    " + problem;
  }
  return static_cast<int>(failing.size());
}

// Samples the space of `spec` until kWantValid samples pass the postprocessors (VerifyGpuCode
// among them) and the static gates (or kMaxAttempts), checking each and one mutation of it on
// the executor; the gates are checked a batch at a time. Prints and records the share the
// postprocessors and the gates reject.
void CheckSpace(const std::string& spec) {
  const PrimFunc f = MakeWorkload(spec).func;
  SpaceGenerator gen = SpaceGenerator::For(Sm90());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, /*seed=*/1);
  ASSERT_GE(spaces.size(), 1u);
  std::vector<Trace> traces;
  for (const Schedule& space : spaces) traces.push_back(WithoutDecisions(space.trace()));

  RandomEngine rng(42);
  int verified = 0, passing = 0, gated = 0, attempts = 0, mutated = 0;
  std::map<std::string, int> rejections;
  std::string gate_problems;
  std::vector<GpuModule> pending;  // verified, not yet through the gates
  for (; attempts < kMaxAttempts && passing < kWantValid; ++attempts) {
    const Trace& trace = traces[attempts % traces.size()];
    std::optional<Schedule> sample = gen.ReplayAndPostprocess(f, trace, 1000 + attempts);
    if (!sample) {
      ++rejections[gen.WhyRejected(f, trace, 1000 + attempts)];
      continue;
    }
    ++verified;
    ASSERT_EQ(CheckOnGpuExecutor(f, sample->func()), "") << sample->trace().ToText();
    pending.push_back(LowerGpu(sample->func(), Sm90().gpu));
    Mutator& mutator = *gen.mutators()[verified % gen.mutators().size()].mutator;
    if (std::optional<Trace> changed = mutator.Apply(f, sample->trace(), rng)) {
      if (std::optional<Schedule> replayed = gen.ReplayAndPostprocess(f, *changed, 7)) {
        ++mutated;
        ASSERT_EQ(CheckOnGpuExecutor(f, replayed->func()), "") << mutator.name() << "\n"
                                                               << replayed->trace().ToText();
      }
    }
    if (passing + static_cast<int>(pending.size()) >= kWantValid) {
      std::string problems;
      int failing = SamplesFailingTheGates(pending, &problems);
      gated += failing;
      passing += static_cast<int>(pending.size()) - failing;
      gate_problems += problems;
      pending.clear();
    }
  }
  std::string why;
  for (const auto& [reason, count] : rejections) why += fmt::format("\n  {} x {}", count, reason);
  EXPECT_GE(passing, kWantValid) << spaces.size() << " spaces, " << attempts << " attempts" << why
                                 << gate_problems;
  ::testing::Test::RecordProperty("spaces", static_cast<int>(spaces.size()));
  ::testing::Test::RecordProperty("samples", attempts);
  ::testing::Test::RecordProperty("rejected_by_postprocessors", attempts - verified);
  ::testing::Test::RecordProperty("rejected_by_gates", gated);
  ::testing::Test::RecordProperty("valid_mutations", mutated);
  fmt::print(
      "{}: {} spaces, {} samples: {} rejected by the postprocessors ({:.0f}%), {} by the static "
      "gates, {} valid; {} valid mutations{}{}\n",
      spec, spaces.size(), attempts, attempts - verified,
      100.0 * (attempts - verified) / std::max(attempts, 1), gated, passing, mutated, why,
      gate_problems);
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

// With 2 x 2 vthreads and a 4 x 2 tile per vthread, each thread accumulates 32 values: the
// local accumulator holds exactly those (one copy per vthread), not the box spanning the
// vthreads' tiles, which lie a whole thread tile apart in C.
TEST(GemmOnGpu, TheLocalAccumulatorHoldsOneTilePerVthread) {
  const PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  // i, j: [blocks, vthreads, threads, tile, tile]; k: [8, 4, 2]; scalar fetches.
  std::string why;
  std::optional<Schedule> sch =
      tirtune::testing::GpuSampleWithTiles(f, {{2, 2, 4, 2, 2}, {4, 2, 4, 1, 2}, {8, 4, 2}}, &why);
  ASSERT_TRUE(sch.has_value()) << why;
  GpuModule module = LowerGpu(sch->func(), Sm90().gpu);
  ASSERT_EQ(module.kernels.size(), 1u);
  int64_t accumulator = -1;
  PreOrderVisit(module.kernels[0].body, [&](const Object* node) {
    if (const auto* alloc = node->as<AllocateNode>(); alloc && alloc->buffer->name == "C_local") {
      accumulator = alloc->buffer.ConstNumElements();
    }
    return true;
  });
  EXPECT_EQ(accumulator, 4 * 4 * 2) << PrintGpuModule(module);
  EXPECT_EQ(tirtune::testing::CompareWithInterpreter(f, module), "");
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
