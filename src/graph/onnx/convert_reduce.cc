// Softmax and its relatives, the reductions (sums, extremes, their indices, TopK, running sums)
// and the losses built from them.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "converters.h"

namespace tirtune::graph::onnx_import {

void ConvertSoftmax(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  int64_t axis = ctx.NormalizeAxis(ctx.AttrInt("axis", ctx.opset() < 13 ? 1 : -1), rank);
  ValueId x = ctx.Plain(0);
  // LogSoftmax: the log of the softmax (which subtracts the maximum first, so only differences
  // beyond float's exponent range, about 87, would underflow).
  // Hardmax: the graph operator hardmax instead.
  const std::string& type = ctx.node().op_type();
  auto softmax = [&](ValueId v) {
    if (type == "Hardmax") return ctx.Emit("hardmax", {v});
    ValueId s = ctx.Emit("softmax", {v});
    return type == "LogSoftmax" ? ctx.Emit("log", {s}) : s;
  };
  if (ctx.opset() < 13) {  // softmax of the input coerced to [prod(:axis), prod(axis:)]
    int64_t outer = NumElements({shape.begin(), shape.begin() + axis});
    ValueId rows = ctx.Emit("reshape", {x}, {{"shape", Ints{outer, -1}}});
    ctx.SetPlain(0, ctx.Emit("reshape", {softmax(rows)}, {{"shape", shape}}));
    return;
  }
  if (axis == rank - 1) {
    ctx.SetPlain(0, softmax(x));
    return;
  }
  Ints perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[axis], perm[rank - 1]);
  ValueId moved = ctx.Emit("transpose", {x}, {{"perm", perm}});
  ctx.SetPlain(0, ctx.Emit("transpose", {softmax(moved)}, {{"perm", perm}}));
}

// ReduceSum, ReduceMean, ReduceMax and ReduceMin are graph operators; ReduceL1 (sum of abs),
// ReduceL2 (sqrt of the sum of squares), ReduceSumSquare, ReduceLogSum and ReduceLogSumExp are
// built from `sum` and per-element operators.
void ConvertReduce(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const std::string& type = ctx.node().op_type();
  std::vector<int64_t> axes = ctx.AttrInts("axes", {});
  // The axes became an input: ReduceSum's at opset 13, every other reduction's at 18.
  if ((type == "ReduceSum" && ctx.opset() >= 13) || ctx.opset() >= 18) {
    axes = ctx.HasInput(1) ? HostInts(ctx.HostInput(1, "axes")) : std::vector<int64_t>{};
    if (axes.empty() && ctx.AttrInt("noop_with_empty_axes", 0) != 0) {
      if (type == "ReduceL1" || type == "ReduceL2" || type == "ReduceSumSquare" ||
          type == "ReduceLogSum" || type == "ReduceLogSumExp") {
        ctx.Fail("noop_with_empty_axes with no axes is not supported for {}", type);
      }
      ctx.Alias(0, 0);
      return;
    }
  }
  Attrs attrs = {{"axes", axes}, {"keepdims", ctx.AttrInt("keepdims", 1)}};
  ValueId x = ctx.Plain(0);
  static const std::map<std::string, std::string> direct = {{"ReduceSum", "sum"},
                                                            {"ReduceMean", "mean"},
                                                            {"ReduceMax", "max"},
                                                            {"ReduceMin", "min"},
                                                            {"ReduceProd", "prod"}};
  if (auto it = direct.find(type); it != direct.end()) {
    ctx.SetPlain(0, ctx.Emit(it->second, {x}, attrs));
    return;
  }
  if (type == "ReduceL1") x = ctx.Emit("abs", {x});
  if (type == "ReduceL2" || type == "ReduceSumSquare") x = ctx.Emit("multiply", {x, x});
  if (type == "ReduceLogSumExp") x = ctx.Emit("exp", {x});
  ValueId sum = ctx.Emit("sum", {x}, attrs);
  if (type == "ReduceL2") sum = ctx.Emit("sqrt", {sum});
  if (type == "ReduceLogSum" || type == "ReduceLogSumExp") sum = ctx.Emit("log", {sum});
  ctx.SetPlain(0, sum);
}

// ArgMax, ArgMin: int64 indices along one axis.
void ConvertArgReduce(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const char* op = ctx.node().op_type() == "ArgMax" ? "argmax" : "argmin";
  ctx.SetPlain(0, ctx.Emit(op, {ctx.Plain(0)},
                           {{"axis", ctx.AttrInt("axis", 0)},
                            {"keepdims", ctx.AttrInt("keepdims", 1)},
                            {"select_last_index", ctx.AttrInt("select_last_index", 0)}}));
}

namespace {

// The negative log-likelihood of `log_prob` [N, C, d...] at `labels` (input `label_input`,
// int64 [N, d...], known at import time): a 0/1 mask of the labelled class made here (0 where
// the label is ignore_index), times the class weights (input `weight_input` when given), summed
// over the classes; reduced by `reduction` (none, sum, or mean: divided by the total weight).
ValueId NegativeLogLikelihood(ImportContext& ctx, ValueId log_prob,
                              const std::vector<int64_t>& shape, int label_input,
                              int weight_input) {
  const NDArray& labels = ctx.HostInput(label_input, "the labels (target)");
  if (labels.dtype() != DataType::Int(64))
    ctx.Fail("labels are {}; int64 expected", labels.dtype().str());
  int rank = static_cast<int>(shape.size());
  if (rank < 2) ctx.Fail("input of rank {} (at least 2 expected)", rank);
  std::vector<int64_t> label_shape = shape;
  label_shape.erase(label_shape.begin() + 1);
  if (labels.shape() != label_shape) {
    ctx.Fail("labels of shape {} for an input of shape {}", ShapeString(labels.shape()),
             ShapeString(shape));
  }
  const onnx::AttributeProto* ignore_attr = ctx.Attr("ignore_index");
  int64_t ignore = ignore_attr ? ignore_attr->i() : 0;
  int64_t classes = shape[1], inner = 1;
  for (int d = 2; d < rank; ++d) inner *= shape[d];
  NDArray mask = NDArray::Empty(shape, DataType::Float(32));
  mask.Fill(0.0);
  int64_t counted = 0;
  for (int64_t n = 0; n < shape[0]; ++n) {
    for (int64_t k = 0; k < inner; ++k) {
      int64_t label = labels.data<int64_t>()[n * inner + k];
      if (ignore_attr && label == ignore) continue;
      if (label < 0 || label >= classes) {
        ctx.Fail("label {} is not a class (0 to {}) nor ignore_index", label, classes - 1);
      }
      mask.SetDouble((n * classes + label) * inner + k, 1.0);
      ++counted;
    }
  }
  ValueId weights = ctx.Constant(mask);
  if (weight_input >= 0 && ctx.HasInput(weight_input)) {
    ctx.RequireFloat(weight_input);
    Ints per_class(rank, 1);
    per_class[1] = classes;
    weights =
        ctx.Emit("multiply",
                 {weights, ctx.Emit("reshape", {ctx.Plain(weight_input)}, {{"shape", per_class}})});
  }
  ValueId picked = ctx.Emit("sum", {ctx.Emit("multiply", {log_prob, weights})},
                            {{"axes", Ints{1}}, {"keepdims", int64_t{0}}});
  ValueId loss = ctx.Emit("negative", {picked});
  std::string reduction = ctx.AttrString("reduction", "mean");
  if (reduction == "none") return loss;
  Attrs all = {{"axes", Ints{}}, {"keepdims", int64_t{0}}};
  ValueId total = ctx.Emit("sum", {loss}, all);
  if (reduction == "sum") return total;
  if (reduction != "mean") ctx.Fail("reduction '{}' (none, sum or mean expected)", reduction);
  ValueId weight_total = weight_input >= 0 && ctx.HasInput(weight_input)
                             ? ctx.Emit("sum", {weights}, all)
                             : ctx.Constant([&] {
                                 NDArray c = NDArray::Empty({}, DataType::Float(32));
                                 c.SetDouble(0, static_cast<double>(counted));
                                 return c;  // rank 0, as the sum it divides
                               }());
  return ctx.Emit("divide", {total, weight_total});
}

}  // namespace

void ConvertNegativeLogLikelihoodLoss(ImportContext& ctx) {
  ctx.RequireFloat(0);
  ctx.SetPlain(0, NegativeLogLikelihood(ctx, ctx.Plain(0), ctx.Input(0).shape, 1, 2));
}

// SoftmaxCrossEntropyLoss: the negative log-likelihood of the log-softmax over the classes
// (axis 1); the second output, when used, is that log-softmax.
void ConvertSoftmaxCrossEntropyLoss(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  ValueId scores = ctx.Plain(0);
  // softmax runs over the last axis: move the classes there and back.
  Ints perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  if (rank >= 2) std::swap(perm[1], perm[rank - 1]);
  ValueId moved = rank > 2 ? ctx.Emit("transpose", {scores}, {{"perm", perm}}) : scores;
  ValueId log_prob = ctx.Emit("log", {ctx.Emit("softmax", {moved})});
  if (rank > 2) log_prob = ctx.Emit("transpose", {log_prob}, {{"perm", perm}});
  ctx.SetPlain(0, NegativeLogLikelihood(ctx, log_prob, shape, 1, 2));
  if (ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) ctx.SetPlain(1, log_prob);
}

// TopK with k known at import time: k rounds of hardmax (the first maximum along the axis, as
// a 0/1 mask), each giving a value (the masked sum) and an index (argmax), the maximum then
// pushed down to the lowest float; concatenated in order. largest = 0 works on -x. Ties go to
// the lower index, as ONNX's.
void ConvertTopK(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  int64_t axis = ctx.NormalizeAxis(ctx.AttrInt("axis", -1), rank);
  int64_t k = ctx.opset() < 10 ? ctx.AttrInt("k", 0) : HostInts(ctx.HostInput(1, "k")).at(0);
  if (k < 1 || k > shape[axis]) ctx.Fail("k = {} for an axis of {}", k, shape[axis]);
  if (ctx.AttrInt("sorted", 1) == 0) ctx.Fail("sorted = 0 is not supported");
  ctx.CheckHostShape({k, rank});
  bool largest = ctx.AttrInt("largest", 1) != 0;
  // softmax-like operators run on the last axis: move `axis` there and back.
  Ints perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[axis], perm[rank - 1]);
  bool moved = axis != rank - 1;
  ValueId x = ctx.Plain(0);
  if (moved) x = ctx.Emit("transpose", {x}, {{"perm", perm}});
  if (!largest) x = ctx.Emit("negative", {x});
  std::vector<ValueId> values, indices;
  Attrs last = {{"axes", Ints{rank - 1}}, {"keepdims", int64_t{1}}};
  ValueId lowest = ctx.ScalarConstant(kLargestFloat32);
  for (int64_t round = 0; round < k; ++round) {
    ValueId mask = ctx.Emit("hardmax", {x}, {{"axis", int64_t{rank - 1}}});
    ValueId value = ctx.Emit("sum", {ctx.Emit("multiply", {x, mask})}, last);
    values.push_back(largest ? value : ctx.Emit("negative", {value}));
    indices.push_back(ctx.Emit("argmax", {x},
                               {{"axis", int64_t{rank - 1}},
                                {"keepdims", int64_t{1}},
                                {"select_last_index", int64_t{0}}}));
    if (round + 1 < k) x = ctx.Emit("subtract", {x, ctx.Emit("multiply", {mask, lowest})});
  }
  auto joined = [&](const std::vector<ValueId>& parts) {
    ValueId v =
        parts.size() == 1 ? parts[0] : ctx.Emit("concat", parts, {{"axis", int64_t{rank - 1}}});
    return moved ? ctx.Emit("transpose", {v}, {{"perm", perm}}) : v;
  };
  ctx.SetPlain(0, joined(values));
  if (ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) {
    ctx.SetPlain(1, joined(indices));
  }
}

// CumSum along the axis of input 1 (known at import time): the graph operator cumsum, or computed
// here when the input is known too (position ids from a mask, say, in int64).
void ConvertCumSum(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  if (rank == 0) ctx.Fail("a scalar input (rank at least 1 expected)");
  int axis = ctx.NormalizeAxis(static_cast<int64_t>(ctx.HostScalar(1, "axis")), rank);
  bool exclusive = ctx.AttrInt("exclusive", 0) != 0, reverse = ctx.AttrInt("reverse", 0) != 0;
  if (x.is_host()) {
    int64_t n = x.shape[static_cast<size_t>(axis)];
    int64_t inner = NumElements({x.shape.begin() + axis + 1, x.shape.end()});
    int64_t outer = NumElements(x.shape) / std::max<int64_t>(n * inner, 1);
    NDArray out = HostEmpty(x.shape, x.dtype);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        double sum = 0;
        for (int64_t step = 0; step < n; ++step) {
          int64_t i = reverse ? n - 1 - step : step;
          int64_t at = (o * n + i) * inner + in;
          double value = x.host.GetDouble(at);
          if (!exclusive) sum += value;
          out.SetDouble(at, sum);
          if (exclusive) sum += value;
        }
      }
    }
    ctx.SetHost(0, out);
    return;
  }
  ctx.RequireFloat(0);
  ctx.SetPlain(0, ctx.Emit("cumsum", {ctx.Plain(0)},
                           {{"axis", int64_t{axis}},
                            {"exclusive", int64_t{exclusive}},
                            {"reverse", int64_t{reverse}}}));
}

}  // namespace tirtune::graph::onnx_import
