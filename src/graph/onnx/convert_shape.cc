// Shape and data-movement operators. Shapes are static, so Shape is always known at import time
// and the chains exporters build from it (Gather, Concat, Unsqueeze, ConstantOfShape, ...) fold
// here; on tensors the graph computes, the same operators become reshape, transpose, concat,
// strided_slice, take and broadcast_to.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "converters.h"

namespace tirtune::graph::onnx_import {
namespace {

// Output 0 = input 0 under `shape` (same elements).
void Reshaped(ImportContext& ctx, const std::vector<int64_t>& shape) {
  const ImportedValue& x = ctx.Input(0);
  if (NumElements(shape) != NumElements(x.shape)) {
    ctx.Fail("cannot reshape {} to {}", ShapeString(x.shape), ShapeString(shape));
  }
  if (x.is_host()) {
    ctx.SetHost(0, HostReshape(x.host, shape));
  } else if (shape == x.shape) {
    ctx.Alias(0, 0);
  } else {
    ctx.SetPlain(0, ctx.Emit("reshape", {ctx.Plain(0)}, {{"shape", shape}}));
  }
}

// The axes of a Squeeze/Unsqueeze: an attribute before opset 13, an input from 13 on.
std::vector<int64_t> AxesOf(ImportContext& ctx) {
  if (ctx.opset() < 13) return ctx.AttrInts("axes", {});
  return ctx.HasInput(1) ? HostInts(ctx.HostInput(1, "axes")) : std::vector<int64_t>{};
}

}  // namespace

void ConvertShape(ImportContext& ctx) {
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = ctx.AttrInt("start", 0), end = ctx.AttrInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  ctx.SetHost(0, MakeInts({shape.begin() + start, shape.begin() + end}));
}

void ConvertReshape(ImportContext& ctx) {
  const std::vector<int64_t>& in = ctx.Input(0).shape;
  std::vector<int64_t> shape =
      ctx.opset() < 5 ? ctx.AttrInts("shape", {}) : HostInts(ctx.HostInput(1, "shape"));
  bool allow_zero = ctx.AttrInt("allowzero", 0) != 0;
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allow_zero) {
      if (d >= in.size()) ctx.Fail("0 at position {} is past the input's rank", d);
      shape[d] = in[d];
    }
    if (shape[d] == -1) {
      if (inferred >= 0) ctx.Fail("more than one -1 in the shape");
      inferred = static_cast<int>(d);
      continue;
    }
    if (shape[d] < 1) ctx.Fail("extent {} in the new shape is not supported", shape[d]);
    if (__builtin_mul_overflow(known, shape[d], &known) || known > NumElements(in)) {
      ctx.Fail("the new shape {} holds more elements than the input {}", ShapeString(shape),
               ShapeString(in));
    }
  }
  if (inferred >= 0) shape[inferred] = NumElements(in) / std::max<int64_t>(known, 1);
  Reshaped(ctx, shape);
}

void ConvertFlatten(ImportContext& ctx) {
  const std::vector<int64_t>& in = ctx.Input(0).shape;
  int rank = static_cast<int>(in.size());
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < -rank || axis > rank) ctx.Fail("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  int64_t outer = NumElements({in.begin(), in.begin() + axis});
  Reshaped(ctx, {outer, NumElements(in) / outer});
}

void ConvertTranspose(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  std::vector<int64_t> perm = ctx.AttrInts("perm", reversed);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity)
    ctx.Fail("perm [{}] is not a permutation of the axes", fmt::join(perm, ", "));
  if (x.is_host()) {
    ctx.SetHost(0, HostTranspose(x.host, perm));
    return;
  }
  if (x.plain < 0) {  // transpose the channel-last form directly: one transpose, not two
    std::vector<int64_t> from = FromChannelsLastPerm(rank), composed;
    for (int64_t p : perm) composed.push_back(from[p]);
    ValueId cl = ctx.ChannelsLast(0);
    ctx.SetPlain(0, composed == identity ? cl : ctx.Emit("transpose", {cl}, {{"perm", composed}}));
    return;
  }
  ctx.SetPlain(0, ctx.Emit("transpose", {ctx.Plain(0)}, {{"perm", perm}}));
}

void ConvertGather(ImportContext& ctx) {
  const ImportedValue& data = ctx.Input(0);
  const ImportedValue& indices = ctx.Input(1);
  int axis = ctx.NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int>(data.shape.size()));
  if (!indices.dtype.is_int()) ctx.Fail("indices must be signed integers");
  if (data.is_host() && indices.is_host()) {
    NDArray out = HostGather(data.host, indices.host, axis);
    if (!out.defined()) ctx.Fail("an index is out of range for extent {}", data.shape[axis]);
    ctx.SetHost(0, out);
    return;
  }
  if (indices.is_host() && indices.shape.empty()) {  // one index: a slice without the axis
    int64_t i = indices.host.data<int64_t>()[0];
    if (i < 0) i += data.shape[axis];
    if (i < 0 || i >= data.shape[axis]) ctx.Fail("index out of range");
    Ints begin(data.shape.size(), 0), end = data.shape, strides(data.shape.size(), 1);
    begin[axis] = i;
    end[axis] = i + 1;
    ValueId slice = ctx.Emit("strided_slice", {ctx.Plain(0)},
                             {{"begin", begin}, {"end", end}, {"strides", strides}});
    Ints shape = data.shape;
    shape.erase(shape.begin() + axis);
    if (shape.empty()) ctx.Fail("a scalar result is not supported");
    ctx.SetPlain(0, ctx.Emit("reshape", {slice}, {{"shape", shape}}));
    return;
  }
  if (indices.shape.empty()) ctx.Fail("scalar indices computed by the graph are not supported");
  ctx.SetPlain(0, ctx.Emit("take", {ctx.Plain(0), ctx.Plain(1)}, {{"axis", axis}}));
}

void ConvertConcat(ImportContext& ctx) {
  int rank = static_cast<int>(ctx.Input(0).shape.size());
  int axis = ctx.NormalizeAxis(ctx.AttrInt("axis", 0), rank);
  bool all_host = true, all_channels_last = rank >= 3;
  for (int i = 0; i < ctx.NumInputs(); ++i) {
    const ImportedValue& v = ctx.Input(i);
    if (v.shape.size() != static_cast<size_t>(rank)) ctx.Fail("inputs of different ranks");
    all_host = all_host && v.is_host();
    all_channels_last = all_channels_last && !v.is_host() && v.plain < 0;
  }
  if (all_host) {
    std::vector<NDArray> parts;
    for (int i = 0; i < ctx.NumInputs(); ++i) {
      if (ctx.Input(i).dtype != ctx.Input(0).dtype) ctx.Fail("inputs of different types");
      parts.push_back(ctx.Input(i).host);
    }
    ctx.SetHost(0, HostConcat(parts, axis));
    return;
  }
  ctx.UnifyTypes(ctx.InputIndices());
  std::vector<ValueId> args;
  for (int i = 0; i < ctx.NumInputs(); ++i) {
    args.push_back(all_channels_last ? ctx.ChannelsLast(i) : ctx.Plain(i));
  }
  if (all_channels_last) {  // the axis's position in the channel-last layout
    std::vector<int64_t> to = ToChannelsLastPerm(rank);
    int64_t cl_axis = std::find(to.begin(), to.end(), axis) - to.begin();
    ctx.SetChannelsLast(0, ctx.Emit("concat", args, {{"axis", cl_axis}}));
  } else {
    ctx.SetPlain(0, ctx.Emit("concat", args, {{"axis", axis}}));
  }
}

void ConvertSlice(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.AttrInts("starts", {});
    ends = ctx.AttrInts("ends", {});
    axes = ctx.AttrInts("axes", {});
  } else {
    starts = HostInts(ctx.HostInput(1, "starts"));
    ends = HostInts(ctx.HostInput(2, "ends"));
    if (ctx.HasInput(3)) axes = HostInts(ctx.HostInput(3, "axes"));
    if (ctx.HasInput(4)) steps = HostInts(ctx.HostInput(4, "steps"));
  }
  if (axes.empty()) {
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    ctx.Fail("starts, ends, axes and steps differ in length");
  }
  Ints begin(rank, 0), end = x.shape, stride(rank, 1), out_shape = x.shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    int d = ctx.NormalizeAxis(axes[i], rank);
    int64_t dim = x.shape[d], s = starts[i], e = ends[i], step = steps[i];
    if (step == 0) ctx.Fail("step 0");
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      out_shape[d] = std::max<int64_t>(0, (e - s + step - 1) / step);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      out_shape[d] = std::max<int64_t>(0, (s - e - step - 1) / -step);
    }
    begin[d] = s;
    end[d] = e;
    stride[d] = step;
  }
  if (x.is_host()) {
    ctx.SetHost(0, HostSlice(x.host, begin, stride, out_shape));
    return;
  }
  if (NumElements(out_shape) == 0) ctx.Fail("the slice is empty");
  if (out_shape == x.shape) {
    ctx.Alias(0, 0);
    return;
  }
  ctx.SetPlain(0, ctx.Emit("strided_slice", {ctx.Plain(0)},
                           {{"begin", begin}, {"end", end}, {"strides", stride}}));
}

void ConvertSqueeze(ImportContext& ctx) {
  const std::vector<int64_t>& in = ctx.Input(0).shape;
  int rank = static_cast<int>(in.size());
  std::vector<bool> drop(rank, false);
  std::vector<int64_t> axes = AxesOf(ctx);
  for (int64_t a : axes) {
    int d = ctx.NormalizeAxis(a, rank);
    if (in[d] != 1) ctx.Fail("axis {} has extent {}, not 1", a, in[d]);
    drop[d] = true;
  }
  std::vector<int64_t> shape;
  for (int d = 0; d < rank; ++d) {
    if (axes.empty() ? in[d] != 1 : !drop[d]) shape.push_back(in[d]);
  }
  Reshaped(ctx, shape);
}

void ConvertUnsqueeze(ImportContext& ctx) {
  const std::vector<int64_t>& in = ctx.Input(0).shape;
  std::vector<int64_t> axes = AxesOf(ctx);
  int rank = static_cast<int>(in.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    int d = ctx.NormalizeAxis(a, rank);
    if (inserted[d]) ctx.Fail("axis {} is given twice", a);
    inserted[d] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int d = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : in[next++]);
  Reshaped(ctx, shape);
}

void ConvertConstant(ImportContext& ctx) {
  if (ctx.node().attribute_size() != 1) ctx.Fail("expects exactly one attribute");
  const onnx::AttributeProto& a = ctx.node().attribute(0);
  if (a.name() == "value") {
    ctx.SetHost(0, TensorFromProto(a.t(), ctx.NodeLabel() + ": value"));
  } else if (a.name() == "value_float") {
    NDArray v = NDArray::Empty({}, DataType::Float(32));
    v.SetDouble(0, a.f());
    ctx.SetHost(0, v);
  } else if (a.name() == "value_floats") {
    NDArray v = NDArray::Empty({a.floats_size()}, DataType::Float(32));
    for (int i = 0; i < a.floats_size(); ++i) v.SetDouble(i, a.floats(i));
    ctx.SetHost(0, v);
  } else if (a.name() == "value_int") {
    ctx.SetHost(0, HostReshape(MakeInts({a.i()}), {}));
  } else if (a.name() == "value_ints") {
    ctx.SetHost(0, MakeInts({a.ints().begin(), a.ints().end()}));
  } else {
    ctx.Fail("attribute '{}' is not supported (sparse and string constants)", a.name());
  }
}

void ConvertConstantOfShape(ImportContext& ctx) {
  std::vector<int64_t> shape = HostInts(ctx.HostInput(0, "shape"));
  ctx.CheckHostShape(shape);
  NDArray value = NDArray::Empty({1}, DataType::Float(32));
  value.Fill(0.0);
  if (const onnx::AttributeProto* a = ctx.Attr("value")) {
    value = TensorFromProto(a->t(), ctx.NodeLabel() + ": value");
    if (value.size() != 1) ctx.Fail("value must hold one element");
  }
  NDArray out = NDArray::Empty(shape, value.dtype());
  for (int64_t i = 0; i < out.size(); ++i) {
    if (value.dtype() == DataType::Int(64)) {
      out.data<int64_t>()[i] = value.data<int64_t>()[0];
    } else {
      out.SetDouble(i, value.GetDouble(0));
    }
  }
  ctx.SetHost(0, out);
}

void ConvertExpand(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  std::vector<int64_t> shape = HostInts(ctx.HostInput(1, "shape"));
  bool ok = true;
  std::vector<int64_t> out_shape = BroadcastShapes(x.shape, shape, &ok);
  if (!ok) ctx.Fail("{} does not broadcast to {}", ShapeString(x.shape), ShapeString(shape));
  if (x.is_host()) {
    ctx.CheckHostShape(out_shape);
    ctx.SetHost(0, HostExpand(x.host, shape));
  } else if (out_shape == x.shape) {
    ctx.Alias(0, 0);
  } else {
    ctx.SetPlain(0, ctx.Emit("broadcast_to", {ctx.Plain(0)}, {{"shape", out_shape}}));
  }
}

void ConvertRange(ImportContext& ctx) {
  double s = ctx.HostScalar(0, "start"), l = ctx.HostScalar(1, "limit");
  double d = ctx.HostScalar(2, "delta");
  const NDArray& start = ctx.HostInput(0, "start");
  const NDArray& delta = ctx.HostInput(2, "delta");
  if (d == 0) ctx.Fail("delta is 0");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  ctx.CheckHostShape({n});
  NDArray out = NDArray::Empty({n}, start.dtype());
  for (int64_t i = 0; i < n; ++i) {
    if (start.dtype() == DataType::Int(64)) {
      out.data<int64_t>()[i] = start.data<int64_t>()[0] + i * delta.data<int64_t>()[0];
    } else {
      out.SetDouble(i, s + static_cast<double>(i) * d);
    }
  }
  ctx.SetHost(0, out);
}

}  // namespace tirtune::graph::onnx_import

namespace tirtune::graph::onnx_import {
namespace {

// Output `out` = reshape(transpose(reshape(input 0, `split`), `perm`), `shape`): the
// rearrangements DepthToSpace, SpaceToDepth and Tile are made of, on the host for a host input.
ValueId Rearranged(ImportContext& ctx, const Ints& split, const Ints& perm, const Ints& shape) {
  ValueId v = ctx.Emit("reshape", {ctx.Plain(0)}, {{"shape", split}});
  v = ctx.Emit("transpose", {v}, {{"perm", perm}});
  return ctx.Emit("reshape", {v}, {{"shape", shape}});
}

}  // namespace

// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW, as reshape-transpose-reshape.
void ConvertDepthSpace(ImportContext& ctx) {
  const std::vector<int64_t>& in = ctx.Input(0).shape;
  if (in.size() != 4) ctx.Fail("input of rank {} (rank 4 expected)", in.size());
  int64_t b = ctx.AttrInt("blocksize", 0);
  if (b < 1) ctx.Fail("blocksize {} (at least 1 expected)", b);
  int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  Ints split, perm, shape;
  if (ctx.node().op_type() == "DepthToSpace") {
    if (c % (b * b) != 0) ctx.Fail("{} channels are not a multiple of blocksize^2 = {}", c, b * b);
    std::string mode = ctx.AttrString("mode", "DCR");
    if (mode == "DCR") {
      split = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      split = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      ctx.Fail("mode '{}' (DCR or CRD expected)", mode);
    }
    shape = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) ctx.Fail("{}x{} is not a multiple of blocksize {}", h, w, b);
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    shape = {n, c * b * b, h / b, w / b};
  }
  if (ctx.Input(0).is_host()) {
    NDArray t = HostTranspose(HostReshape(ctx.Input(0).host, split), perm);
    ctx.SetHost(0, HostReshape(t, shape));
    return;
  }
  ctx.SetPlain(0, Rearranged(ctx, split, perm, shape));
}

// Tile: x reshaped to [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], reshaped to
// [r0 d0, r1 d1, ...].
void ConvertTile(ImportContext& ctx) {
  const std::vector<int64_t>& in = ctx.Input(0).shape;
  std::vector<int64_t> repeats = HostInts(ctx.HostInput(1, "repeats"));
  if (repeats.size() != in.size()) {
    ctx.Fail("{} repeats for an input of rank {}", repeats.size(), in.size());
  }
  Ints split, wide, shape;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 1) ctx.Fail("repeat {} on axis {} (at least 1 expected)", repeats[d], d);
    split.insert(split.end(), {1, in[d]});
    wide.insert(wide.end(), {repeats[d], in[d]});
    shape.push_back(repeats[d] * in[d]);
  }
  ctx.CheckHostShape(shape);
  const ImportedValue& x = ctx.Input(0);
  if (x.is_host()) {
    ctx.SetHost(0, HostReshape(HostExpand(HostReshape(x.host, split), wide), shape));
    return;
  }
  ValueId v = ctx.Emit("reshape", {ctx.Plain(0)}, {{"shape", split}});
  v = ctx.Emit("broadcast_to", {v}, {{"shape", wide}});
  ctx.SetPlain(0, ctx.Emit("reshape", {v}, {{"shape", shape}}));
}

// Split along `axis` into the given sizes (the `split` attribute before opset 13, an input from
// 13 on), else into equal parts, one per output (from opset 18 `num_outputs` parts, the last
// smaller when the axis does not divide).
void ConvertSplit(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  int64_t axis = ctx.NormalizeAxis(ctx.AttrInt("axis", 0), rank);
  int64_t extent = x.shape[axis];
  int outputs = ctx.node().output_size();
  std::vector<int64_t> sizes =
      ctx.opset() < 13 ? ctx.AttrInts("split", {})
                       : (ctx.HasInput(1) ? HostInts(ctx.HostInput(1, "split")) : Ints{});
  if (sizes.empty()) {
    int64_t parts = ctx.opset() >= 18 ? ctx.AttrInt("num_outputs", outputs) : outputs;
    if (parts < 1) ctx.Fail("{} parts", parts);
    int64_t chunk = ctx.opset() >= 18 ? (extent + parts - 1) / parts : extent / parts;
    if (ctx.opset() < 18 && extent % parts != 0) {
      ctx.Fail("extent {} does not split into {} equal parts", extent, parts);
    }
    for (int64_t i = 0, left = extent; i < parts; ++i, left -= chunk) {
      sizes.push_back(std::min(chunk, left));
    }
  }
  if (static_cast<int>(sizes.size()) != outputs) {
    ctx.Fail("{} split sizes for {} outputs", sizes.size(), outputs);
  }
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != extent) {
    ctx.Fail("split sizes {} do not add up to extent {}", ShapeString(sizes), extent);
  }
  int64_t start = 0;
  for (int i = 0; i < outputs; start += sizes[i], ++i) {
    if (ctx.node().output(i).empty()) continue;
    if (sizes[i] <= 0) ctx.Fail("output {} would be empty", i);
    Ints begin(rank, 0), end = x.shape, strides(rank, 1), out_shape = x.shape;
    begin[axis] = start;
    end[axis] = start + sizes[i];
    out_shape[axis] = sizes[i];
    if (x.is_host()) {
      ctx.SetHost(i, HostSlice(x.host, begin, strides, out_shape));
      continue;
    }
    ctx.SetPlain(i, ctx.Emit("strided_slice", {ctx.Plain(0)},
                             {{"begin", begin}, {"end", end}, {"strides", strides}}));
  }
}

// Trilu: x times a 0/1 mask of the last two axes made here (shapes are static): upper keeps
// j - i >= k, lower j - i <= k.
void ConvertTrilu(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  if (x.shape.size() < 2) ctx.Fail("input of rank {} (at least 2 expected)", x.shape.size());
  int64_t k = ctx.HasInput(1) ? static_cast<int64_t>(ctx.HostScalar(1, "k")) : 0;
  bool upper = ctx.AttrInt("upper", 1) != 0;
  int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  if (rows == 0 || cols == 0) ctx.Fail("the input is empty");
  NDArray mask = NDArray::Empty({rows, cols}, x.dtype);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      bool keep = upper ? j - i >= k : j - i <= k;
      mask.SetDouble(i * cols + j, keep ? 1 : 0);
    }
  }
  if (x.is_host()) {
    ctx.SetHost(0, HostBinary(x.host, mask, x.dtype, [](double v, double m) { return v * m; }));
    return;
  }
  ctx.RequireNumber(0);
  ctx.SetPlain(0, ctx.Emit("multiply", {ctx.Plain(0), ctx.Constant(HostCast(mask, x.dtype))}));
}

// Size: the element count, known at import time.
void ConvertSize(ImportContext& ctx) {
  ctx.SetHost(0, HostReshape(MakeInts({NumElements(ctx.Input(0).shape)}), {}));
}

// Pad: negative pads crop first (a strided_slice); then `pad` for constant mode, `mirror_pad`
// for edge, reflect and wrap (opset 19). The pads (and from opset 18 the axes they apply to) and
// the constant are known at import time.
void ConvertPad(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  std::string mode = ctx.AttrString("mode", "constant");
  std::vector<int64_t> pads;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = ctx.AttrInts("pads", {});
    value = ctx.AttrFloat("value", 0.0f);
  } else {
    pads = HostInts(ctx.HostInput(1, "pads"));
    if (ctx.HasInput(2)) value = ctx.HostScalar(2, "constant_value");
  }
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.HasInput(3)) {
    axes = HostInts(ctx.HostInput(3, "axes"));
  } else {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    ctx.Fail("{} pads for {} axes (two per axis expected)", pads.size(), axes.size());
  }
  Ints before(rank, 0), after(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank) ctx.Fail("axis {} out of range for rank {}", axes[k], rank);
    before[a] = pads[k];
    after[a] = pads[k + axes.size()];
  }
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap") {
    ctx.Fail("mode '{}' is not supported (constant, edge, reflect or wrap)", mode);
  }
  ValueId v = ctx.Plain(0);
  Ints begin(rank, 0), end = x.shape, strides(rank, 1);
  bool crop = false;
  for (int d = 0; d < rank; ++d) {
    if (before[d] < 0) begin[d] = -before[d], before[d] = 0, crop = true;
    if (after[d] < 0) end[d] = x.shape[d] + after[d], after[d] = 0, crop = true;
    if (begin[d] >= end[d]) ctx.Fail("the pads crop axis {} to nothing", d);
  }
  if (crop) {
    v = ctx.Emit("strided_slice", {v}, {{"begin", begin}, {"end", end}, {"strides", strides}});
  }
  bool any = std::any_of(before.begin(), before.end(), [](int64_t p) { return p > 0; }) ||
             std::any_of(after.begin(), after.end(), [](int64_t p) { return p > 0; });
  if (any && mode == "constant") {
    v = ctx.Emit("pad", {v}, {{"pads_before", before}, {"pads_after", after}, {"value", value}});
  } else if (any) {
    v = ctx.Emit("mirror_pad", {v},
                 {{"pads_before", before}, {"pads_after", after}, {"mode", mode}});
  } else if (!crop) {
    ctx.Alias(0, 0);
    return;
  }
  ctx.SetPlain(0, v);
}

}  // namespace tirtune::graph::onnx_import
