// The normalizations: batch (inference and training mode), layer, instance, group, mean-variance,
// Lp, and local response normalization, each as the graph operators of its definition (or the
// fused batch_norm / layer_norm operators where they apply).
#include <cmath>

#include "converters.h"

namespace tirtune::graph::onnx_import {

namespace {

// BatchNormalization with training_mode = 1: normalized by the batch's own mean and (population)
// variance over every axis but the channels; outputs 1 and 2, when used, are the running mean
// and variance updated with `momentum`, as ONNX's reference does.
void BatchNormalizationTraining(ImportContext& ctx) {
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  if (rank < 2) ctx.Fail("input of rank {}", rank);
  for (int i = 1; i < 5; ++i) ctx.RequireFloat(i);
  Ints axes, per_channel(rank, 1);
  for (int d = 0; d < rank; ++d) {
    if (d != 1) axes.push_back(d);
  }
  per_channel[1] = shape[1];
  ValueId x = ctx.Plain(0);
  Attrs over = {{"axes", axes}, {"keepdims", int64_t{1}}};
  ValueId mean = ctx.Emit("mean", {x}, over);
  ValueId centered = ctx.Emit("subtract", {x, mean});
  ValueId variance = ctx.Emit("mean", {ctx.Emit("multiply", {centered, centered})}, over);
  ValueId eps = ctx.ScalarConstant(ctx.AttrFloat("epsilon", 1e-5f));
  ValueId y = ctx.Emit("divide", {centered, ctx.Emit("sqrt", {ctx.Emit("add", {variance, eps})})});
  y = ctx.Emit("multiply", {y, ctx.Emit("reshape", {ctx.Plain(1)}, {{"shape", per_channel}})});
  ctx.SetPlain(0,
               ctx.Emit("add", {y, ctx.Emit("reshape", {ctx.Plain(2)}, {{"shape", per_channel}})}));
  double momentum = ctx.AttrFloat("momentum", 0.9f);
  auto running = [&](int input, ValueId batch) {
    ValueId now = ctx.Emit("reshape", {batch}, {{"shape", Ints{shape[1]}}});
    return ctx.Emit("add", {ctx.Emit("multiply", {ctx.Plain(input), ctx.ScalarConstant(momentum)}),
                            ctx.Emit("multiply", {now, ctx.ScalarConstant(1 - momentum)})});
  };
  for (int out = 1; out <= 2; ++out) {
    if (ctx.node().output_size() > out && !ctx.node().output(out).empty()) {
      ctx.SetPlain(out, running(out + 2, out == 1 ? mean : variance));
    }
  }
}

}  // namespace

void ConvertBatchNormalization(ImportContext& ctx) {
  ctx.RequireFloat(0);
  if (ctx.AttrInt("training_mode", 0) != 0) {
    BatchNormalizationTraining(ctx);
    return;
  }
  for (int i = 1; i < 5; ++i) ctx.RequireUnusedOutput(i);
  double epsilon = ctx.AttrFloat("epsilon", 1e-5f);
  std::vector<ValueId> params;
  for (int i = 1; i < 5; ++i) params.push_back(ctx.Plain(i));
  int rank = static_cast<int>(ctx.Input(0).shape.size());
  if (rank == 2) {
    params.insert(params.begin(), ctx.Plain(0));
    ctx.SetPlain(0, ctx.Emit("batch_norm", params, {{"epsilon", epsilon}}));
    return;
  }
  if (rank < 2) ctx.Fail("input of rank {}", rank);
  params.insert(params.begin(), ctx.ChannelsLast(0));
  ctx.SetChannelsLast(0, ctx.Emit("batch_norm", params, {{"epsilon", epsilon}}));
}

void ConvertLayerNormalization(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  int64_t axis = ctx.NormalizeAxis(ctx.AttrInt("axis", -1), rank);
  double epsilon = ctx.AttrFloat("epsilon", 1e-5f);
  int64_t inner = NumElements({shape.begin() + axis, shape.end()});
  int64_t outer = NumElements({shape.begin(), shape.begin() + axis});
  auto flat_param = [&](int i) {
    if (!ctx.HasInput(i)) {
      NDArray zeros = NDArray::Empty({inner}, DataType::Float(32));
      zeros.Fill(0.0);
      return ctx.Constant(zeros);
    }
    ctx.RequireFloat(i);
    const ImportedValue& p = ctx.Input(i);
    if (p.is_host()) {
      std::vector<int64_t> normalized(shape.begin() + axis, shape.end());
      NDArray expanded = HostExpand(p.host, normalized);
      if (expanded.shape() != normalized) {
        ctx.Fail("input {} of shape {} does not broadcast to the normalized shape {}", i,
                 ShapeString(p.shape), ShapeString(normalized));
      }
      return ctx.Constant(HostReshape(expanded, {inner}));
    }
    return ctx.Emit("reshape", {ctx.Plain(i)}, {{"shape", Ints{inner}}});
  };
  ValueId gamma = flat_param(1), beta = flat_param(2);
  ValueId x = ctx.Plain(0);
  if (axis == rank - 1 && rank >= 2) {
    ctx.SetPlain(0, ctx.Emit("layer_norm", {x, gamma, beta}, {{"epsilon", epsilon}}));
  } else {
    ValueId rows = ctx.Emit("reshape", {x}, {{"shape", Ints{outer, inner}}});
    ValueId y = ctx.Emit("layer_norm", {rows, gamma, beta}, {{"epsilon", epsilon}});
    ctx.SetPlain(0, ctx.Emit("reshape", {y}, {{"shape", shape}}));
  }
  // The optional statistics outputs, over the normalized axes with them kept as extent 1:
  // Mean, and InvStdDev = 1 / sqrt(mean((x - Mean)^2) + epsilon).
  bool wants_mean = ctx.IsUsedOutput(1), wants_inv_std = ctx.IsUsedOutput(2);
  if (!wants_mean && !wants_inv_std) return;
  Ints axes;
  for (int d = static_cast<int>(axis); d < rank; ++d) axes.push_back(d);
  Attrs reduce = {{"axes", axes}, {"keepdims", 1}};
  ValueId mean = ctx.Emit("mean", {x}, reduce);
  if (wants_mean) ctx.SetPlain(1, mean);
  if (!wants_inv_std) return;
  ValueId centered = ctx.Emit("subtract", {x, mean});
  ValueId var = ctx.Emit("mean", {ctx.Emit("multiply", {centered, centered})}, reduce);
  ValueId std = ctx.Emit("sqrt", {ctx.Emit("add", {var, ctx.ScalarConstant(epsilon)})});
  ctx.SetPlain(2, ctx.Emit("divide", {ctx.ScalarConstant(1.0), std}));
}

namespace {

// (x - mean) and its variance over `axes` (kept as extent 1): the normalizations' core.
std::pair<ValueId, ValueId> Centered(ImportContext& ctx, ValueId x, const Ints& axes) {
  Attrs over = {{"axes", axes}, {"keepdims", int64_t{1}}};
  ValueId centered = ctx.Emit("subtract", {x, ctx.Emit("mean", {x}, over)});
  ValueId variance = ctx.Emit("mean", {ctx.Emit("multiply", {centered, centered})}, over);
  return {centered, variance};
}

}  // namespace

// InstanceNormalization: each (n, c) normalized over the spatial axes, then scale and bias per
// channel.
void ConvertInstanceNormalization(ImportContext& ctx) {
  for (int i = 0; i < 3; ++i) ctx.RequireFloat(i);
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  if (rank < 3) ctx.Fail("input of rank {} (at least 3 expected)", rank);
  Ints axes, per_channel(rank, 1);
  for (int d = 2; d < rank; ++d) axes.push_back(d);
  per_channel[1] = shape[1];
  auto [centered, variance] = Centered(ctx, ctx.Plain(0), axes);
  ValueId eps = ctx.ScalarConstant(ctx.AttrFloat("epsilon", 1e-5f));
  ValueId y = ctx.Emit("divide", {centered, ctx.Emit("sqrt", {ctx.Emit("add", {variance, eps})})});
  ValueId scale = ctx.Emit("reshape", {ctx.Plain(1)}, {{"shape", per_channel}});
  ValueId bias = ctx.Emit("reshape", {ctx.Plain(2)}, {{"shape", per_channel}});
  ctx.SetPlain(0, ctx.Emit("add", {ctx.Emit("multiply", {y, scale}), bias}));
}

// MeanVarianceNormalization: (x - mean) / (standard deviation + 1e-9) over `axes` (default
// N, H, W), as ONNX's function body.
void ConvertMeanVarianceNormalization(ImportContext& ctx) {
  ctx.RequireFloat(0);
  Ints axes = ctx.AttrInts("axes", {0, 2, 3});
  auto [centered, variance] = Centered(ctx, ctx.Plain(0), axes);
  ValueId deviation = ctx.Emit("add", {ctx.Emit("sqrt", {variance}), ctx.ScalarConstant(1e-9)});
  ctx.SetPlain(0, ctx.Emit("divide", {centered, deviation}));
}

// LRN: x / (bias + alpha / size * sum of x^2 over a window of `size` channels)^beta; the window
// sum adds `size` shifted slices of the squares, zero-padded along the channels.
void ConvertLrn(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  if (rank < 3) ctx.Fail("input of rank {} (at least 3 expected)", rank);
  int64_t size = ctx.AttrInt("size", 0);
  if (size < 1) ctx.Fail("size {} (at least 1 expected)", size);
  ValueId x = ctx.Plain(0);
  ValueId squares = ctx.Emit("multiply", {x, x});
  Ints before(rank, 0), after(rank, 0);
  before[1] = (size - 1) / 2;
  after[1] = size - 1 - before[1];
  ValueId padded = ctx.Emit("pad", {squares}, {{"pads_before", before}, {"pads_after", after}});
  ValueId sum = -1;
  for (int64_t j = 0; j < size; ++j) {
    Ints begin(rank, 0), end = shape, strides(rank, 1);
    begin[1] = j;
    end[1] = j + shape[1];
    ValueId slice =
        ctx.Emit("strided_slice", {padded}, {{"begin", begin}, {"end", end}, {"strides", strides}});
    sum = sum < 0 ? slice : ctx.Emit("add", {sum, slice});
  }
  double alpha = ctx.AttrFloat("alpha", 1e-4f), beta = ctx.AttrFloat("beta", 0.75f);
  double bias = ctx.AttrFloat("bias", 1.0f);
  ValueId base = ctx.Emit("add", {ctx.ScalarConstant(bias),
                                  ctx.Emit("multiply", {sum, ctx.ScalarConstant(alpha / size)})});
  ctx.SetPlain(0, ctx.Emit("divide", {x, ctx.Emit("power", {base, ctx.ScalarConstant(beta)})}));
}

// GroupNormalization: the channels split into `num_groups` groups, each (n, group) normalized over
// its channels and the spatial axes, then scaled and shifted per channel. The scale and bias are
// per group before opset 21 (each group's value repeated over its channels) and per channel from
// 21 on; either size is taken.
void ConvertGroupNormalization(ImportContext& ctx) {
  for (int i = 0; i < 3; ++i) ctx.RequireFloat(i);
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int rank = static_cast<int>(shape.size());
  if (rank < 2) ctx.Fail("input of rank {} (at least 2 expected)", rank);
  int64_t channels = shape[1], groups = ctx.AttrInt("num_groups", 0);
  if (groups < 1 || channels % groups != 0) {
    ctx.Fail("num_groups {} does not divide the {} channels", groups, channels);
  }
  int64_t per_group = NumElements(shape) / (shape[0] * groups);
  ValueId grouped =
      ctx.Emit("reshape", {ctx.Plain(0)}, {{"shape", Ints{shape[0], groups, per_group}}});
  auto [centered, variance] = Centered(ctx, grouped, {2});
  ValueId eps = ctx.ScalarConstant(ctx.AttrFloat("epsilon", 1e-5f));
  ValueId y = ctx.Emit("divide", {centered, ctx.Emit("sqrt", {ctx.Emit("add", {variance, eps})})});
  y = ctx.Emit("reshape", {y}, {{"shape", shape}});
  Ints per_channel(rank, 1);
  per_channel[1] = channels;
  auto channel_values = [&](int i, const char* what) {
    int64_t size = NumElements(ctx.Input(i).shape);
    ValueId v = ctx.Plain(i);
    if (size == groups && groups != channels) {
      v = ctx.Emit("reshape", {v}, {{"shape", Ints{groups, 1}}});
      v = ctx.Emit("broadcast_to", {v}, {{"shape", Ints{groups, channels / groups}}});
    } else if (size != channels) {
      ctx.Fail("{} of {} elements ({} groups or {} channels expected)", what, size, groups,
               channels);
    }
    return ctx.Emit("reshape", {v}, {{"shape", per_channel}});
  };
  ValueId scale = channel_values(1, "scale"), bias = channel_values(2, "bias");
  ctx.SetPlain(0, ctx.Emit("add", {ctx.Emit("multiply", {y, scale}), bias}));
}

// LpNormalization: x divided by its L1 (p = 1) or L2 (p = 2) norm along `axis`, as ONNX's
// reference (no epsilon: a zero norm gives infinities or NaN there too).
void ConvertLpNormalization(ImportContext& ctx) {
  ctx.RequireFloat(0);
  int rank = static_cast<int>(ctx.Input(0).shape.size());
  int axis = ctx.NormalizeAxis(ctx.AttrInt("axis", -1), rank);
  int64_t p = ctx.AttrInt("p", 2);
  if (p != 1 && p != 2) ctx.Fail("p = {} (1 or 2 expected)", p);
  ValueId x = ctx.Plain(0);
  ValueId terms = p == 1 ? ctx.Emit("abs", {x}) : ctx.Emit("multiply", {x, x});
  ValueId norm = ctx.Emit("sum", {terms}, {{"axes", Ints{axis}}, {"keepdims", int64_t{1}}});
  if (p == 2) norm = ctx.Emit("sqrt", {norm});
  ctx.SetPlain(0, ctx.Emit("divide", {x, norm}));
}

}  // namespace tirtune::graph::onnx_import
