// Convolutions, pools and matrix products. Convolutions and pools work channel-last: their inputs
// are transposed on demand (once per value), their weights transposed at import ([CO, CI / g, K...]
// → [K..., CI / g, CO]; ConvTranspose's [CI, CO, KH, KW] → [KH, KW, CI, CO]). Padding the graph
// operators cannot express (asymmetric, or different per axis) becomes an explicit `pad`.
#include <cmath>
#include <map>
#include <numeric>

#include "converters.h"

namespace tirtune::graph::onnx_import {
namespace {

// The padding, strides and dilations of a convolution or pool over `spatial` input extents.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
};

Window ReadWindow(ImportContext& ctx, const std::vector<int64_t>& spatial,
                  const std::vector<int64_t>& kernel) {
  size_t k = spatial.size();
  Window w;
  w.kernel = kernel;
  w.strides = ctx.AttrInts("strides", std::vector<int64_t>(k, 1));
  w.dilations = ctx.AttrInts("dilations", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = ctx.AttrInts("pads", std::vector<int64_t>(2 * k, 0));
  if (kernel.size() != k || w.strides.size() != k || w.dilations.size() != k ||
      pads.size() != 2 * k) {
    ctx.Fail("kernel_shape, strides, dilations or pads do not match the {} spatial axes", k);
  }
  // Bounds that keep the window arithmetic far from overflow; real models stay far below them.
  constexpr int64_t kMaxWindow = int64_t{1} << 24;
  auto check = [&](const std::vector<int64_t>& values, int64_t lowest, const char* what) {
    for (int64_t v : values) {
      if (v < lowest || v > kMaxWindow) {
        ctx.Fail("{} [{}] out of range", what, fmt::join(values, ", "));
      }
    }
  };
  check(kernel, 1, "kernel_shape");
  check(w.strides, 1, "strides");
  check(w.dilations, 1, "dilations");
  check(pads, 0, "pads");
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  for (size_t d = 0; d < k; ++d) {
    int64_t begin = pads[d], end = pads[d + k];
    if (auto_pad == "VALID") begin = end = 0;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (spatial[d] + w.strides[d] - 1) / w.strides[d];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[d] + (kernel[d] - 1) * w.dilations[d] + 1 - spatial[d]);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
      ctx.Fail("unknown auto_pad '{}'", auto_pad);
    }
    w.pads_begin.push_back(begin);
    w.pads_end.push_back(end);
  }
  return w;
}

// The one value of `values` (they must all be equal), else fails naming `what`.
int64_t Uniform(ImportContext& ctx, const std::vector<int64_t>& values, const char* what) {
  for (int64_t v : values) {
    if (v != values[0]) {
      ctx.Fail("{} [{}] differ per axis; only equal {} on every spatial axis are supported", what,
               fmt::join(values, ", "), what);
    }
  }
  return values.empty() ? 0 : values[0];
}

bool SymmetricPads(const Window& w) {
  for (size_t d = 0; d < w.pads_begin.size(); ++d) {
    if (w.pads_begin[d] != w.pads_end[d] || w.pads_begin[d] != w.pads_begin[0]) return false;
  }
  return true;
}

// `x` (channel-last, rank k + 2) padded explicitly by the window's pads.
ValueId ExplicitPad(ImportContext& ctx, ValueId x, const Window& w, double value) {
  Ints before = {0}, after = {0};
  before.insert(before.end(), w.pads_begin.begin(), w.pads_begin.end());
  after.insert(after.end(), w.pads_end.begin(), w.pads_end.end());
  before.push_back(0);
  after.push_back(0);
  return ctx.Emit("pad", {x}, {{"pads_before", before}, {"pads_after", after}, {"value", value}});
}

std::vector<int64_t> SpatialOf(const ImportedValue& v) {
  return std::vector<int64_t>(v.shape.begin() + 2, v.shape.end());
}

// Input i (weights) with its axes permuted: transposed now when known, else by the graph (which
// FoldConstants folds once the weights are bound).
ValueId PermutedWeights(ImportContext& ctx, int i, const std::vector<int64_t>& perm) {
  ctx.RequireFloat(i);
  std::string name = SanitizeName(ctx.node().input(i)) + "_weights";
  if (ctx.Input(i).is_host()) return ctx.Constant(HostTranspose(ctx.Input(i).host, perm), name);
  return ctx.Emit("transpose", {ctx.Plain(i)}, {{"perm", perm}}, name);
}

bool AllEqual(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == v.front(); });
}

// Pool output extent along one axis, floor or ceil mode.
int64_t PoolExtent(int64_t in, int64_t k, int64_t s, int64_t begin, int64_t end, bool ceil) {
  int64_t span = in + begin + end - k;
  return (ceil ? (span + s - 1) / s : span / s) + 1;
}

}  // namespace

void ConvertConv(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  if (rank < 3 || rank > 5) ctx.Fail("only 1-D, 2-D and 3-D convolutions are supported");
  const std::vector<int64_t>& weight = ctx.Input(1).shape;
  if (static_cast<int>(weight.size()) != rank) ctx.Fail("weights of rank {}", rank);
  std::vector<int64_t> kernel(weight.begin() + 2, weight.end());
  if (ctx.HasAttr("kernel_shape") && ctx.AttrInts("kernel_shape", {}) != kernel) {
    ctx.Fail("kernel_shape does not match the weights");
  }
  Window w = ReadWindow(ctx, SpatialOf(x), kernel);
  int64_t stride = Uniform(ctx, w.strides, "strides");
  int64_t dilation = Uniform(ctx, w.dilations, "dilations");
  ValueId data = ctx.ChannelsLast(0);
  int64_t pad = w.pads_begin[0];
  if (!SymmetricPads(w)) {
    data = ExplicitPad(ctx, data, w, 0.0);
    pad = 0;
  }
  std::vector<int64_t> perm;
  for (int d = 2; d < rank; ++d) perm.push_back(d);
  perm.push_back(1);
  perm.push_back(0);
  ValueId wt = PermutedWeights(ctx, 1, perm);
  static const char* ops[] = {"conv1d", "conv2d", "conv3d"};
  ValueId y = ctx.Emit(ops[rank - 3], {data, wt},
                       {{"stride", stride},
                        {"pad", pad},
                        {"dilation", dilation},
                        {"groups", ctx.AttrInt("group", 1)}});
  if (ctx.HasInput(2)) y = ctx.Emit("bias_add", {y, ctx.Plain(2)});
  ctx.SetChannelsLast(0, y);
}

namespace {

// ConvTranspose of any rank, strides per axis, dilations, output_padding and auto_pad as a
// convolution: the input with stride - 1 zeros between its elements (reshape, pad, reshape),
// padded by reach - 1 - pads (cropped where that is negative), convolved with the weights
// flipped and their channels swapped.
void ConvTransposeByConv(ImportContext& ctx, Window w) {
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  size_t spatial = static_cast<size_t>(rank - 2);
  if (ctx.AttrInt("group", 1) != 1) ctx.Fail("grouped transposed convolutions are not supported");
  const std::vector<int64_t>& weight = ctx.Input(1).shape;
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> output_padding =
      ctx.AttrInts("output_padding", std::vector<int64_t>(spatial, 0));
  if (output_padding.size() != spatial) ctx.Fail("output_padding has {} entries", output_padding.size());
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  std::vector<int64_t> output_shape = ctx.AttrInts("output_shape", {});
  for (size_t d = 0; d < spatial; ++d) {
    int64_t reach = (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t full = w.strides[d] * (in[d] - 1) + output_padding[d] + reach;
    int64_t target = !output_shape.empty() ? output_shape.at(d)
                     : auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" ? in[d] * w.strides[d]
                                                                            : -1;
    if (target >= 0) {  // the pads that give this extent (the extra one at the end for UPPER)
      int64_t total = full - target;
      w.pads_begin[d] = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
      w.pads_end[d] = total - w.pads_begin[d];
    }
  }
  // The weights [CI, CO, k...] as the convolution's [k..., CI, CO], every kernel axis reversed
  // (a slice with step -1; folded at import for constant weights).
  Ints perm, begin_w, end_w, step_w;
  for (size_t d = 0; d < spatial; ++d) {
    perm.push_back(static_cast<int64_t>(d) + 2);
    begin_w.push_back(weight[d + 2] - 1);
    end_w.push_back(-1);
    step_w.push_back(-1);
  }
  perm.insert(perm.end(), {0, 1});
  begin_w.insert(begin_w.end(), {0, 0});
  end_w.insert(end_w.end(), {weight[0], weight[1]});
  step_w.insert(step_w.end(), {1, 1});
  ValueId flipped = ctx.Emit("strided_slice", {PermutedWeights(ctx, 1, perm)},
                             {{"begin", begin_w}, {"end", end_w}, {"strides", step_w}});
  // Zeros between the elements: [N, L..., C] -> [N, L, 1, ..., C] padded to s -> cropped.
  ValueId v = ctx.ChannelsLast(0);
  bool strided = std::any_of(w.strides.begin(), w.strides.end(), [](int64_t s) { return s > 1; });
  if (strided) {
    Ints split = {x.shape[0]}, after(1, 0), joined = {x.shape[0]};
    for (size_t d = 0; d < spatial; ++d) {
      split.insert(split.end(), {in[d], 1});
      after.insert(after.end(), {0, w.strides[d] - 1});
      joined.push_back(in[d] * w.strides[d]);
    }
    split.push_back(x.shape[1]);
    after.push_back(0);
    joined.push_back(x.shape[1]);
    v = ctx.Emit("reshape", {v}, {{"shape", split}});
    v = ctx.Emit("pad", {v}, {{"pads_before", Ints(after.size(), 0)}, {"pads_after", after}});
    v = ctx.Emit("reshape", {v}, {{"shape", joined}});
  }
  // Pads of reach - 1 - pads (negative: a crop), the zeros' tail cropped too.
  Ints begin(rank, 0), end(rank, 0), steps(rank, 1), before(rank, 0), after(rank, 0);
  end[0] = x.shape[0];
  end[rank - 1] = x.shape[1];
  bool crop = false;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t extent = (in[d] - 1) * w.strides[d] + 1;  // with the zeros, without their tail
    int64_t reach = (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t lo = reach - 1 - w.pads_begin[d], hi = reach - 1 - w.pads_end[d] + output_padding[d];
    begin[d + 1] = std::max<int64_t>(0, -lo);
    end[d + 1] = extent + std::min<int64_t>(0, hi);
    if (begin[d + 1] >= end[d + 1]) ctx.Fail("the pads crop axis {} to nothing", d);
    crop |= begin[d + 1] > 0 || end[d + 1] != (strided ? in[d] * w.strides[d] : in[d]);
    before[d + 1] = std::max<int64_t>(0, lo);
    after[d + 1] = std::max<int64_t>(0, hi);
  }
  if (crop) v = ctx.Emit("strided_slice", {v}, {{"begin", begin}, {"end", end}, {"strides", steps}});
  v = ctx.Emit("pad", {v}, {{"pads_before", before}, {"pads_after", after}});
  static const char* ops[] = {"conv1d", "conv2d", "conv3d"};
  ValueId y = ctx.Emit(ops[rank - 3], {v, flipped},
                       {{"stride", int64_t{1}},
                        {"pad", int64_t{0}},
                        {"dilation", Uniform(ctx, w.dilations, "dilations")},
                        {"groups", int64_t{1}}});
  if (ctx.HasInput(2)) y = ctx.Emit("bias_add", {y, ctx.Plain(2)});
  ctx.SetChannelsLast(0, y);
}

}  // namespace

void ConvertConvTranspose(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const ImportedValue& x = ctx.Input(0);
  if (x.shape.size() < 3 || x.shape.size() > 5) {
    ctx.Fail("only 1-D, 2-D and 3-D transposed convolutions are supported");
  }
  if (x.shape.size() != 4 || ctx.AttrString("auto_pad", "NOTSET") != "NOTSET" ||
      ctx.HasAttr("output_padding") || ctx.HasAttr("dilations") || ctx.HasAttr("output_shape") ||
      (ctx.HasAttr("strides") && !AllEqual(ctx.AttrInts("strides", {}))) ||
      (ctx.HasAttr("pads") && !AllEqual(ctx.AttrInts("pads", {})))) {
    const std::vector<int64_t>& weight = ctx.Input(1).shape;
    if (weight.size() != x.shape.size()) ctx.Fail("weights of rank {}", weight.size());
    std::vector<int64_t> kernel(weight.begin() + 2, weight.end());
    ConvTransposeByConv(ctx, ReadWindow(ctx, SpatialOf(x), kernel));
    return;
  }
  const std::vector<int64_t>& weight = ctx.Input(1).shape;
  ctx.RequireAttr("group", 1);
  if (weight.size() != 4) ctx.Fail("weights of rank {}", weight.size());
  std::vector<int64_t> kernel(weight.begin() + 2, weight.end());
  Window w = ReadWindow(ctx, SpatialOf(x), kernel);
  int64_t stride = Uniform(ctx, w.strides, "strides");
  if (Uniform(ctx, w.dilations, "dilations") != 1) ctx.Fail("dilations are not supported");
  std::vector<int64_t> output_padding = ctx.AttrInts("output_padding", {0, 0});
  if (output_padding != std::vector<int64_t>{0, 0}) ctx.Fail("output_padding is not supported");
  if (ctx.HasAttr("output_shape")) {  // the pads that give this shape (SAME_UPPER split)
    std::vector<int64_t> shape = ctx.AttrInts("output_shape", {});
    for (size_t d = 0; d < 2 && d < shape.size(); ++d) {
      int64_t total = stride * (x.shape[2 + d] - 1) + kernel[d] - shape[d];
      w.pads_begin[d] = total / 2;
      w.pads_end[d] = total - total / 2;
    }
  } else if (ctx.AttrString("auto_pad", "NOTSET") != "NOTSET") {
    ctx.Fail("auto_pad is not supported on ConvTranspose");
  }
  if (!SymmetricPads(w))
    ctx.Fail("pads [{}] / [{}] are not supported (symmetric only)", fmt::join(w.pads_begin, ", "),
             fmt::join(w.pads_end, ", "));
  if (kernel[0] != kernel[1]) ctx.Fail("non-square kernels are not supported");
  ValueId wt = PermutedWeights(ctx, 1, {2, 3, 0, 1});
  ValueId y = ctx.Emit("conv2d_transpose", {ctx.ChannelsLast(0), wt},
                       {{"stride", stride}, {"pad", w.pads_begin[0]}});
  if (ctx.HasInput(2)) y = ctx.Emit("bias_add", {y, ctx.Plain(2)});
  ctx.SetChannelsLast(0, y);
}

namespace {

// Pooling of any rank, kernel, stride and dilation as the maximum (or the sum, rescaled) of one
// strided slice of the padded input per kernel position: for 1-D and 3-D pooling and windows
// the 2-D pool operators do not take. `w`'s pads already include ceil_mode's extension.
void SlicedPool(ImportContext& ctx, const Window& w, bool is_max, bool include_pad) {
  const ImportedValue& x = ctx.Input(0);
  size_t spatial = x.shape.size() - 2;
  ValueId padded = ExplicitPad(ctx, ctx.ChannelsLast(0), w, is_max ? -kLargestFloat32 : 0.0);
  std::vector<int64_t> out(spatial), in(x.shape.begin() + 2, x.shape.end());
  int64_t taps = 1;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t reach = (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t span = in[d] + w.pads_begin[d] + w.pads_end[d] - reach;
    if (span < 0) ctx.Fail("the window is larger than the padded input");
    out[d] = span / w.strides[d] + 1;
    taps *= w.kernel[d];
  }
  ctx.CheckHostShape({taps});
  int rank = static_cast<int>(spatial) + 2;
  ValueId acc = -1;
  for (int64_t t = 0; t < taps; ++t) {
    Ints begin(rank, 0), end(rank, 0), strides(rank, 1);
    end[0] = x.shape[0];
    end[rank - 1] = x.shape[1];
    for (int64_t rest = t, d = static_cast<int64_t>(spatial) - 1; d >= 0; --d) {
      int64_t offset = rest % w.kernel[d];
      rest /= w.kernel[d];
      begin[d + 1] = offset * w.dilations[d];
      end[d + 1] = begin[d + 1] + (out[d] - 1) * w.strides[d] + 1;
      strides[d + 1] = w.strides[d];
    }
    ValueId slice = ctx.Emit("strided_slice", {padded},
                             {{"begin", begin}, {"end", end}, {"strides", strides}});
    acc = acc < 0 ? slice : ctx.Emit(is_max ? "maximum" : "add", {acc, slice});
  }
  if (is_max) {
    ctx.SetChannelsLast(0, acc);
    return;
  }
  // The divisor per output position: every tap, or those inside the input.
  Ints scale_shape = {1};
  scale_shape.insert(scale_shape.end(), out.begin(), out.end());
  scale_shape.push_back(1);
  NDArray scale = NDArray::Empty(scale_shape, DataType::Float(32));
  for (int64_t i = 0; i < scale.size(); ++i) {
    int64_t count = 1;
    for (int64_t rest = i, d = static_cast<int64_t>(spatial) - 1; d >= 0; --d) {
      int64_t o = rest % out[d];
      rest /= out[d];
      int64_t inside = 0;
      for (int64_t j = 0; j < w.kernel[d]; ++j) {
        int64_t at = o * w.strides[d] + j * w.dilations[d] - w.pads_begin[d];
        inside += include_pad ? 1 : (at >= 0 && at < in[d]);
      }
      count *= inside;
    }
    if (count == 0) ctx.Fail("a pooling window lies entirely in the padding");
    scale.SetDouble(i, 1.0 / static_cast<double>(count));
  }
  ctx.SetChannelsLast(0, ctx.Emit("multiply", {acc, ctx.Constant(scale)}));
}

}  // namespace

void ConvertPool(ImportContext& ctx) {
  ctx.RequireFloat(0);
  bool is_max = ctx.node().op_type() == "MaxPool";
  const ImportedValue& x = ctx.Input(0);
  if (x.shape.size() < 3 || x.shape.size() > 5) ctx.Fail("only 1-D, 2-D and 3-D pooling");
  std::vector<int64_t> kernel = ctx.AttrInts("kernel_shape", {});
  if (kernel.size() != x.shape.size() - 2) {
    ctx.Fail("kernel_shape has {} entries for {} spatial axes", kernel.size(), x.shape.size() - 2);
  }
  Window w = ReadWindow(ctx, SpatialOf(x), kernel);
  if (is_max) ctx.RequireUnusedOutput(1);
  if (x.shape.size() != 4 || !AllEqual(w.kernel) || !AllEqual(w.strides) ||
      !AllEqual(w.dilations) || w.dilations[0] != 1) {
    for (size_t d = 0; d < kernel.size() && ctx.AttrInt("ceil_mode", 0) != 0; ++d) {
      int64_t reach = (w.kernel[d] - 1) * w.dilations[d] + 1;
      int64_t ceil = PoolExtent(x.shape[2 + d], reach, w.strides[d], w.pads_begin[d],
                                w.pads_end[d], true);
      int64_t floor = PoolExtent(x.shape[2 + d], reach, w.strides[d], w.pads_begin[d],
                                 w.pads_end[d], false);
      if (ceil != floor && !is_max && ctx.AttrInt("count_include_pad", 0) != 0) {
        ctx.Fail("ceil_mode = 1 with count_include_pad = 1 is supported only where it gives the "
                 "floor mode's shape");
      }
      w.pads_end[d] += (ceil - floor) * w.strides[d];
    }
    SlicedPool(ctx, w, is_max, !is_max && ctx.AttrInt("count_include_pad", 0) != 0);
    return;
  }
  int64_t k = Uniform(ctx, w.kernel, "kernel_shape");
  int64_t stride = Uniform(ctx, w.strides, "strides");
  if (Uniform(ctx, w.dilations, "dilations") != 1) ctx.Fail("dilations are not supported");
  if (ctx.AttrInt("ceil_mode", 0) != 0) {
    for (int d = 0; d < 2; ++d) {
      int64_t ceil = PoolExtent(x.shape[2 + d], k, stride, w.pads_begin[d], w.pads_end[d], true);
      int64_t floor = PoolExtent(x.shape[2 + d], k, stride, w.pads_begin[d], w.pads_end[d], false);
      if (ceil == floor) continue;
      // The last, partial window: padding after the input that no maximum picks and no
      // average counts (count_include_pad = 1 would count it: refused).
      if (!is_max && ctx.AttrInt("count_include_pad", 0) != 0) {
        ctx.Fail("ceil_mode = 1 with count_include_pad = 1 is supported only where it gives the "
                 "floor mode's shape");
      }
      w.pads_end[d] += (ceil - 1) * stride + k - (x.shape[2 + d] + w.pads_begin[d] + w.pads_end[d]);
    }
  }
  bool include_pad = !is_max && ctx.AttrInt("count_include_pad", 0) != 0;
  ValueId data = ctx.ChannelsLast(0);
  int64_t pad = w.pads_begin[0];
  if (!is_max && !include_pad && !SymmetricPads(w)) {
    // Uneven padding not counted: the average over the zero-padded input (every window full),
    // rescaled by k^2 / (the window's positions inside the input), a constant made here.
    ValueId y = ctx.Emit("avg_pool2d", {ExplicitPad(ctx, data, w, 0.0)},
                         {{"kernel", k}, {"stride", stride}, {"pad", int64_t{0}}});
    std::vector<std::vector<double>> inside(2);
    for (int d = 0; d < 2; ++d) {
      int64_t out = PoolExtent(x.shape[2 + d], k, stride, w.pads_begin[d], w.pads_end[d], false);
      for (int64_t o = 0; o < out; ++o) {
        int64_t first = o * stride - w.pads_begin[d];
        int64_t n = std::min(first + k, x.shape[2 + d]) - std::max<int64_t>(first, 0);
        if (n <= 0) ctx.Fail("a pooling window lies entirely in the padding");
        inside[d].push_back(static_cast<double>(n));
      }
    }
    int64_t ho = static_cast<int64_t>(inside[0].size()), wo = static_cast<int64_t>(inside[1].size());
    NDArray scale = NDArray::Empty({1, ho, wo, 1}, DataType::Float(32));
    for (int64_t i = 0; i < ho; ++i) {
      for (int64_t j = 0; j < wo; ++j) {
        scale.SetDouble(i * wo + j, static_cast<double>(k * k) / (inside[0][i] * inside[1][j]));
      }
    }
    ctx.SetChannelsLast(0, ctx.Emit("multiply", {y, ctx.Constant(scale)}));
    return;
  }
  if (!SymmetricPads(w) || (include_pad && pad > 0)) {
    data = ExplicitPad(ctx, data, w, is_max ? -kLargestFloat32 : 0.0);
    pad = 0;
  }
  ValueId y = ctx.Emit(is_max ? "max_pool2d" : "avg_pool2d", {data},
                       {{"kernel", k}, {"stride", stride}, {"pad", pad}});
  ctx.SetChannelsLast(0, y);
}

void ConvertGlobalAveragePool(ImportContext& ctx) {
  ctx.RequireFloat(0);
  int rank = static_cast<int>(ctx.Input(0).shape.size());
  if (rank < 3) ctx.Fail("input of rank {}", rank);
  if (rank == 4) {
    ctx.SetChannelsLast(0, ctx.Emit("global_avg_pool2d", {ctx.ChannelsLast(0)}));
    return;
  }
  Ints axes;
  for (int d = 1; d < rank - 1; ++d) axes.push_back(d);
  ctx.SetChannelsLast(0,
                      ctx.Emit("mean", {ctx.ChannelsLast(0)}, {{"axes", axes}, {"keepdims", 1}}));
}

// GlobalMaxPool: the maximum over every spatial axis, kept as extent 1.
void ConvertGlobalMaxPool(ImportContext& ctx) {
  ctx.RequireFloat(0);
  int rank = static_cast<int>(ctx.Input(0).shape.size());
  if (rank < 3) ctx.Fail("input of rank {}", rank);
  Ints axes;
  for (int d = 1; d < rank - 1; ++d) axes.push_back(d);
  ctx.SetChannelsLast(0,
                      ctx.Emit("max", {ctx.ChannelsLast(0)}, {{"axes", axes}, {"keepdims", 1}}));
}

void ConvertGemm(ImportContext& ctx) {
  ctx.RequireFloat(0);
  ctx.RequireFloat(1);
  double alpha = ctx.AttrFloat("alpha", 1.0f), beta = ctx.AttrFloat("beta", 1.0f);
  bool trans_a = ctx.AttrInt("transA", 0) != 0, trans_b = ctx.AttrInt("transB", 0) != 0;
  if (ctx.Input(0).shape.size() != 2 || ctx.Input(1).shape.size() != 2) {
    ctx.Fail("A and B must be matrices");
  }
  ValueId a = ctx.Plain(0);
  if (trans_a) a = ctx.Emit("transpose", {a}, {{"perm", Ints{1, 0}}});
  ValueId y;
  if (ctx.Input(1).is_host()) {  // dense takes B as [N, K]
    const NDArray& b = ctx.Input(1).host;
    y = ctx.Emit("dense", {a, ctx.Constant(trans_b ? b : HostTranspose(b, {1, 0}),
                                           SanitizeName(ctx.node().input(1)) + "_weights")});
  } else {
    ValueId b = ctx.Plain(1);
    if (trans_b) b = ctx.Emit("transpose", {b}, {{"perm", Ints{1, 0}}});
    y = ctx.Emit("matmul", {a, b});
  }
  if (alpha != 1.0) y = ctx.Emit("multiply", {y, ctx.ScalarConstant(alpha)});
  if (ctx.HasInput(2) && beta != 0.0) {
    ctx.RequireFloat(2);
    const ImportedValue& c = ctx.Input(2);
    ValueId bias;
    if (c.is_host()) {
      bias = ctx.Constant(beta == 1.0 ? c.host
                                      : HostBinary(c.host, c.host, DataType::Float(32),
                                                   [beta](double v, double) { return v * beta; }));
    } else {
      bias = ctx.Plain(2);
      if (beta != 1.0) bias = ctx.Emit("multiply", {bias, ctx.ScalarConstant(beta)});
    }
    y = ctx.Emit("add", {y, bias});
  }
  ctx.SetPlain(0, y);
}

void ConvertMatMul(ImportContext& ctx) {
  ctx.RequireFloat(0);
  ctx.RequireFloat(1);
  std::vector<int64_t> sa = ctx.Input(0).shape, sb = ctx.Input(1).shape;
  if (sa.empty() || sb.empty()) ctx.Fail("scalar operands");
  // NumPy's rules: a vector operand gets a unit axis that the result drops.
  bool vec_a = sa.size() == 1, vec_b = sb.size() == 1;
  if (vec_a) sa.insert(sa.begin(), 1);
  if (vec_b) sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k) {
    ctx.Fail("inner dimensions differ: {} and {}", ShapeString(ctx.Input(0).shape),
             ShapeString(ctx.Input(1).shape));
  }
  std::vector<int64_t> batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  bool ok = true;
  std::vector<int64_t> batch = BroadcastShapes(batch_a, batch_b, &ok);
  if (!ok) ctx.Fail("batch dimensions do not broadcast");
  std::vector<int64_t> out_shape = batch;
  if (!vec_a) out_shape.push_back(m);
  if (!vec_b) out_shape.push_back(n);
  if (out_shape.empty()) ctx.Fail("a scalar result (vector times vector) is not supported");

  ValueId y;
  if (batch_b.empty() || NumElements(batch_b) == 1) {
    // B is one matrix: fold A's batch into its rows (a dense layer when B is a constant).
    ValueId a = ctx.Reshaped(ctx.Plain(0), {NumElements(batch) * m, k});
    if (ctx.Input(1).is_host()) {
      NDArray b = HostReshape(ctx.Input(1).host, {k, n});
      y = ctx.Emit("dense", {a, ctx.Constant(HostTranspose(b, {1, 0}),
                                             SanitizeName(ctx.node().input(1)) + "_weights")});
    } else {
      y = ctx.Emit("matmul", {a, ctx.Reshaped(ctx.Plain(1), {k, n})});
    }
  } else {
    int64_t batch_size = NumElements(batch);
    auto operand = [&](int i, const std::vector<int64_t>& own_batch, int64_t rows, int64_t cols) {
      ValueId v = ctx.Reshaped(ctx.Plain(i), [&] {
        Ints s = own_batch;
        s.push_back(rows);
        s.push_back(cols);
        return s;
      }());
      if (own_batch != batch) {
        Ints full = batch;
        full.push_back(rows);
        full.push_back(cols);
        v = ctx.Emit("broadcast_to", {v}, {{"shape", full}});
      }
      return ctx.Reshaped(v, {batch_size, rows, cols});
    };
    ValueId a = operand(0, batch_a, m, k);
    ValueId b = operand(1, batch_b, k, n);
    y = ctx.Emit("batch_matmul", {a, b});
  }
  ctx.SetPlain(0, ctx.Reshaped(y, out_shape));
}

}  // namespace tirtune::graph::onnx_import
