// Direct convolutions in channel-last layouts (conv1d NLC, conv2d NHWC, conv3d NDHWC) with
// stride, padding, dilation and groups, built by one rank-generic routine, and their workloads.
#include "tirtune/te/convolution.h"

#include <fmt/format.h>

#include "shape_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/create_prim_func.h"
#include "tirtune/te/layout.h"
#include "workload_families.h"

namespace tirtune::te {
namespace {

// Names of the output's spatial axes and of the kernel's reduce axes, by spatial rank.
std::vector<std::string> SpatialAxisNames(int rank) {
  if (rank == 1) return {"l"};
  if (rank == 2) return {"h", "w"};
  return {"d", "h", "w"};
}

// data[N, S_1..S_r, CI] * weight[K_1..K_r, CI / groups, CO] -> out[N, O_1..O_r, CO], as in
// MetaSchedule's te_workload definitions (reduce axes: kernel taps, then input channels).
Tensor ConvNd(const Tensor& data, const Tensor& weight, const ConvParams& p, int rank,
              std::string name) {
  const char* op = "convolution";
  CheckRank(data, rank + 2, op);
  CheckRank(weight, rank + 2, op);
  int64_t in_channels = data.dim(rank + 1);
  int64_t out_channels = weight.dim(rank + 1);
  if (p.stride < 1 || p.dilation < 1 || p.groups < 1 || p.pad < 0) {
    TT_USER_ERROR("{}: stride, dilation and groups must be positive and pad non-negative", name);
  }
  if (in_channels % p.groups != 0 || out_channels % p.groups != 0) {
    TT_USER_ERROR("{}: {} input and {} output channels are not divisible by {} groups", name,
                  in_channels, out_channels, p.groups);
  }
  int64_t group_in = in_channels / p.groups;
  int64_t group_out = out_channels / p.groups;
  if (weight.dim(rank) != group_in) {
    TT_USER_ERROR("{}: weight {} has {} input channels per group, expected {}", name, weight.name(),
                  weight.dim(rank), group_in);
  }

  std::vector<std::string> spatial_names = SpatialAxisNames(rank);
  std::vector<Expr> shape = {data.dim(0)};
  std::vector<std::string> axis_names = {"n"};
  std::vector<IterVar> taps;
  for (int i = 0; i < rank; ++i) {
    int64_t out = ConvOutputExtent(data.dim(i + 1), weight.dim(i), p);
    if (out < 1) {
      TT_USER_ERROR("{}: kernel {} with dilation {} does not fit input extent {} padded by {}",
                    name, weight.dim(i), p.dilation, data.dim(i + 1), p.pad);
    }
    shape.push_back(out);
    axis_names.push_back(spatial_names[i]);
    taps.push_back(ReduceAxis(weight.dim(i), "r" + spatial_names[i]));
  }
  shape.push_back(out_channels);
  axis_names.push_back("co");
  IterVar rc = ReduceAxis(group_in, "rc");
  std::vector<IterVar> reduce_axes = taps;
  reduce_axes.push_back(rc);

  Tensor padded = data;
  if (p.pad > 0) {
    std::vector<int64_t> pads(rank + 2, p.pad);
    pads.front() = pads.back() = 0;
    padded = Pad(data, pads, pads);
  }
  return Compute(
      shape, axis_names,
      [&](const std::vector<Var>& v) {
        const Var& co = v[rank + 1];
        std::vector<Expr> in_index = {v[0]};
        std::vector<Expr> w_index;
        for (int i = 0; i < rank; ++i) {
          in_index.push_back(v[i + 1] * p.stride + taps[i].var * p.dilation);
          w_index.push_back(taps[i].var);
        }
        // The input channels of co's group; the group term is dropped when there is one group.
        in_index.push_back(p.groups == 1 ? Expr(rc.var)
                                         : FloorDiv(co, group_out) * group_in + rc.var);
        w_index.push_back(rc.var);
        w_index.push_back(co);
        return Sum(padded(in_index) * weight(w_index), reduce_axes);
      },
      std::move(name));
}

double ConvFlops(const std::vector<int64_t>& out_shape, int64_t taps, int64_t group_in) {
  double flops = 2.0 * static_cast<double>(taps * group_in);
  for (int64_t e : out_shape) flops *= static_cast<double>(e);
  return flops;
}

// args: N, S_1..S_rank, CI, CO, kernel, stride, pad[, dilation, groups].
struct ConvArgs {
  std::vector<int64_t> data_shape;  // N, S..., CI
  int64_t out_channels, kernel;
  ConvParams params;
};

ConvArgs ParseConvArgs(const std::vector<int64_t>& s, int rank) {
  ConvArgs a;
  a.data_shape.assign(s.begin(), s.begin() + rank + 2);
  size_t i = rank + 2;
  a.out_channels = s[i];
  a.kernel = s[i + 1];
  a.params = ConvParams{.stride = s[i + 2],
                        .pad = s[i + 3],
                        .dilation = ArgOr(s, i + 4, 1),
                        .groups = ArgOr(s, i + 5, 1)};
  return a;
}

PrimFunc BuildConv(const std::vector<int64_t>& s, int rank, const std::string& func_name) {
  ConvArgs a = ParseConvArgs(s, rank);
  int64_t in_channels = a.data_shape.back();
  if (in_channels % a.params.groups != 0) {
    TT_USER_ERROR("{}: {} input channels are not divisible by {} groups", func_name, in_channels,
                  a.params.groups);
  }
  Tensor data = Input(a.data_shape, "data");
  std::vector<int64_t> weight_shape(rank, a.kernel);
  weight_shape.push_back(in_channels / a.params.groups);
  weight_shape.push_back(a.out_channels);
  Tensor weight = Input(weight_shape, "weight");
  const char* out_names[] = {"conv1d_nlc", "conv2d_nhwc", "conv3d_ndhwc"};
  Tensor out = ConvNd(data, weight, a.params, rank, out_names[rank - 1]);
  return CreatePrimFunc({data, weight, out}, func_name);
}

double CountConvFlops(const std::vector<int64_t>& s, int rank) {
  ConvArgs a = ParseConvArgs(s, rank);
  std::vector<int64_t> out_shape = {a.data_shape[0], a.out_channels};
  int64_t taps = 1;
  for (int i = 0; i < rank; ++i) {
    out_shape.push_back(ConvOutputExtent(a.data_shape[i + 1], a.kernel, a.params));
    taps *= a.kernel;
  }
  return ConvFlops(out_shape, taps, a.data_shape.back() / a.params.groups);
}

WorkloadDef ConvWorkload(int rank, std::string name, std::string params, std::string summary,
                         std::vector<std::vector<int64_t>> benchmark_shapes,
                         std::vector<int64_t> small_shape) {
  size_t min_args = rank + 6;
  return WorkloadDef{
      .name = name,
      .params = std::move(params),
      .summary = std::move(summary),
      .min_args = min_args,
      .max_args = min_args + 2,
      .build = [rank, name](const std::vector<int64_t>& s) { return BuildConv(s, rank, name); },
      .flops = [rank](const std::vector<int64_t>& s) { return CountConvFlops(s, rank); },
      .benchmark_shapes = std::move(benchmark_shapes),
      .small_shape = std::move(small_shape),
  };
}

}  // namespace

int64_t ConvOutputExtent(int64_t in, int64_t kernel, const ConvParams& p) {
  int64_t span = in + 2 * p.pad - p.dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / p.stride + 1;
}

Tensor Conv1dNLC(const Tensor& data, const Tensor& weight, const ConvParams& p, std::string name) {
  return ConvNd(data, weight, p, 1, std::move(name));
}

Tensor Conv2dNHWC(const Tensor& data, const Tensor& weight, const ConvParams& p, std::string name) {
  return ConvNd(data, weight, p, 2, std::move(name));
}

Tensor Conv3dNDHWC(const Tensor& data, const Tensor& weight, const ConvParams& p,
                   std::string name) {
  return ConvNd(data, weight, p, 3, std::move(name));
}

std::vector<WorkloadDef> ConvolutionWorkloads() {
  std::vector<WorkloadDef> defs;
  defs.push_back(ConvWorkload(1, "conv1d", "N,L,CI,CO,kernel,stride,pad,dilation,groups",
                              "conv1d NLC, weight [kernel, CI/groups, CO]",
                              {{1, 256, 64, 128, 3, 2, 1},
                               {1, 128, 128, 256, 1, 2, 0},
                               {1, 64, 256, 256, 5, 1, 2},
                               {1, 32, 512, 512, 3, 1, 1}},
                              {1, 9, 4, 6, 3, 2, 1}));
  // The grouped (GRP) and dilated (DIL) rows of BENCHMARKS.md are conv2d with those arguments.
  defs.push_back(ConvWorkload(2, "conv2d", "N,H,W,CI,CO,kernel,stride,pad,dilation,groups",
                              "conv2d NHWC, weight [kernel, kernel, CI/groups, CO]",
                              {{1, 224, 224, 3, 64, 7, 2, 3},
                               {1, 56, 56, 64, 64, 1, 1, 0},
                               {1, 14, 14, 256, 256, 3, 1, 1},
                               {1, 7, 7, 512, 512, 3, 1, 1},
                               {1, 56, 56, 64, 128, 3, 2, 1, 1, 4},
                               {1, 14, 14, 256, 256, 3, 1, 1, 1, 4},
                               {1, 56, 56, 64, 64, 1, 1, 0, 2},
                               {1, 14, 14, 256, 256, 3, 1, 1, 2}},
                              {1, 7, 6, 4, 6, 3, 2, 1}));
  defs.push_back(
      ConvWorkload(3, "conv3d", "N,D,H,W,CI,CO,kernel,stride,pad,dilation,groups",
                   "conv3d NDHWC, weight [kernel, kernel, kernel, CI/groups, CO]",
                   {{1, 16, 56, 56, 64, 64, 1, 1, 0}, {1, 16, 14, 14, 256, 256, 3, 1, 1}},
                   {1, 4, 5, 5, 3, 4, 3, 1, 1}));
  return defs;
}

}  // namespace tirtune::te
