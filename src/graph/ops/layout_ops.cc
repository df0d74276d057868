// Injective data-movement operators: reshape, flatten, transpose, concat, pad, strided_slice and
// take (ONNX's Gather), gather_elements, mirror_pad, and one_hot.
#include <fmt/format.h>

#include "op_families.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/layout.h"

namespace tirtune::graph {
namespace {

using te::Tensor;

// ONNX's reshape rules: 0 copies the input's extent, one -1 takes what is left.
std::vector<int64_t> ResolveShape(const Tensor& x, const std::vector<int64_t>& shape) {
  int64_t size = 1;
  for (int d = 0; d < x.ndim(); ++d) size *= x.dim(d);
  std::vector<int64_t> out = shape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 0) {
      if (static_cast<int>(d) >= x.ndim()) TT_USER_ERROR("reshape: 0 at {} past the input", d);
      out[d] = x.dim(static_cast<int>(d));
    }
    if (out[d] == -1) {
      if (inferred >= 0) TT_USER_ERROR("reshape: more than one -1 in the shape");
      inferred = static_cast<int>(d);
      continue;
    }
    if (out[d] < 1) TT_USER_ERROR("reshape: extent {} in the new shape", out[d]);
    known *= out[d];
  }
  if (inferred >= 0) {
    if (size % known != 0) TT_USER_ERROR("reshape: {} elements do not fill the shape", size);
    out[inferred] = size / known;
  }
  return out;
}

// Joins every input along `axis` (the other extents must agree): nested selects, each load
// clamped into its input since both branches of a select may be evaluated.
Tensor ConcatAll(const std::vector<Tensor>& in, int64_t axis_attr) {
  const Tensor& first = in[0];
  int axis = NormalizeAxis(axis_attr, first.ndim(), "concat");
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (const Tensor& t : in) {
    if (t.ndim() != first.ndim() || t.dtype() != first.dtype()) {
      TT_USER_ERROR("concat: {} is {} but {} has rank {} and type {}", t.name(), t.dtype().str(),
                    first.name(), first.ndim(), first.dtype().str());
    }
    for (int d = 0; d < first.ndim(); ++d) {
      if (d != axis && t.dim(d) != first.dim(d)) {
        TT_USER_ERROR("concat: dimension {} of {} is {}, of {} is {}", d, t.name(), t.dim(d),
                      first.name(), first.dim(d));
      }
    }
    offsets.push_back(total);
    total += t.dim(axis);
  }
  std::vector<Expr> shape = first.shape();
  shape[axis] = Expr(total);
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        Expr value;
        for (size_t i = in.size(); i-- > 0;) {
          std::vector<Expr> indices = te::AsIndices(v);
          Expr local = v[axis] - offsets[i];
          if (offsets[i] > 0) local = Max(local, Expr(int64_t{0}));
          if (i + 1 < in.size()) local = Min(local, Expr(in[i].dim(axis) - 1));
          indices[axis] = local;
          Expr load = in[i](indices);
          value = value.defined() ? Select(v[axis] < offsets[i + 1], load, value) : load;
        }
        return value;
      },
      "T_concat");
}

// out[i...] = x[begin + i * stride ...] along every axis; `end` is exclusive and, like `begin`,
// already inside the axis (the ONNX importer clamps them).
Tensor StridedSlice(const Tensor& x, const Attrs& attrs) {
  const Ints& begin = attrs.GetInts("begin");
  const Ints& end = attrs.GetInts("end");
  const Ints& strides = attrs.GetInts("strides");
  if (static_cast<int>(begin.size()) != x.ndim() || end.size() != begin.size() ||
      strides.size() != begin.size()) {
    TT_USER_ERROR("strided_slice: begin, end and strides need one entry per axis of {} (rank {})",
                  x.name(), x.ndim());
  }
  std::vector<Expr> shape;
  for (int d = 0; d < x.ndim(); ++d) {
    int64_t b = begin[d], e = end[d], s = strides[d];
    if (s == 0) TT_USER_ERROR("strided_slice: stride 0 on axis {}", d);
    bool in_range = b >= 0 && b < x.dim(d) && e >= -1 && e <= x.dim(d);
    int64_t extent = s > 0 ? (e - b + s - 1) / s : (b - e + (-s) - 1) / (-s);
    if (!in_range || extent < 1) {
      TT_USER_ERROR("strided_slice: axis {} of extent {}: [{}, {}) by {} is empty or out of range",
                    d, x.dim(d), b, e, s);
    }
    shape.push_back(Expr(extent));
  }
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> indices;
        for (int d = 0; d < x.ndim(); ++d) indices.push_back(v[d] * strides[d] + begin[d]);
        return x(indices);
      },
      "T_strided_slice");
}

// out[a..., i..., b...] = data[a..., indices[i...], b...]; negative indices count from the end,
// and every index is clamped into the axis (loads never leave the buffer).
Tensor Take(const Tensor& data, const Tensor& indices, int64_t axis_attr) {
  int axis = NormalizeAxis(axis_attr, data.ndim(), "take");
  if (!indices.dtype().is_int()) {
    TT_USER_ERROR("take: indices {} are {}, expected an integer type", indices.name(),
                  indices.dtype().str());
  }
  std::vector<Expr> shape;
  for (int d = 0; d < axis; ++d) shape.push_back(data.dim(d));
  for (int d = 0; d < indices.ndim(); ++d) shape.push_back(indices.dim(d));
  for (int d = axis + 1; d < data.ndim(); ++d) shape.push_back(data.dim(d));
  int64_t extent = data.dim(axis);
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> index_of_index(v.begin() + axis, v.begin() + axis + indices.ndim());
        Expr i = Cast(DataType::Int(64), indices(index_of_index));
        i = Select(i < int64_t{0}, i + extent, i);
        i = Min(Max(i, Expr(int64_t{0})), Expr(extent - 1));
        std::vector<Expr> load(v.begin(), v.begin() + axis);
        load.push_back(i);
        load.insert(load.end(), v.begin() + axis + indices.ndim(), v.end());
        // The select is always true; its second read makes the block's read region of `data`
        // the whole axis rather than a region whose bounds load `indices` (not well-formed).
        std::vector<Expr> first = load;
        first[axis] = Expr(int64_t{0});
        return Select(i >= int64_t{0}, data(load), data(first));
      },
      "T_take");
}

// GatherElements: out[v] = data[v with v[axis] replaced by indices[v]] (negative indices count
// from the end; every index is clamped into the axis, so loads never leave the buffer).
Tensor GatherElements(const Tensor& data, const Tensor& indices, int64_t axis_attr) {
  int axis = NormalizeAxis(axis_attr, data.ndim(), "gather_elements");
  if (!indices.dtype().is_int()) {
    TT_USER_ERROR("gather_elements: indices {} are {}, expected an integer type", indices.name(),
                  indices.dtype().str());
  }
  if (indices.ndim() != data.ndim()) {
    TT_USER_ERROR("gather_elements: indices of rank {} for data of rank {}", indices.ndim(),
                  data.ndim());
  }
  std::vector<Expr> shape;
  for (int d = 0; d < indices.ndim(); ++d) {
    if (d != axis && indices.dim(d) > data.dim(d)) {
      TT_USER_ERROR("gather_elements: indices extent {} past the data's {} on axis {}",
                    indices.dim(d), data.dim(d), d);
    }
    shape.push_back(indices.dim(d));
  }
  int64_t extent = data.dim(axis);
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        Expr i = Cast(DataType::Int(64), indices(te::AsIndices(v)));
        i = Select(i < int64_t{0}, i + extent, i);
        i = Min(Max(i, Expr(int64_t{0})), Expr(extent - 1));
        std::vector<Expr> load(v.begin(), v.end());
        load[axis] = i;
        // As in Take: the always-true select's second read keeps the read region well-formed.
        std::vector<Expr> first = load;
        first[axis] = Expr(int64_t{0});
        return Select(i >= int64_t{0}, data(load), data(first));
      },
      "T_gather_elements");
}

// OneHot: `indices` with an axis of `depth` inserted at `axis`; on_value where the position along
// it equals the index (truncated toward zero, negative ones counting from depth), off_value
// elsewhere; indices outside [-depth, depth) give a row of off_value.
Tensor OneHot(const Tensor& indices, const Attrs& attrs) {
  int64_t depth = attrs.GetInt("depth");
  if (depth < 1) TT_USER_ERROR("one_hot: depth {} (at least 1 expected)", depth);
  int axis = NormalizeAxis(attrs.GetInt("axis"), indices.ndim() + 1, "one_hot");
  std::vector<Expr> shape;
  for (int d = 0; d < indices.ndim(); ++d) shape.push_back(indices.dim(d));
  shape.insert(shape.begin() + axis, Expr(depth));
  Expr on = MakeConst(DataType::Float(32), attrs.GetFloat("on_value"));
  Expr off = MakeConst(DataType::Float(32), attrs.GetFloat("off_value"));
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> at;
        for (size_t d = 0; d < v.size(); ++d) {
          if (static_cast<int>(d) != axis) at.push_back(v[d]);
        }
        Expr i = Cast(DataType::Int(64), indices(at));
        i = Select(i < int64_t{0}, i + depth, i);
        return Select(Eq(i, Cast(DataType::Int(64), v[static_cast<size_t>(axis)])), on, off);
      },
      "T_one_hot");
}

// Edge, reflect or wrap padding: every output element reads the input at an index folded back
// into the axis (edge: clamped; reflect: mirrored about the first and last element, so a pad must
// be shorter than its axis; wrap: modulo the extent, as if the axis were a ring).
Tensor MirrorPad(const Tensor& x, const Attrs& attrs) {
  std::vector<int64_t> before = attrs.GetInts("pads_before"), after = attrs.GetInts("pads_after");
  const std::string& mode = attrs.GetString("mode");
  if (mode != "edge" && mode != "reflect" && mode != "wrap") {
    TT_USER_ERROR("mirror_pad: mode '{}' (edge, reflect or wrap expected)", mode);
  }
  if (before.size() != static_cast<size_t>(x.ndim()) || after.size() != before.size()) {
    TT_USER_ERROR("mirror_pad: {} and {} pads for rank {}", before.size(), after.size(), x.ndim());
  }
  std::vector<Expr> shape;
  for (int d = 0; d < x.ndim(); ++d) {
    int64_t n = x.dim(d);
    if (before[d] < 0 || after[d] < 0) TT_USER_ERROR("mirror_pad: a negative pad");
    if (mode == "reflect" && (before[d] >= n || after[d] >= n)) {
      TT_USER_ERROR("mirror_pad: reflect pads {} and {} on an axis of {} (at most {})", before[d],
                    after[d], n, n - 1);
    }
    shape.push_back(Expr(n + before[d] + after[d]));
  }
  bool reflect = mode == "reflect";
  return te::Compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> index;
        for (int d = 0; d < x.ndim(); ++d) {
          int64_t n = x.dim(d);
          Expr i = Expr(v[d]) - Expr(before[d]);
          if (mode == "wrap") {
            index.push_back(FloorMod(i, Expr(n)));
            continue;
          }
          if (reflect) {
            i = Select(i < int64_t{0}, Expr(int64_t{0}) - i, i);
            i = Select(i > n - 1, Expr(2 * (n - 1)) - i, i);
          }
          index.push_back(Min(Max(i, Expr(int64_t{0})), Expr(n - 1)));
        }
        return x(index);
      },
      "T_mirror_pad");
}

}  // namespace

std::vector<OpDef> LayoutOps() {
  std::vector<OpDef> ops;
  ops.push_back(OpDef{
      .name = "reshape",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {RequiredIntsAttr("shape")},
      .pattern = OpPattern::kInjective,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            return te::Reshape(in[0], ResolveShape(in[0], attrs.GetInts("shape")));
          },
      .example_inputs = {F32({2, 3, 4})},
      .example_attrs = {{"shape", Ints{4, -1}}},
  });
  ops.push_back(OpDef{
      .name = "flatten",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {IntAttr("axis", 1)},
      .pattern = OpPattern::kInjective,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            const Tensor& x = in[0];
            int64_t axis = attrs.GetInt("axis");
            if (axis < 0) axis += x.ndim();
            if (axis < 0 || axis > x.ndim()) TT_USER_ERROR("flatten: axis out of range");
            int64_t outer = 1, inner = 1;
            for (int d = 0; d < x.ndim(); ++d) (d < axis ? outer : inner) *= x.dim(d);
            return te::Reshape(x, {outer, inner}, "T_flatten");
          },
      .example_inputs = {F32({2, 3, 1, 4})},
      .example_attrs = {},
  });
  ops.push_back(OpDef{
      .name = "transpose",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {RequiredIntsAttr("perm")},
      .pattern = OpPattern::kInjective,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            const Ints& perm = attrs.GetInts("perm");
            return te::Transpose(in[0], std::vector<int>(perm.begin(), perm.end()));
          },
      .example_inputs = {F32({2, 3, 4})},
      .example_attrs = {{"perm", Ints{2, 0, 1}}},
  });
  ops.push_back(OpDef{
      .name = "concat",
      .inputs = {"data"},
      .variadic = true,
      .attrs = {AttrSpec{"axis", AttrType::kInt, true, int64_t{0}}},
      .pattern = OpPattern::kInjective,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs& attrs) { return ConcatAll(in, attrs.GetInt("axis")); },
      .example_inputs = {F32({2, 3}), F32({2, 1}), F32({2, 4})},
      .example_attrs = {{"axis", 1}},
  });
  ops.push_back(OpDef{
      .name = "pad",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {RequiredIntsAttr("pads_before"), RequiredIntsAttr("pads_after"),
                FloatAttr("value", 0.0)},
      .pattern = OpPattern::kInjective,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            return te::Pad(in[0], attrs.GetInts("pads_before"), attrs.GetInts("pads_after"),
                           attrs.GetFloat("value"), "T_pad");
          },
      .example_inputs = {F32({1, 3, 4, 2})},
      .example_attrs = {{"pads_before", Ints{0, 1, 1, 0}}, {"pads_after", Ints{0, 1, 2, 0}}},
  });
  ops.push_back(OpDef{
      .name = "gather_elements",
      .inputs = {"data", "indices"},
      .variadic = false,
      .attrs = {IntAttr("axis", 0)},
      .pattern = OpPattern::kInjective,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            return GatherElements(in[0], in[1], attrs.GetInt("axis"));
          },
      .example_inputs = {F32({3, 4}), TensorType{{2, 4}, DataType::Int(64)}},
      .example_attrs = {},
  });
  ops.push_back(OpDef{
      .name = "one_hot",
      .inputs = {"indices"},
      .variadic = false,
      .attrs = {IntAttr("depth", 1), IntAttr("axis", -1), FloatAttr("on_value", 1.0),
                FloatAttr("off_value", 0.0)},
      .pattern = OpPattern::kBroadcast,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs& attrs) { return OneHot(in[0], attrs); },
      .example_inputs = {TensorType{{2, 3}, DataType::Int(64)}},
      .example_attrs = {{"depth", 4}, {"axis", 1}},
  });
  ops.push_back(OpDef{
      .name = "mirror_pad",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {RequiredIntsAttr("pads_before"), RequiredIntsAttr("pads_after"),
                AttrSpec{"mode", AttrType::kString, false, std::string("edge")}},
      .pattern = OpPattern::kInjective,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs& attrs) { return MirrorPad(in[0], attrs); },
      .example_inputs = {F32({1, 3, 4, 2})},
      .example_attrs = {{"pads_before", Ints{0, 1, 2, 0}},
                        {"pads_after", Ints{0, 2, 1, 0}},
                        {"mode", std::string("reflect")}},
  });
  ops.push_back(OpDef{
      .name = "strided_slice",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {RequiredIntsAttr("begin"), RequiredIntsAttr("end"), RequiredIntsAttr("strides")},
      .pattern = OpPattern::kInjective,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs& attrs) { return StridedSlice(in[0], attrs); },
      .example_inputs = {F32({2, 5, 4})},
      .example_attrs = {{"begin", Ints{0, 1, 3}},
                        {"end", Ints{2, 5, -1}},
                        {"strides", Ints{1, 2, -2}}},
  });
  ops.push_back(OpDef{
      .name = "take",
      .inputs = {"data", "indices"},
      .variadic = false,
      .attrs = {IntAttr("axis", 0)},
      .pattern = OpPattern::kInjective,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs& attrs) { return Take(in[0], in[1], attrs.GetInt("axis")); },
      .example_inputs = {F32({5, 3}), TensorType{{2, 2}, DataType::Int(64)}},
      .example_attrs = {},
  });
  return ops;
}

}  // namespace tirtune::graph
