// Reductions over chosen axes: sum, mean, max and min, and argmax/argmin along one, with or without
// the reduced axes kept as extent-1 dimensions, and the running sum along one (cumsum) (ONNX's
// ReduceSum/ReduceMean/ReduceMax/ReduceMin; the importer builds ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum and ReduceLogSumExp from them).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "op_families.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

using te::Tensor;

enum class Reduce { kSum, kMean, kMax, kMin, kProd };

Tensor ReduceAxes(const Tensor& x, const Attrs& attrs, Reduce kind, const char* op) {
  std::set<int> axes;
  for (int64_t a : attrs.GetInts("axes")) {
    if (!axes.insert(NormalizeAxis(a, x.ndim(), op)).second) {
      TT_USER_ERROR("{}: axis {} is given twice", op, a);
    }
  }
  if (axes.empty()) {  // ONNX: no axes means all of them
    for (int d = 0; d < x.ndim(); ++d) axes.insert(d);
  }
  bool keep = attrs.GetInt("keepdims") != 0;
  std::vector<Expr> shape;
  std::vector<IterVar> reduce_axes;
  int64_t count = 1;
  for (int d = 0; d < x.ndim(); ++d) {
    if (axes.count(d)) {
      reduce_axes.push_back(te::ReduceAxis(x.dim(d), fmt::format("k{}", d)));
      count *= x.dim(d);
      if (keep) shape.push_back(Expr(int64_t{1}));
    } else {
      shape.push_back(x.dim(d));
    }
  }
  auto fcompute = [&](const std::vector<Var>& v) {
    std::vector<Expr> indices;
    size_t next_out = 0, next_reduce = 0;
    for (int d = 0; d < x.ndim(); ++d) {
      if (axes.count(d)) {
        indices.push_back(reduce_axes[next_reduce++].var);
        if (keep) ++next_out;
      } else {
        indices.push_back(v[next_out++]);
      }
    }
    Expr value = x(indices);
    if (kind == Reduce::kMax) return te::MaxReduce(value, reduce_axes);
    if (kind == Reduce::kMin) return te::MinReduce(value, reduce_axes);
    if (kind == Reduce::kProd) return te::ProdReduce(value, reduce_axes);
    return te::Sum(value, reduce_axes);
  };
  if (kind != Reduce::kMean) return te::Compute(shape, fcompute, fmt::format("T_{}", op));
  Tensor sum = te::Compute(shape, fcompute, "T_mean_sum");
  Expr divisor = MakeConst(x.dtype(), static_cast<double>(count));
  return te::Compute(
      shape, [&](const std::vector<Var>& v) { return sum(te::AsIndices(v)) / divisor; }, "T_mean");
}

OpDef Reduction(std::string name, Reduce kind) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .inputs = {"data"},
      .variadic = false,
      .attrs = {IntsAttr("axes", {}), IntAttr("keepdims", 1)},
      .pattern = OpPattern::kCommReduce,
      .compute = [kind, op](
                     const std::vector<Tensor>& in,
                     const Attrs& attrs) { return ReduceAxes(in[0], attrs, kind, op.c_str()); },
      .example_inputs = {F32({2, 3, 4})},
      .example_attrs = {{"axes", Ints{0, -1}}, {"keepdims", 0}},
  };
}

// ArgMax / ArgMin along one axis, as int64: the extreme value first, then the first (or with
// select_last_index the last) index holding it.
Tensor ArgReduce(const Tensor& x, const Attrs& attrs, bool is_max, const char* op) {
  int axis = NormalizeAxis(attrs.GetInt("axis"), x.ndim(), op);
  bool keep = attrs.GetInt("keepdims") != 0, last = attrs.GetInt("select_last_index") != 0;
  int64_t n = x.dim(axis);
  std::vector<Expr> kept, shape;
  for (int d = 0; d < x.ndim(); ++d) {
    kept.push_back(d == axis ? Expr(int64_t{1}) : x.dim(d));
    if (d != axis || keep) shape.push_back(d == axis ? Expr(int64_t{1}) : x.dim(d));
  }
  // x's indices for output indices `v` (of `keep_axis` layout) with `k` on the axis.
  auto source = [&](const std::vector<Var>& v, bool keep_axis, Expr k) {
    std::vector<Expr> index;
    size_t next = 0;
    for (int d = 0; d < x.ndim(); ++d) {
      if (d == axis) {
        index.push_back(k);
        if (keep_axis) ++next;
      } else {
        index.push_back(v[next++]);
      }
    }
    return index;
  };
  auto kept_index = [&](const std::vector<Var>& v, bool keep_axis) {
    std::vector<Expr> index;
    size_t next = 0;
    for (int d = 0; d < x.ndim(); ++d) {
      if (d == axis) {
        index.push_back(Expr(int64_t{0}));
        if (keep_axis) ++next;
      } else {
        index.push_back(v[next++]);
      }
    }
    return index;
  };
  Tensor extreme = te::Compute(
      kept,
      [&](const std::vector<Var>& v) {
        IterVar k = te::ReduceAxis(Expr(n), "k");
        Expr value = x(source(v, true, k.var));
        return is_max ? te::MaxReduce(value, {k}) : te::MinReduce(value, {k});
      },
      fmt::format("T_{}_value", op));
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        IterVar k = te::ReduceAxis(Expr(n), "k");
        Expr hit = Eq(x(source(v, keep, k.var)), extreme(kept_index(v, keep)));
        Expr index = Cast(DataType::Int(64), k.var);
        if (last) return te::MaxReduce(Select(hit, index, Expr(int64_t{-1})), {k});
        return te::MinReduce(Select(hit, index, Expr(n)), {k});
      },
      fmt::format("T_{}", op));
}

// Hardmax: 1 where the first maximum along the axis is, 0 elsewhere.
Tensor Hardmax(const Tensor& x, const Attrs& attrs) {
  int axis = NormalizeAxis(attrs.GetInt("axis"), x.ndim(), "hardmax");
  Attrs arg = {
      {"axis", int64_t{axis}}, {"keepdims", int64_t{1}}, {"select_last_index", int64_t{0}}};
  Tensor index = ArgReduce(x, arg, /*is_max=*/true, "hardmax_index");
  std::vector<Expr> shape;
  for (int d = 0; d < x.ndim(); ++d) shape.push_back(x.dim(d));
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> at(v.begin(), v.end());
        at[axis] = Expr(int64_t{0});
        Expr here = Cast(DataType::Int(64), v[axis]);
        return Select(Eq(here, index(at)), MakeConst(x.dtype(), 1), MakeConst(x.dtype(), 0));
      },
      "T_hardmax");
}

// CumSum: the running sum along `axis`, out[.., i, ..] = the sum of x[.., k, ..] over k <= i (k < i
// when exclusive; k >= i, k > i when reverse). A reduction over the whole axis whose terms outside
// the range are selected away (not multiplied by zero: an infinity later on the axis must not
// turn earlier sums into NaN).
Tensor CumSum(const Tensor& x, const Attrs& attrs) {
  int axis = NormalizeAxis(attrs.GetInt("axis"), x.ndim(), "cumsum");
  bool exclusive = attrs.GetInt("exclusive") != 0, reverse = attrs.GetInt("reverse") != 0;
  std::vector<Expr> shape;
  for (int d = 0; d < x.ndim(); ++d) shape.push_back(x.dim(d));
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        IterVar k = te::ReduceAxis(x.dim(axis), "k");
        std::vector<Expr> at(v.begin(), v.end());
        at[axis] = k.var;
        Expr i = v[axis], j = k.var;
        Expr take = reverse ? (exclusive ? j > i : j >= i) : (exclusive ? j < i : j <= i);
        return te::Sum(Select(take, x(at), MakeConst(x.dtype(), 0)), {k});
      },
      "T_cumsum");
}

OpDef ArgReduction(std::string name, bool is_max) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .inputs = {"data"},
      .variadic = false,
      .attrs = {IntAttr("axis", 0), IntAttr("keepdims", 1), IntAttr("select_last_index", 0)},
      .pattern = OpPattern::kCommReduce,
      .compute = [is_max, op](
                     const std::vector<Tensor>& in,
                     const Attrs& attrs) { return ArgReduce(in[0], attrs, is_max, op.c_str()); },
      .example_inputs = {F32({2, 3, 4})},
      .example_attrs = {{"axis", 1}, {"keepdims", 0}},
  };
}

}  // namespace

std::vector<OpDef> ReduceOps() {
  return {Reduction("sum", Reduce::kSum),
          Reduction("mean", Reduce::kMean),
          Reduction("max", Reduce::kMax),
          Reduction("min", Reduce::kMin),
          Reduction("prod", Reduce::kProd),
          ArgReduction("argmax", true),
          ArgReduction("argmin", false),
          OpDef{
              .name = "cumsum",
              .inputs = {"data"},
              .variadic = false,
              .attrs = {IntAttr("axis", 0), IntAttr("exclusive", 0), IntAttr("reverse", 0)},
              .pattern = OpPattern::kCommReduce,
              .compute = [](const std::vector<Tensor>& in,
                            const Attrs& attrs) { return CumSum(in[0], attrs); },
              .example_inputs = {F32({2, 5, 3})},
              .example_attrs = {{"axis", 1}, {"exclusive", 1}},
          },
          OpDef{
              .name = "hardmax",
              .inputs = {"data"},
              .variadic = false,
              .attrs = {IntAttr("axis", -1)},
              .pattern = OpPattern::kCommReduce,
              .compute = [](const std::vector<Tensor>& in,
                            const Attrs& attrs) { return Hardmax(in[0], attrs); },
              .example_inputs = {F32({2, 3, 4})},
              .example_attrs = {{"axis", 1}},
          }};
}

}  // namespace tirtune::graph
