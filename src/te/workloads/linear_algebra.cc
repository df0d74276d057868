// Matmul, batch matmul and dense, and their workloads (gemm, batch_matmul, dense).
#include "tirtune/te/linear_algebra.h"

#include "shape_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/te/create_prim_func.h"
#include "workload_families.h"

namespace tirtune::te {

Tensor Matmul(const Tensor& a, const Tensor& b, std::string name) {
  CheckRank(a, 2, "matmul");
  CheckRank(b, 2, "matmul");
  CheckDimsMatch(a, 1, b, 0, "matmul");
  IterVar k = ReduceAxis(a.dim(1), "k");
  return Compute(
      {a.dim(0), b.dim(1)}, {"i", "j"},
      [&](const std::vector<Var>& v) { return Sum(a(v[0], k.var) * b(k.var, v[1]), {k}); },
      std::move(name));
}

Tensor BatchMatmul(const Tensor& a, const Tensor& b, std::string name) {
  CheckRank(a, 3, "batch_matmul");
  CheckRank(b, 3, "batch_matmul");
  CheckDimsMatch(a, 0, b, 0, "batch_matmul");
  CheckDimsMatch(a, 2, b, 1, "batch_matmul");
  IterVar k = ReduceAxis(a.dim(2), "k");
  return Compute(
      {a.dim(0), a.dim(1), b.dim(2)}, {"b", "i", "j"},
      [&](const std::vector<Var>& v) {
        return Sum(a(v[0], v[1], k.var) * b(v[0], k.var, v[2]), {k});
      },
      std::move(name));
}

Tensor Dense(const Tensor& data, const Tensor& weight, std::string name) {
  CheckRank(data, 2, "dense");
  CheckRank(weight, 2, "dense");
  CheckDimsMatch(data, 1, weight, 1, "dense");
  IterVar k = ReduceAxis(data.dim(1), "k");
  return Compute(
      {data.dim(0), weight.dim(0)}, {"i", "j"},
      [&](const std::vector<Var>& v) { return Sum(data(v[0], k.var) * weight(v[1], k.var), {k}); },
      std::move(name));
}

std::vector<WorkloadDef> LinearAlgebraWorkloads() {
  std::vector<WorkloadDef> defs;
  defs.push_back(WorkloadDef{
      .name = "gemm",
      .params = "M,N,K",
      .summary = "matmul C[M,N] = A[M,K] * B[K,N]",
      .min_args = 3,
      .max_args = 3,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor a = Input({s[0], s[2]}, "A");
            Tensor b = Input({s[2], s[1]}, "B");
            return CreatePrimFunc({a, b, Matmul(a, b)}, "gemm");
          },
      .flops = [](const std::vector<int64_t>& s) { return 2.0 * s[0] * s[1] * s[2]; },
      .benchmark_shapes = {{256, 256, 256},
                           {512, 512, 512},
                           {1024, 1024, 1024},
                           {2048, 2048, 2048},
                           {128, 768, 768},
                           {128, 3072, 768},
                           {128, 768, 3072}},
      .small_shape = {8, 12, 16},
  });
  defs.push_back(WorkloadDef{
      .name = "batch_matmul",
      .params = "B,N,M,K",
      .summary = "batch matmul C[B,N,M] = A[B,N,K] * B[B,K,M]",
      .min_args = 4,
      .max_args = 4,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor a = Input({s[0], s[1], s[3]}, "A");
            Tensor b = Input({s[0], s[3], s[2]}, "B");
            return CreatePrimFunc({a, b, BatchMatmul(a, b)}, "batch_matmul");
          },
      .flops = [](const std::vector<int64_t>& s) { return 2.0 * s[0] * s[1] * s[2] * s[3]; },
      .benchmark_shapes =
          {{1, 128, 128, 128}, {1, 512, 32, 512}, {1, 512, 512, 512}, {1, 1024, 1024, 1024}},
      .small_shape = {2, 8, 6, 4},
  });
  defs.push_back(WorkloadDef{
      .name = "dense",
      .params = "M,N,K",
      .summary = "fully connected Y[M,N] = X[M,K] * W[N,K]^T",
      .min_args = 3,
      .max_args = 3,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor x = Input({s[0], s[2]}, "data");
            Tensor w = Input({s[1], s[2]}, "weight");
            return CreatePrimFunc({x, w, Dense(x, w)}, "dense");
          },
      .flops = [](const std::vector<int64_t>& s) { return 2.0 * s[0] * s[1] * s[2]; },
      .benchmark_shapes = {},
      .small_shape = {4, 10, 12},
  });
  return defs;
}

}  // namespace tirtune::te
