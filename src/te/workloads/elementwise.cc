// Element-wise operators (arithmetic, activations, bias addition) and their NHWC workloads.
#include "tirtune/te/elementwise.h"

#include "shape_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/create_prim_func.h"
#include "workload_families.h"

namespace tirtune::te {
namespace {

// out[i...] = f(x[i...]).
Tensor Map(const Tensor& x, const std::function<Expr(Expr)>& f, std::string name) {
  return Compute(
      x.shape(), [&](const std::vector<Var>& v) { return f(x(AsIndices(v))); }, std::move(name));
}

// out[i...] = f(a[i...], b[i...]) for two tensors of one shape.
Tensor Zip(const Tensor& a, const Tensor& b, const std::function<Expr(Expr, Expr)>& f,
           std::string name) {
  CheckRank(b, a.ndim(), name.c_str());
  for (int d = 0; d < a.ndim(); ++d) CheckDimsMatch(a, d, b, d, name.c_str());
  return Compute(
      a.shape(), [&](const std::vector<Var>& v) { return f(a(AsIndices(v)), b(AsIndices(v))); },
      std::move(name));
}

}  // namespace

Tensor Add(const Tensor& a, const Tensor& b, std::string name) {
  return Zip(
      a, b, [](Expr x, Expr y) { return x + y; }, std::move(name));
}

Tensor Multiply(const Tensor& a, const Tensor& b, std::string name) {
  return Zip(
      a, b, [](Expr x, Expr y) { return x * y; }, std::move(name));
}

Tensor Relu(const Tensor& x, std::string name) {
  DataType t = x.dtype();
  return Map(
      x, [t](Expr e) { return Max(e, MakeConst(t, 0)); }, std::move(name));
}

Tensor Gelu(const Tensor& x, std::string name) {
  return Map(
      x, [](Expr e) { return e * 0.5f * (1.0f + Erf(e * 0.70710678118654752f)); }, std::move(name));
}

Tensor Clip(const Tensor& x, double lo, double hi, std::string name) {
  if (lo > hi) TT_USER_ERROR("clip: lower bound {} above upper bound {}", lo, hi);
  DataType t = x.dtype();
  return Map(
      x, [=](Expr e) { return Min(Max(e, MakeConst(t, lo)), MakeConst(t, hi)); }, std::move(name));
}

Tensor Sigmoid(const Tensor& x, std::string name) {
  return Map(
      x, [](Expr e) { return tirtune::Sigmoid(e); }, std::move(name));
}

Tensor Tanh(const Tensor& x, std::string name) {
  return Map(
      x, [](Expr e) { return tirtune::Tanh(e); }, std::move(name));
}

Tensor Exp(const Tensor& x, std::string name) {
  return Map(
      x, [](Expr e) { return tirtune::Exp(e); }, std::move(name));
}

Tensor BiasAdd(const Tensor& x, const Tensor& bias, std::string name) {
  CheckRank(bias, 1, "bias_add");
  CheckDimsMatch(x, x.ndim() - 1, bias, 0, "bias_add");
  return Compute(
      x.shape(), [&](const std::vector<Var>& v) { return x(AsIndices(v)) + bias(v.back()); },
      std::move(name));
}

std::vector<WorkloadDef> ElementwiseWorkloads() {
  // Every workload here maps NHWC tensors element by element; `ops` counts the arithmetic of one
  // element (an intrinsic call counts one).
  auto def = [](std::string name, std::string summary, double ops,
                std::function<std::vector<Tensor>(const std::vector<int64_t>&)> make) {
    std::string func_name = name;
    return WorkloadDef{
        .name = std::move(name),
        .params = "N,H,W,C",
        .summary = std::move(summary),
        .min_args = 4,
        .max_args = 4,
        .build = [make, func_name](
                     const std::vector<int64_t>& s) { return CreatePrimFunc(make(s), func_name); },
        .flops =
            [ops](const std::vector<int64_t>& s) {
              return ops * static_cast<double>(s[0] * s[1] * s[2] * s[3]);
            },
        .benchmark_shapes = {},
        .small_shape = {1, 3, 4, 5},
    };
  };
  auto unary = [](Tensor (*op)(const Tensor&, std::string), std::string out) {
    return [op, out](const std::vector<int64_t>& s) -> std::vector<Tensor> {
      Tensor x = Input({s[0], s[1], s[2], s[3]}, "data");
      return {x, op(x, out)};
    };
  };
  auto binary = [](Tensor (*op)(const Tensor&, const Tensor&, std::string), std::string out) {
    return [op, out](const std::vector<int64_t>& s) -> std::vector<Tensor> {
      Tensor a = Input({s[0], s[1], s[2], s[3]}, "A");
      Tensor b = Input({s[0], s[1], s[2], s[3]}, "B");
      return {a, b, op(a, b, out)};
    };
  };
  std::vector<WorkloadDef> defs;
  defs.push_back(def("add", "C = A + B (NHWC)", 1, binary(Add, "T_add")));
  defs.push_back(def("mul", "C = A * B (NHWC)", 1, binary(Multiply, "T_multiply")));
  defs.push_back(def("relu", "max(x, 0)", 1, unary(Relu, "T_relu")));
  defs.push_back(def("gelu", "0.5 x (1 + erf(x / sqrt(2)))", 5, unary(Gelu, "T_gelu")));
  defs.push_back(def("clip", "min(max(x, 0), 6) (ReLU6)", 2,
                     [](const std::vector<int64_t>& s) -> std::vector<Tensor> {
                       Tensor x = Input({s[0], s[1], s[2], s[3]}, "data");
                       return {x, Clip(x, 0.0, 6.0)};
                     }));
  defs.push_back(def("sigmoid", "1 / (1 + exp(-x))", 1, unary(Sigmoid, "T_sigmoid")));
  defs.push_back(def("tanh", "tanh(x)", 1, unary(Tanh, "T_tanh")));
  defs.push_back(def("exp", "exp(x)", 1, unary(Exp, "T_exp")));
  defs.push_back(def("bias_add", "x + bias[c] (NHWC)", 1,
                     [](const std::vector<int64_t>& s) -> std::vector<Tensor> {
                       Tensor x = Input({s[0], s[1], s[2], s[3]}, "data");
                       Tensor bias = Input({s[3]}, "bias");
                       return {x, bias, BiasAdd(x, bias)};
                     }));
  return defs;
}

}  // namespace tirtune::te
