// Max, average and global average pooling in NHWC, and their workloads.
#include "tirtune/te/pooling.h"

#include "shape_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/create_prim_func.h"
#include "tirtune/te/layout.h"
#include "workload_families.h"

namespace tirtune::te {
namespace {

int64_t PoolOutputExtent(int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
  int64_t span = in + 2 * pad - kernel;
  return span < 0 ? 0 : span / stride + 1;
}

// The output extents, after checking that the window fits the padded input.
std::pair<int64_t, int64_t> PoolOutputShape(const Tensor& data, int64_t kernel, int64_t stride,
                                            int64_t pad, const char* op) {
  CheckRank(data, 4, op);
  if (pad >= kernel) TT_USER_ERROR("{}: padding {} not below kernel size {}", op, pad, kernel);
  int64_t out_h = PoolOutputExtent(data.dim(1), kernel, stride, pad);
  int64_t out_w = PoolOutputExtent(data.dim(2), kernel, stride, pad);
  if (out_h < 1 || out_w < 1) TT_USER_ERROR("{}: the window does not fit the padded input", op);
  return {out_h, out_w};
}

// Sum or max of each window of the input padded with `pad_value`.
Tensor PoolReduce(const Tensor& data, int64_t kernel, int64_t stride, int64_t pad, ReduceKind kind,
                  double pad_value, const char* op, std::string name) {
  auto [out_h, out_w] = PoolOutputShape(data, kernel, stride, pad, op);
  Tensor padded = pad > 0 ? Pad(data, {0, pad, pad, 0}, {0, pad, pad, 0}, pad_value) : data;
  IterVar rh = ReduceAxis(kernel, "rh");
  IterVar rw = ReduceAxis(kernel, "rw");
  return Compute(
      {data.dim(0), out_h, out_w, data.dim(3)}, {"n", "h", "w", "c"},
      [&](const std::vector<Var>& v) {
        Expr value = padded(v[0], v[1] * stride + rh.var, v[2] * stride + rw.var, v[3]);
        return kind == ReduceKind::kMax ? MaxReduce(value, {rh, rw}) : Sum(value, {rh, rw});
      },
      std::move(name));
}

}  // namespace

Tensor MaxPool2dNHWC(const Tensor& data, int64_t kernel, int64_t stride, int64_t pad,
                     std::string name) {
  // Padding holds the lowest value so that it never wins the max.
  Expr lowest = MinValue(data.dtype());
  if (!lowest.as<FloatImmNode>()) TT_USER_ERROR("max_pool2d: {} is not a float", data.name());
  return PoolReduce(data, kernel, stride, pad, ReduceKind::kMax, lowest.as<FloatImmNode>()->value,
                    "max_pool2d", std::move(name));
}

Tensor AvgPool2dNHWC(const Tensor& data, int64_t kernel, int64_t stride, int64_t pad,
                     std::string name) {
  Tensor sum =
      PoolReduce(data, kernel, stride, pad, ReduceKind::kSum, 0.0, "avg_pool2d", "pool_sum");
  int64_t in_h = data.dim(1), in_w = data.dim(2);
  DataType t = data.dtype();
  return Compute(
      sum.shape(), {"n", "h", "w", "c"},
      [&](const std::vector<Var>& v) {
        if (pad == 0) return sum(AsIndices(v)) / MakeConst(t, kernel * kernel);
        // Only the part of the window inside the input counts.
        auto covered = [&](const Var& o, int64_t extent) {
          return Min(o * stride + (kernel - pad), Expr(extent)) - Max(o * stride - pad, Expr(0));
        };
        Expr count = covered(v[1], in_h) * covered(v[2], in_w);
        return sum(AsIndices(v)) / Cast(t, count);
      },
      std::move(name));
}

Tensor GlobalAvgPool2dNHWC(const Tensor& data, std::string name) {
  CheckRank(data, 4, "global_avg_pool2d");
  IterVar rh = ReduceAxis(data.dim(1), "rh");
  IterVar rw = ReduceAxis(data.dim(2), "rw");
  Tensor sum = Compute(
      {data.dim(0), 1, 1, data.dim(3)}, {"n", "h", "w", "c"},
      [&](const std::vector<Var>& v) {
        return Sum(data(v[0], rh.var, rw.var, v[3]), {rh, rw});
      },
      "adaptive_pool_sum");
  Expr count = MakeConst(data.dtype(), static_cast<double>(data.dim(1) * data.dim(2)));
  return Compute(
      sum.shape(), {"n", "h", "w", "c"},
      [&](const std::vector<Var>& v) { return sum(AsIndices(v)) / count; }, std::move(name));
}

std::vector<WorkloadDef> PoolingWorkloads() {
  std::vector<WorkloadDef> defs;
  auto window_flops = [](const std::vector<int64_t>& s) {
    double out = static_cast<double>(s[0]) * PoolOutputExtent(s[1], s[4], s[5], s[6]) *
                 PoolOutputExtent(s[2], s[4], s[5], s[6]) * s[3];
    return out * s[4] * s[4];
  };
  defs.push_back(WorkloadDef{
      .name = "max_pool2d",
      .params = "N,H,W,C,kernel,stride,pad",
      .summary = "max pooling over kernel x kernel windows (NHWC)",
      .min_args = 7,
      .max_args = 7,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            return CreatePrimFunc({data, MaxPool2dNHWC(data, s[4], s[5], s[6])}, "max_pool2d");
          },
      .flops = window_flops,
      .benchmark_shapes = {},
      .small_shape = {1, 7, 8, 3, 3, 2, 1},
  });
  defs.push_back(WorkloadDef{
      .name = "avg_pool2d",
      .params = "N,H,W,C,kernel,stride,pad",
      .summary = "average pooling, padding not counted (NHWC)",
      .min_args = 7,
      .max_args = 7,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            return CreatePrimFunc({data, AvgPool2dNHWC(data, s[4], s[5], s[6])}, "avg_pool2d");
          },
      .flops = window_flops,
      .benchmark_shapes = {},
      .small_shape = {1, 7, 8, 3, 3, 2, 1},
  });
  defs.push_back(WorkloadDef{
      .name = "global_avg_pool2d",
      .params = "N,H,W,C",
      .summary = "mean over H and W, output [N,1,1,C]",
      .min_args = 4,
      .max_args = 4,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            return CreatePrimFunc({data, GlobalAvgPool2dNHWC(data)}, "global_avg_pool2d");
          },
      .flops = [](const std::vector<int64_t>& s) { return 1.0 * s[0] * s[1] * s[2] * s[3]; },
      .benchmark_shapes = {},
      .small_shape = {2, 3, 4, 5},
  });
  return defs;
}

}  // namespace tirtune::te
