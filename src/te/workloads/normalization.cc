// Batch norm (inference), layer norm, softmax and the 2-norm, and their workloads.
#include "tirtune/te/normalization.h"

#include "shape_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/create_prim_func.h"
#include "workload_families.h"

namespace tirtune::te {

Tensor BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& moving_mean, const Tensor& moving_var, double epsilon,
                          std::string name) {
  const char* op = "batch_norm";
  int channel = x.ndim() - 1;
  for (const Tensor* t : {&gamma, &beta, &moving_mean, &moving_var}) {
    CheckRank(*t, 1, op);
    CheckDimsMatch(x, channel, *t, 0, op);
  }
  DataType t = x.dtype();
  return Compute(
      x.shape(),
      [&](const std::vector<Var>& v) {
        const Var& c = v.back();
        Expr normalized =
            (x(AsIndices(v)) - moving_mean(c)) / Sqrt(moving_var(c) + MakeConst(t, epsilon));
        return normalized * gamma(c) + beta(c);
      },
      std::move(name));
}

Tensor LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double epsilon,
                 std::string name) {
  const char* op = "layer_norm";
  CheckRank(x, 2, op);
  CheckRank(gamma, 1, op);
  CheckRank(beta, 1, op);
  CheckDimsMatch(x, 1, gamma, 0, op);
  CheckDimsMatch(x, 1, beta, 0, op);
  int64_t rows = x.dim(0), cols = x.dim(1);
  DataType t = x.dtype();
  Expr count = MakeConst(t, static_cast<double>(cols));
  // Two passes (mean, then the mean of squared deviations): more accurate than E[x^2] - E[x]^2,
  // and expressible without tuple reductions.
  IterVar k = ReduceAxis(cols, "k");
  Tensor sum = Compute(
      {rows}, {"i"}, [&](const std::vector<Var>& v) { return Sum(x(v[0], k.var), {k}); },
      name + "_sum");
  IterVar k2 = ReduceAxis(cols, "k");
  Tensor square_sum = Compute(
      {rows}, {"i"},
      [&](const std::vector<Var>& v) {
        Expr deviation = x(v[0], k2.var) - sum(v[0]) / count;
        return Sum(deviation * deviation, {k2});
      },
      name + "_var_sum");
  return Compute(
      {rows, cols}, {"i", "j"},
      [&](const std::vector<Var>& v) {
        Expr deviation = x(v[0], v[1]) - sum(v[0]) / count;
        Expr stddev = Sqrt(square_sum(v[0]) / count + MakeConst(t, epsilon));
        return deviation / stddev * gamma(v[1]) + beta(v[1]);
      },
      std::move(name));
}

Tensor Softmax(const Tensor& x, std::string name) {
  CheckRank(x, 2, "softmax");
  int64_t rows = x.dim(0), cols = x.dim(1);
  IterVar k = ReduceAxis(cols, "k");
  Tensor max_elem = Compute(
      {rows}, {"i0"}, [&](const std::vector<Var>& v) { return MaxReduce(x(v[0], k.var), {k}); },
      "T_softmax_maxelem");
  Tensor exp = Compute(
      {rows, cols}, {"i0", "i1"},
      [&](const std::vector<Var>& v) { return Exp(x(v[0], v[1]) - max_elem(v[0])); },
      "T_softmax_exp");
  IterVar k2 = ReduceAxis(cols, "k");
  Tensor exp_sum = Compute(
      {rows}, {"i0"}, [&](const std::vector<Var>& v) { return Sum(exp(v[0], k2.var), {k2}); },
      "T_softmax_expsum");
  return Compute(
      {rows, cols}, {"i0", "i1"},
      [&](const std::vector<Var>& v) { return exp(v[0], v[1]) / exp_sum(v[0]); }, std::move(name));
}

Tensor Norm2(const Tensor& a, std::string name) {
  CheckRank(a, 3, "norm");
  IterVar i = ReduceAxis(a.dim(1), "i");
  IterVar j = ReduceAxis(a.dim(2), "j");
  Tensor square_sum = Compute(
      {a.dim(0)}, {"b"},
      [&](const std::vector<Var>& v) {
        return Sum(a(v[0], i.var, j.var) * a(v[0], i.var, j.var), {i, j});
      },
      "C");
  return Compute(
      {a.dim(0)}, {"b"}, [&](const std::vector<Var>& v) { return Sqrt(square_sum(v[0])); },
      std::move(name));
}

std::vector<WorkloadDef> NormalizationWorkloads() {
  // FLOPs count the arithmetic per element; an intrinsic call (exp, sqrt) counts one.
  std::vector<WorkloadDef> defs;
  defs.push_back(WorkloadDef{
      .name = "norm",
      .params = "B,M,N",
      .summary = "2-norm D[b] = sqrt(sum_ij A[b,i,j]^2)",
      .min_args = 3,
      .max_args = 3,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor a = Input({s[0], s[1], s[2]}, "A");
            return CreatePrimFunc({a, Norm2(a)}, "norm");
          },
      .flops = [](const std::vector<int64_t>& s) { return 2.0 * s[0] * s[1] * s[2] + s[0]; },
      .benchmark_shapes = {{1, 256, 256}, {1, 1024, 1024}},
      .small_shape = {2, 5, 6},
  });
  defs.push_back(WorkloadDef{
      .name = "softmax",
      .params = "M,N",
      .summary = "softmax of A[M,N] along N",
      .min_args = 2,
      .max_args = 2,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor a = Input({s[0], s[1]}, "A");
            return CreatePrimFunc({a, Softmax(a)}, "softmax");
          },
      // max, subtract, exp, add, divide per element.
      .flops = [](const std::vector<int64_t>& s) { return 5.0 * s[0] * s[1]; },
      .benchmark_shapes = {{256, 256}, {1024, 1024}},
      .small_shape = {4, 7},
  });
  defs.push_back(WorkloadDef{
      .name = "batch_norm",
      .params = "N,H,W,C",
      .summary = "inference batch norm (x - mean) / sqrt(var + 1e-5) * gamma + beta (NHWC)",
      .min_args = 4,
      .max_args = 4,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor x = Input({s[0], s[1], s[2], s[3]}, "data");
            Tensor gamma = Input({s[3]}, "gamma");
            Tensor beta = Input({s[3]}, "beta");
            Tensor mean = Input({s[3]}, "moving_mean");
            Tensor var = Input({s[3]}, "moving_var");
            return CreatePrimFunc(
                {x, gamma, beta, mean, var, BatchNormInference(x, gamma, beta, mean, var)},
                "batch_norm");
          },
      // subtract, add, sqrt, divide, multiply, add per element.
      .flops = [](const std::vector<int64_t>& s) { return 6.0 * s[0] * s[1] * s[2] * s[3]; },
      .benchmark_shapes = {},
      .small_shape = {1, 3, 4, 5},
  });
  defs.push_back(WorkloadDef{
      .name = "layer_norm",
      .params = "M,N",
      .summary = "layer norm of each row of A[M,N], scaled by gamma[N], shifted by beta[N]",
      .min_args = 2,
      .max_args = 2,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor x = Input({s[0], s[1]}, "data");
            Tensor gamma = Input({s[1]}, "gamma");
            Tensor beta = Input({s[1]}, "beta");
            return CreatePrimFunc({x, gamma, beta, LayerNorm(x, gamma, beta)}, "layer_norm");
          },
      // sum; deviation, square, add; deviation, divide, scale, shift per element.
      .flops = [](const std::vector<int64_t>& s) { return 8.0 * s[0] * s[1]; },
      .benchmark_shapes = {},
      .small_shape = {4, 7},
  });
  return defs;
}

}  // namespace tirtune::te
