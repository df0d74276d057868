// The fused subgraphs of the benchmark suite, as Ansor defines them: CBR (conv2d + bias +
// batch-norm scale/shift + ReLU), TBG (transpose Q and V, batch matmul) and MBG (matmul + bias +
// GELU).
#include "tirtune/ir/op.h"
#include "tirtune/te/convolution.h"
#include "tirtune/te/create_prim_func.h"
#include "tirtune/te/elementwise.h"
#include "tirtune/te/linear_algebra.h"
#include "workload_families.h"

namespace tirtune::te {
namespace {

// out[n, h, w, c] = x[n, h, w, c] `op` per_channel[c].
Tensor PerChannel(const Tensor& x, const Tensor& per_channel,
                  const std::function<Expr(Expr, Expr)>& op, std::string name) {
  return Compute(
      x.shape(), {"n", "h", "w", "c"},
      [&](const std::vector<Var>& v) { return op(x(AsIndices(v)), per_channel(v[3])); },
      std::move(name));
}

PrimFunc BuildConvBiasBnRelu(const std::vector<int64_t>& s) {
  int64_t n = s[0], h = s[1], w = s[2], ci = s[3], co = s[4], kernel = s[5];
  Tensor data = Input({n, h, w, ci}, "data");
  Tensor weight = Input({kernel, kernel, ci, co}, "kernel");
  Tensor bias = Input({co}, "bias");
  Tensor bn_scale = Input({co}, "bn_scale");
  Tensor bn_offset = Input({co}, "bn_offset");
  Tensor conv = Conv2dNHWC(data, weight, ConvParams{.stride = s[6], .pad = s[7]});
  Tensor biased = PerChannel(
      conv, bias, [](Expr x, Expr b) { return x + b; }, "bias_add");
  Tensor scaled = PerChannel(
      biased, bn_scale, [](Expr x, Expr b) { return x * b; }, "bn_mul");
  Tensor shifted = PerChannel(
      scaled, bn_offset, [](Expr x, Expr b) { return x + b; }, "bn_add");
  return CreatePrimFunc({data, weight, bias, bn_scale, bn_offset, Relu(shifted)}, "cbr");
}

PrimFunc BuildTransposeBatchMatmul(const std::vector<int64_t>& s) {
  int64_t batch = s[0], seq = s[1], heads = s[2], dim = s[3];
  Tensor query = Input({batch, seq, heads, dim}, "query");
  Tensor value = Input({batch, seq, heads, dim}, "value");
  Tensor query_t = Compute(
      {batch, heads, seq, dim}, {"b", "h", "l", "d"},
      [&](const std::vector<Var>& v) { return query(v[0], v[2], v[1], v[3]); }, "query_T");
  Tensor value_t = Compute(
      {batch, heads, dim, seq}, {"b", "h", "d", "l"},
      [&](const std::vector<Var>& v) { return value(v[0], v[3], v[1], v[2]); }, "value_T");
  IterVar k = ReduceAxis(dim, "k");
  Tensor out = Compute(
      {batch, heads, seq, seq}, {"b", "h", "i", "j"},
      [&](const std::vector<Var>& v) {
        return Sum(query_t(v[0], v[1], v[2], k.var) * value_t(v[0], v[1], k.var, v[3]), {k});
      },
      "C");
  return CreatePrimFunc({query, value, out}, "tbg");
}

PrimFunc BuildMatmulBiasGelu(const std::vector<int64_t>& s) {
  int64_t m = s[0], n = s[1], k = s[2];
  Tensor a = Input({m, k}, "A");
  Tensor b = Input({k, n}, "B");
  Tensor bias = Input({n}, "bias");
  Tensor product = Matmul(a, b, "T_matmul");
  return CreatePrimFunc({a, b, bias, Gelu(BiasAdd(product, bias))}, "mbg");
}

}  // namespace

std::vector<WorkloadDef> SubgraphWorkloads() {
  std::vector<WorkloadDef> defs;
  defs.push_back(WorkloadDef{
      .name = "cbr",
      .params = "N,H,W,CI,CO,kernel,stride,pad",
      .summary = "conv2d NHWC + bias + batch-norm scale/shift + ReLU",
      .min_args = 8,
      .max_args = 8,
      .build = BuildConvBiasBnRelu,
      .flops =
          [](const std::vector<int64_t>& s) {
            ConvParams p{.stride = s[6], .pad = s[7]};
            double out = static_cast<double>(s[0]) * ConvOutputExtent(s[1], s[5], p) *
                         ConvOutputExtent(s[2], s[5], p) * s[4];
            return out * (2.0 * s[5] * s[5] * s[3] + 4);
          },
      .benchmark_shapes = {{1, 56, 56, 64, 128, 3, 2, 1}, {1, 7, 7, 512, 512, 3, 1, 1}},
      .small_shape = {1, 6, 7, 3, 4, 3, 2, 1},
  });
  defs.push_back(WorkloadDef{
      .name = "tbg",
      .params = "batch,seq,heads,dim",
      .summary = "transpose query and value to (batch, heads, ...), then batch matmul",
      .min_args = 4,
      .max_args = 4,
      .build = BuildTransposeBatchMatmul,
      .flops = [](const std::vector<int64_t>& s) { return 2.0 * s[0] * s[2] * s[1] * s[1] * s[3]; },
      .benchmark_shapes = {{1, 128, 12, 64}, {1, 128, 16, 64}},
      .small_shape = {2, 5, 3, 4},
  });
  defs.push_back(WorkloadDef{
      .name = "mbg",
      .params = "M,N,K",
      .summary = "matmul A[M,K] * B[K,N] + bias[N], then exact (erf) GELU",
      .min_args = 3,
      .max_args = 3,
      .build = BuildMatmulBiasGelu,
      // bias add 1 and GELU 5 operations per output element.
      .flops =
          [](const std::vector<int64_t>& s) {
            return 2.0 * s[0] * s[1] * s[2] + 6.0 * s[0] * s[1];
          },
      .benchmark_shapes = {{128, 3072, 768}},
      .small_shape = {4, 6, 8},
  });
  return defs;
}

}  // namespace tirtune::te
