// The cuDNN backend proven on the CPU: each composite its patterns make is planned as one cuDNN
// convolution and its steps (cudnn_plan.h), and what cuDNN defines for those descriptors,
// evaluated on the host (the weight packed through the two tensor descriptors as
// cudnnTransformTensor does, a cross-correlation over the packed filter reading every tensor
// through its strides, then each step in place, broadcasting its operand), must give the
// interpreter's result of the composite. What cuDNN cannot run is declined with the reason or
// left outside the composite. On a GPU host the same kernels are verified for real before they
// are timed (measure/gpu_worker.cc).
#include "tirtune/offload/cudnn_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "../graph/graph_testing.h"
#include "offload_testing.h"
#include "tirtune/offload/library.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune::offload {
namespace {

using graph::AddOpCall;
using graph::F32;
using graph::Graph;
using graph::ValueId;
using graph::testing::RandomArray;

// Calls `f` with every index of `dims`.
void ForEachIndex(const std::vector<int64_t>& dims,
                  const std::function<void(const std::vector<int64_t>&)>& f) {
  for (int64_t d : dims) {
    if (d <= 0) return;
  }
  std::vector<int64_t> i(dims.size(), 0);
  while (true) {
    f(i);
    size_t d = dims.size();
    while (d-- > 0) {
      if (++i[d] < dims[d]) break;
      i[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

int64_t Offset(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t at = 0;
  for (size_t d = 0; d < index.size(); ++d) at += index[d] * strides[d];
  return at;
}

// What cuDNN computes for `d`: the weight transformed into the packed filter, the convolution,
// then the steps (`operands[i]` for step i).
void EmulateDnnConvolution(const cuda::DnnConvDesc& d, const float* x, const float* weight,
                           const std::vector<const float*>& operands, float* y) {
  const size_t rank = d.x.dims.size();
  ASSERT_TRUE(rank == 4 || rank == 5);
  for (const cuda::DnnTensor* t : {&d.x, &d.y, &d.weight}) {
    ASSERT_EQ(t->dims.size(), rank);
    ASSERT_EQ(t->strides.size(), rank);
  }
  ASSERT_EQ(d.pad.size(), rank - 2);
  ASSERT_EQ(d.stride.size(), rank - 2);
  ASSERT_EQ(d.dilation.size(), rank - 2);
  ASSERT_EQ(operands.size(), d.steps.size());
  // cudnnTransformTensor: the same dimensions, from the weight's strides to the packed ones.
  const std::vector<int64_t> packed_strides = cuda::PackedFilterStrides(d.weight.dims);
  int64_t elements = 1;
  for (int64_t n : d.weight.dims) elements *= n;
  EXPECT_LE(elements * 4, static_cast<int64_t>(cuda::PackedFilterBytes(d)));
  std::vector<float> packed(static_cast<size_t>(elements), std::nanf(""));
  ForEachIndex(d.weight.dims, [&](const std::vector<int64_t>& i) {
    packed[static_cast<size_t>(Offset(i, packed_strides))] = weight[Offset(i, d.weight.strides)];
  });
  // The filter is K x C/groups x spatial; channels per group in and out.
  const int64_t k_out = d.weight.dims[0], c_in = d.weight.dims[1];
  EXPECT_EQ(d.x.dims[1], c_in * d.groups);
  EXPECT_EQ(d.y.dims[1], k_out);
  EXPECT_EQ(k_out % d.groups, 0);
  const int64_t k_per_group = k_out / d.groups;
  std::vector<int64_t> window(d.weight.dims.begin() + 2, d.weight.dims.end());
  ForEachIndex(d.y.dims, [&](const std::vector<int64_t>& o) {
    const int64_t group = o[1] / k_per_group;
    double acc = 0;
    for (int64_t c = 0; c < c_in; ++c) {
      ForEachIndex(window, [&](const std::vector<int64_t>& f) {
        std::vector<int64_t> in = {o[0], group * c_in + c};
        for (size_t s = 0; s < window.size(); ++s) {
          const int64_t at = o[s + 2] * d.stride[s] - d.pad[s] + f[s] * d.dilation[s];
          if (at < 0 || at >= d.x.dims[s + 2]) return;
          in.push_back(at);
        }
        std::vector<int64_t> w = {o[1], c};
        w.insert(w.end(), f.begin(), f.end());
        acc += static_cast<double>(x[Offset(in, d.x.strides)]) *
               packed[static_cast<size_t>(Offset(w, packed_strides))];
      });
    }
    y[Offset(o, d.y.strides)] = static_cast<float>(acc);
  });
  for (size_t s = 0; s < d.steps.size(); ++s) {
    const cuda::DnnStep& step = d.steps[s];
    const bool has_operand =
        step.kind == cuda::DnnStep::kAdd || step.kind == cuda::DnnStep::kMultiply;
    EXPECT_EQ(has_operand, operands[s] != nullptr);
    ForEachIndex(d.y.dims, [&](const std::vector<int64_t>& o) {
      float& v = y[Offset(o, d.y.strides)];
      if (has_operand) {
        // cuDNN broadcasts an operand along the dimensions where it has one element.
        std::vector<int64_t> at = o;
        for (size_t i = 0; i < at.size(); ++i) {
          EXPECT_TRUE(step.operand.dims[i] == 1 || step.operand.dims[i] == d.y.dims[i]);
          if (step.operand.dims[i] == 1) at[i] = 0;
        }
        const float u = operands[s][Offset(at, step.operand.strides)];
        v = step.kind == cuda::DnnStep::kAdd ? v + u : v * u;
      } else {
        v = std::max(v, 0.0f);
        if (step.kind == cuda::DnnStep::kClippedRelu) v = std::min(v, float(step.ceiling));
      }
    });
  }
}

// Fuses `g` with cuDNN's patterns and runs each composite's plan on the host.
std::string RunsLikeTheInterpreter(const Graph& g, int composites = 1) {
  return testing::RunsLikeTheInterpreter(
      g, CudnnBackend()->Patterns(),
      [](const Graph& f, const graph::Call& call, const std::vector<const NDArray*>& args,
         NDArray& out) {
        CudnnPlan plan = PlanCudnn(f, call);
        auto data = [&](int arg) -> const float* {
          if (arg == kFoldedBias) return plan.folded_bias.data();
          return arg < 0 ? nullptr : static_cast<const float*>(args[arg]->raw());
        };
        std::vector<const float*> operands;
        for (int arg : plan.step_operands) operands.push_back(data(arg));
        const float* weight = plan.folded_weight.defined()
                                  ? static_cast<const float*>(plan.folded_weight.raw())
                                  : data(plan.weight);
        EmulateDnnConvolution(plan.conv, data(plan.data), weight, operands,
                              static_cast<float*>(out.raw()));
        return CudnnBackend()->Build(f, call, {})->Describe();
      },
      composites);
}

struct Conv {
  std::string op = "conv2d";
  std::vector<int64_t> x;  // N, spatial..., C
  int64_t out = 4, kernel = 3, stride = 1, pad = 0, dilation = 1, groups = 1;
};

// `c`, then the tail: "bias", "scale" / "shift" (a constant per channel multiplied / added),
// "sum" (a tensor added), "relu", "relu6", "clip-1" (clip(-1, 1)), or another unary operator.
Graph Convolution(const Conv& c, const std::vector<std::string>& tail) {
  Graph g;
  ValueId v = g.AddInput("x", F32(c.x));
  std::vector<int64_t> w(c.x.size() - 2, c.kernel);
  w.insert(w.end(), {c.x.back() / c.groups, c.out});
  v = AddOpCall(
      &g, "conv", c.op, {v, g.AddConstant("w", RandomArray(w, 3))},
      {{"stride", c.stride}, {"pad", c.pad}, {"dilation", c.dilation}, {"groups", c.groups}});
  uint64_t seed = 10;
  for (const std::string& e : tail) {
    auto per_channel = [&] { return g.AddConstant(e + "_c", RandomArray({c.out}, seed++)); };
    if (e == "bias") {
      v = AddOpCall(&g, e, "bias_add", {v, per_channel()});
    } else if (e == "scale") {
      v = AddOpCall(&g, e, "multiply", {per_channel(), v});
    } else if (e == "shift") {
      v = AddOpCall(&g, e, "add", {v, per_channel()});
    } else if (e == "sum") {
      v = AddOpCall(&g, e, "add", {g.AddInput("residual", g.value(v).type), v});
    } else if (e == "relu6") {
      v = AddOpCall(&g, e, "clip", {v}, {{"min", 0.0}, {"max", 6.0}});
    } else if (e == "clip-1") {
      v = AddOpCall(&g, "clip", "clip", {v}, {{"min", -1.0}, {"max", 1.0}});
    } else {
      v = AddOpCall(&g, e, e, {v});
    }
  }
  g.AddOutput(v);
  return g;
}

TEST(CudnnPlan, ConvolutionsWithTheirStepsAreOneCall) {
  std::string d =
      RunsLikeTheInterpreter(Convolution({.x = {1, 7, 6, 5}, .pad = 1}, {"bias", "relu"}));
  EXPECT_NE(d.find("cuDNN conv2d 3x3, 5 -> 4 channels on 1x7x6 (pad 1; bias, ReLU) for %relu"),
            std::string::npos)
      << d;
  // A batch norm after SimplifyInference, then ReLU6; grouped, strided and dilated.
  d = RunsLikeTheInterpreter(
      Convolution({.x = {2, 9, 8, 6}, .out = 6, .stride = 2, .pad = 2, .dilation = 2, .groups = 3},
                  {"bias", "scale", "shift", "relu6"}));
  EXPECT_NE(d.find("(stride 2, pad 2, dilation 2, groups 3; bias with scale and shift folded "
                   "in, clip(0, 6))"),
            std::string::npos)
      << d;
  // Depthwise (one group per channel), with a residual added before the activation.
  d = RunsLikeTheInterpreter(
      Convolution({.x = {1, 6, 6, 4}, .out = 4, .pad = 1, .groups = 4}, {"bias", "sum", "relu"}));
  EXPECT_NE(d.find("groups 4; bias, sum, ReLU"), std::string::npos) << d;
  // A sum after the activation: each step runs in place, in the composite's order.
  d = RunsLikeTheInterpreter(Convolution({.x = {1, 5, 5, 3}, .out = 2}, {"relu", "sum"}));
  EXPECT_NE(d.find("(ReLU, sum)"), std::string::npos) << d;
  // 1-D (a 2-D convolution of height 1) and 3-D.
  d = RunsLikeTheInterpreter(
      Convolution({.op = "conv1d", .x = {2, 11, 4}, .out = 6, .stride = 2, .pad = 1}, {"bias"}));
  EXPECT_NE(d.find("conv1d 3, 4 -> 6 channels on 2x11 (stride 2, pad 1; bias)"), std::string::npos)
      << d;
  d = RunsLikeTheInterpreter(
      Convolution({.op = "conv3d", .x = {1, 4, 5, 6, 2}, .out = 3, .kernel = 2}, {"relu"}));
  EXPECT_NE(d.find("conv3d 2x2x2, 2 -> 3 channels on 1x4x5x6 (ReLU)"), std::string::npos) << d;
  // A 1x1 convolution with a weight computed at run time (an input): read through its strides too.
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 4, 4, 8}));
  g.AddOutput(AddOpCall(&g, "conv", "conv2d", {x, g.AddInput("w", F32({1, 1, 8, 5}))}));
  RunsLikeTheInterpreter(g);
}

// cuDNN's NHWC filter format, pinned: (K, C, spatial...) stored K, spatial..., C.
TEST(CudnnPlan, PackedFilterIsChannelsLast) {
  EXPECT_EQ(cuda::PackedFilterStrides({6, 2, 3, 3}), (std::vector<int64_t>{18, 1, 6, 2}));
  EXPECT_EQ(cuda::PackedFilterStrides({4, 3, 2, 2, 2}), (std::vector<int64_t>{24, 1, 12, 6, 3}));
  EXPECT_EQ(cuda::PackedFilterStrides({5, 2, 1, 3}), (std::vector<int64_t>{6, 1, 6, 2}));
}

TEST(CudnnPlan, MoreShapes) {
  // 3-D grouped, 1-D dilated, and an output of one pixel (bias and residual of equal shapes).
  RunsLikeTheInterpreter(Convolution(
      {.op = "conv3d", .x = {1, 4, 4, 5, 4}, .out = 6, .kernel = 2, .pad = 1, .groups = 2},
      {"bias", "relu"}));
  RunsLikeTheInterpreter(
      Convolution({.op = "conv1d", .x = {1, 12, 3}, .out = 2, .pad = 2, .dilation = 2}, {"relu"}));
  RunsLikeTheInterpreter(Convolution({.x = {1, 3, 3, 4}, .out = 5}, {"bias", "sum", "relu"}));
  // One output channel times a scalar: no per-channel constant (the product stays outside).
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 4, 4, 2}));
  ValueId v =
      AddOpCall(&g, "conv", "conv2d", {x, g.AddConstant("w", RandomArray({3, 3, 2, 1}, 2))});
  g.AddOutput(AddOpCall(&g, "scaled", "multiply", {v, g.AddConstant("s", RandomArray({}, 3))}));
  EXPECT_NE(RunsLikeTheInterpreter(g).find("for %conv"), std::string::npos);
}

// The plan of the first composite cuDNN's patterns make of `g`.
CudnnPlan PlanOf(const Graph& g) {
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, CudnnBackend()->Patterns());
  for (const graph::Call& c : r.graph.calls()) {
    if (c.attrs.Has(graph::kCodegenAttr)) return PlanCudnn(r.graph, c);
  }
  ADD_FAILURE() << "no composite";
  return {};
}

// Which steps run in the convolution's own call (cudnnConvolutionBiasActivationForward): a bias,
// maybe a residual, then ReLU; anything else runs step by step.
TEST(CudnnPlan, BiasSumAndReluAloneRunInTheConvolutionsCall) {
  using Fused = std::optional<std::array<int, 3>>;
  const Conv c{.x = {1, 5, 5, 3}, .pad = 1};
  EXPECT_EQ(cuda::FusedBiasSumRelu(PlanOf(Convolution(c, {"bias", "relu"})).conv),
            (Fused{{0, -1, 1}}));
  EXPECT_EQ(cuda::FusedBiasSumRelu(PlanOf(Convolution(c, {"bias", "sum", "relu"})).conv),
            (Fused{{0, 1, 2}}));
  // The residual first: the per-channel constant after it is the bias all the same.
  EXPECT_EQ(cuda::FusedBiasSumRelu(PlanOf(Convolution(c, {"sum", "bias", "relu"})).conv),
            (Fused{{1, 0, 2}}));
  // A batch norm's scale and shift right after the convolution are folded into the weight and
  // the bias (one is made when there is none): one call all the same.
  for (const std::vector<std::string>& steps :
       std::vector<std::vector<std::string>>{{"bias", "scale", "relu"},
                                             {"bias", "shift", "relu"},
                                             {"scale", "shift", "relu"},
                                             {"bias", "scale", "shift", "sum", "relu"}}) {
    CudnnPlan plan = PlanOf(Convolution(c, steps));
    EXPECT_TRUE(plan.folded_weight.defined());
    EXPECT_EQ(plan.step_operands.front(), kFoldedBias);
    EXPECT_TRUE(cuda::FusedBiasSumRelu(plan.conv).has_value())
        << fmt::format("{}", fmt::join(steps, ", "));
  }
  for (const std::vector<std::string>& steps :
       std::vector<std::vector<std::string>>{{"bias"},
                                             {"relu"},
                                             {"sum", "relu"},
                                             {"bias", "relu", "sum"},
                                             {"bias", "relu", "scale"},
                                             {"bias", "relu6"}}) {
    EXPECT_EQ(cuda::FusedBiasSumRelu(PlanOf(Convolution(c, steps)).conv), std::nullopt)
        << fmt::format("{}", fmt::join(steps, ", "));
  }
}

// The folded weight and bias compute what the convolution, bias, scale and shift do (each
// checked against the interpreter); what is not right after the convolution, or a weight that
// is not a constant, is not folded.
TEST(CudnnPlan, AScaleAndShiftAfterTheConvolutionAreFoldedIntoItsWeightAndBias) {
  const Conv c{.x = {1, 6, 5, 4}, .out = 6, .pad = 1};
  for (const std::vector<std::string>& steps :
       std::vector<std::vector<std::string>>{{"bias", "scale", "shift", "relu"},
                                             {"scale", "shift", "sum", "relu"},
                                             {"shift", "scale"},
                                             {"bias", "scale", "relu", "shift"}}) {
    std::string d = RunsLikeTheInterpreter(Convolution(c, steps));
    EXPECT_NE(d.find("folded in"), std::string::npos) << d;
  }
  // Depthwise, with its grouped weight [3, 3, 1, K].
  RunsLikeTheInterpreter(Convolution({.x = {1, 6, 6, 5}, .out = 5, .pad = 1, .groups = 5},
                                     {"bias", "scale", "relu6"}));
  // After ReLU the scale stays a step.
  CudnnPlan after = PlanOf(Convolution(c, {"bias", "relu", "scale"}));
  EXPECT_FALSE(after.folded_weight.defined());
  EXPECT_EQ(after.conv.steps.size(), 3u);
  // A weight that is an input is not folded.
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 4, 4, 3}));
  ValueId v = AddOpCall(&g, "conv", "conv2d", {x, g.AddInput("w", F32({1, 1, 3, 2}))});
  g.AddOutput(AddOpCall(&g, "scale", "multiply", {v, g.AddConstant("s", RandomArray({2}, 4))}));
  CudnnPlan input = PlanOf(g);
  EXPECT_FALSE(input.folded_weight.defined());
  EXPECT_NE(RunsLikeTheInterpreter(g).find("(multiply)"), std::string::npos);
}

// What cuDNN's steps cannot run stays outside the composite, which keeps the convolution.
TEST(CudnnPlan, WhatTheStepsCannotRunStaysOutside) {
  for (const char* op : {"gelu", "sigmoid", "clip-1"}) {
    std::string d =
        RunsLikeTheInterpreter(Convolution({.x = {1, 5, 5, 3}, .pad = 1}, {"bias", op}));
    EXPECT_NE(d.find("(pad 1; bias) for %bias"), std::string::npos) << op << ": " << d;
  }
  // Matrix products are cuBLAS's.
  Graph mm;
  ValueId a = mm.AddInput("a", F32({4, 8}));
  mm.AddOutput(AddOpCall(&mm, "mm", "matmul", {a, mm.AddInput("b", F32({8, 3}))}));
  EXPECT_EQ(testing::CompositeOf(mm, CudnnBackend()->Patterns()), "");
}

TEST(CudnnPlan, DeclinesWithTheReason) {
  const LibraryBackend* dnnl = DnnlBackend();
  if (dnnl == nullptr) GTEST_SKIP() << BackendUnavailable("dnnl");
  // Composites made by oneDNN's patterns, which take what cuDNN does not.
  auto declined = [&](const Graph& g) {
    return testing::DeclineReason(g, dnnl->Patterns(),
                                  [](const Graph& f, const graph::Call& c) { PlanCudnn(f, c); });
  };
  EXPECT_NE(declined(Convolution({.x = {1, 5, 5, 3}}, {"bias", "gelu"}))
                .find(": GELU is not one of cuDNN's activations"),
            std::string::npos);
  EXPECT_NE(declined(Convolution({.x = {1, 5, 5, 3}}, {"clip-1"}))
                .find(": clip from -1 (cuDNN's clipped ReLU starts at 0)"),
            std::string::npos);
  Graph dense;
  ValueId x = dense.AddInput("x", F32({2, 8}));
  dense.AddOutput(
      AddOpCall(&dense, "dense", "dense", {x, dense.AddConstant("w", RandomArray({3, 8}, 1))}));
  EXPECT_NE(declined(dense).find(": cuDNN runs convolutions here, not dense"), std::string::npos);
  EXPECT_TRUE(CudnnBackend()->OnGpu());
  EXPECT_EQ(FindBackend("cudnn"), CudnnBackend());
  EXPECT_EQ(BackendUnavailable("cudnn"), "");
}

// A constant weight is packed once, into memory of its own, so its size is not the workspace's
// business; a weight computed at run time is packed into the workspace on every run.
TEST(CudnnPlan, ConstantWeightsAreMarkedToBePackedOnce) {
  EXPECT_TRUE(PlanOf(Convolution({.x = {1, 5, 5, 3}}, {"relu"})).conv.weight_constant);
  const int64_t channels = 2100;  // a 1x1 weight of 17.6 MB: over half the 32 MiB workspace
  Graph big = Convolution({.x = {1, 2, 2, channels}, .out = channels, .kernel = 1}, {});
  CudnnPlan plan = PlanOf(big);
  EXPECT_TRUE(plan.conv.weight_constant);
  EXPECT_GT(cuda::PackedFilterBytes(plan.conv), kGpuLibraryWorkspaceBytes / 2);
  // The same weights as an input (no pattern check, which would keep it out of the composite).
  auto run_time_weight = [](std::vector<int64_t> x, std::vector<int64_t> w) {
    Graph g;
    ValueId v = g.AddInput("x", F32(x));
    g.AddOutput(AddOpCall(&g, "conv", "conv2d", {v, g.AddInput("w", F32(w))}));
    return g;
  };
  const std::vector<graph::FusionPattern> unchecked = {
      {"cudnn.conv2d", graph::IsOp("conv2d", {graph::Wildcard(), graph::Wildcard()})}};
  auto plan_of = [](const Graph& f, const graph::Call& c) { return PlanCudnn(f, c); };
  EXPECT_NE(testing::DeclineReason(run_time_weight({1, 2, 2, channels}, {1, 1, channels, channels}),
                                   unchecked, plan_of)
                .find(": a weight of 17640192 bytes that is not a constant (the library workspace "
                      "holds up to 16777216)"),
            std::string::npos);
  EXPECT_EQ(testing::DeclineReason(run_time_weight({1, 4, 4, 8}, {1, 1, 8, 5}), unchecked, plan_of),
            "not declined");
  EXPECT_FALSE(PlanOf(run_time_weight({1, 4, 4, 8}, {1, 1, 8, 5})).conv.weight_constant);
}

// Running needs a GPU: without one the kernel says why, naming cuDNN or the driver.
TEST(CudnnPlan, RunningWithoutAGpuSaysWhy) {
  std::string why;
  if (cuda::CudaDriverAvailable(&why)) GTEST_SKIP() << "this host has a GPU";
  Graph g = Convolution({.x = {1, 5, 5, 3}}, {"bias"});
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, CudnnBackend()->Patterns());
  int built = 0;
  for (const graph::Call& c : r.graph.calls()) {
    if (!c.attrs.Has(graph::kCodegenAttr)) continue;
    std::unique_ptr<LibraryKernel> k = CudnnBackend()->Build(r.graph, c, {});
    ++built;
    try {
      k->Run({nullptr, nullptr, nullptr}, nullptr);
      ADD_FAILURE() << "ran without a GPU";
    } catch (const cuda::CudaUnavailable& e) {
      EXPECT_EQ(std::string(e.what()), why);
    }
  }
  EXPECT_EQ(built, 1);
}

}  // namespace
}  // namespace tirtune::offload
