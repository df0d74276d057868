// Indexed reads and writes: GatherElements, GatherND, ScatterElements (and Scatter), ScatterND,
// OneHot, NonZero.
// Their indices are known at import time (except GatherElements', a graph input too).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "converters.h"

namespace tirtune::graph::onnx_import {

// GatherElements: the graph operator gather_elements (indices of a signed integer type).
void ConvertGatherElements(ImportContext& ctx) {
  const ImportedValue& indices = ctx.Input(1);
  if (!indices.dtype.is_int()) {
    ctx.Fail("indices are {}; a signed integer type expected", indices.dtype.str());
  }
  ctx.SetPlain(0, ctx.Emit("gather_elements", {ctx.Plain(0), ctx.Plain(1)},
                           {{"axis", ctx.AttrInt("axis", 0)}}));
}

namespace {

// The scatters with their indices known at import time: `target[u]` is the element of data (flat)
// that update u (flat) writes. Every output element is data's or, where written, the updates'
// (reduction none: the last; add / mul / max / min: data combined with every one, duplicates
// included): one `take` of the flattened updates per level of duplication, selected where a bool
// mask made here says so (exact for any value, infinities and NaN included).
void ScatterByTargets(ImportContext& ctx, const std::vector<int64_t>& target,
                      const std::string& reduction) {
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  int64_t size = NumElements(shape), updates = static_cast<int64_t>(target.size());
  static const std::map<std::string, std::string> combine = {
      {"none", ""}, {"add", "add"}, {"mul", "multiply"}, {"max", "maximum"}, {"min", "minimum"}};
  auto op = combine.find(reduction);
  if (op == combine.end())
    ctx.Fail("reduction '{}' (none, add, mul, max or min expected)", reduction);
  ctx.UnifyTypes({0, 2});
  ctx.RequireNumber(0);
  // sources[t]: the updates writing element t, in order.
  std::vector<std::vector<int64_t>> sources(static_cast<size_t>(size));
  for (int64_t u = 0; u < updates; ++u) sources[static_cast<size_t>(target[u])].push_back(u);
  size_t levels = 0;
  for (auto& list : sources) {
    if (reduction == "none" && list.size() > 1) list.erase(list.begin(), list.end() - 1);
    levels = std::max(levels, list.size());
  }
  ValueId flat_updates = ctx.Emit("reshape", {ctx.Plain(2)}, {{"shape", Ints{updates}}});
  ValueId out = ctx.Plain(0);
  for (size_t level = 0; level < levels; ++level) {
    std::vector<int64_t> from(static_cast<size_t>(size), 0);
    NDArray mask = NDArray::Empty(shape, DataType::Bool());
    for (int64_t t = 0; t < size; ++t) {
      bool has = sources[t].size() > level;
      from[t] = has ? sources[t][level] : 0;
      mask.SetDouble(t, has ? 1.0 : 0.0);
    }
    ValueId taken =
        ctx.Emit("take", {flat_updates, ctx.Constant(MakeInts(from))}, {{"axis", int64_t{0}}});
    taken = ctx.Emit("reshape", {taken}, {{"shape", shape}});
    ValueId written = op->second.empty() ? taken : ctx.Emit(op->second, {out, taken});
    out = ctx.Emit("where", {ctx.Constant(mask), written, out});
  }
  ctx.SetPlain(0, out);
}

}  // namespace

// ScatterElements (and the older Scatter): update u at indices[u] along `axis`, elsewhere its
// own position.
void ConvertScatterElements(ImportContext& ctx) {
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  const NDArray& indices = ctx.HostInput(1, "indices");
  const std::vector<int64_t>& ushape = ctx.Input(2).shape;
  int rank = static_cast<int>(shape.size());
  int64_t axis = ctx.NormalizeAxis(ctx.AttrInt("axis", 0), rank);
  if (indices.shape() != ushape || static_cast<int>(ushape.size()) != rank) {
    ctx.Fail("indices {} and updates {} must have one shape, of data's rank",
             ShapeString(indices.shape()), ShapeString(ushape));
  }
  std::vector<int64_t> index = HostInts(indices), target;
  for (int64_t u = 0; u < static_cast<int64_t>(index.size()); ++u) {
    int64_t t = 0;
    for (int64_t rest = u, stride = 1, d = rank - 1; d >= 0; --d) {
      int64_t at = rest % ushape[d];
      rest /= ushape[d];
      if (d == axis) {
        at = index[u] < 0 ? index[u] + shape[d] : index[u];
        if (at < 0 || at >= shape[d])
          ctx.Fail("index {} out of range for extent {}", index[u], shape[d]);
      } else if (at >= shape[d]) {
        ctx.Fail("updates {} do not fit data {}", ShapeString(ushape), ShapeString(shape));
      }
      t += at * stride;
      stride *= shape[d];
    }
    target.push_back(t);
  }
  ScatterByTargets(ctx, target, ctx.AttrString("reduction", "none"));
}

// ScatterND: update slice j at data[indices[j]] (an index of the leading indices.shape[-1] axes).
void ConvertScatterND(ImportContext& ctx) {
  const std::vector<int64_t>& shape = ctx.Input(0).shape;
  const NDArray& indices = ctx.HostInput(1, "indices");
  if (indices.shape().empty()) ctx.Fail("indices of rank 0");
  int64_t k = indices.shape().back();
  if (k < 1 || k > static_cast<int64_t>(shape.size())) ctx.Fail("indices address {} axes", k);
  int64_t slice = 1;
  for (size_t d = static_cast<size_t>(k); d < shape.size(); ++d) slice *= shape[d];
  std::vector<int64_t> index = HostInts(indices), target;
  int64_t rows = static_cast<int64_t>(index.size()) / k;
  if (NumElements(ctx.Input(2).shape) != rows * slice) {
    ctx.Fail("updates {} for {} slices of {} elements", ShapeString(ctx.Input(2).shape), rows,
             slice);
  }
  for (int64_t j = 0; j < rows; ++j) {
    int64_t base = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t at = index[j * k + d];
      if (at < 0) at += shape[d];
      if (at < 0 || at >= shape[d])
        ctx.Fail("index {} out of range for extent {}", index[j * k + d], shape[d]);
      base = base * shape[d] + at;
    }
    for (int64_t e = 0; e < slice; ++e) target.push_back(base * slice + e);
  }
  ScatterByTargets(ctx, target, ctx.AttrString("reduction", "none"));
}

// GatherND (batch_dims 0) with its indices known at import time: each index row addresses a
// row of data's leading axes flattened into one, so it is a `take` along that axis.
void ConvertGatherND(ImportContext& ctx) {
  const ImportedValue& data = ctx.Input(0);
  const NDArray& indices = ctx.HostInput(1, "indices");
  if (ctx.AttrInt("batch_dims", 0) != 0) ctx.Fail("batch_dims other than 0 is not supported");
  if (indices.shape().empty()) ctx.Fail("indices of rank 0");
  int64_t k = indices.shape().back();
  if (k < 1 || k > static_cast<int64_t>(data.shape.size())) ctx.Fail("indices address {} axes", k);
  std::vector<int64_t> index = HostInts(indices), rows;
  for (size_t j = 0; j + static_cast<size_t>(k) <= index.size(); j += static_cast<size_t>(k)) {
    int64_t row = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t at = index[j + static_cast<size_t>(d)];
      if (at < 0) at += data.shape[d];
      if (at < 0 || at >= data.shape[d])
        ctx.Fail("index {} out of range for extent {}", at, data.shape[d]);
      row = row * data.shape[d] + at;
    }
    rows.push_back(row);
  }
  Ints flat = {NumElements({data.shape.begin(), data.shape.begin() + k})};
  flat.insert(flat.end(), data.shape.begin() + k, data.shape.end());
  std::vector<int64_t> row_shape(indices.shape().begin(), indices.shape().end() - 1);
  NDArray row_index = HostReshape(MakeInts(rows), row_shape);
  if (row_shape.empty()) ctx.Fail("a single index row (a scalar gather) is not supported");
  if (data.is_host()) {
    NDArray out = HostGather(HostReshape(data.host, flat), row_index, 0);
    if (!out.defined()) ctx.Fail("an index is out of range");
    ctx.SetHost(0, out);
    return;
  }
  ValueId rows_of = ctx.Emit("reshape", {ctx.Plain(0)}, {{"shape", flat}});
  ctx.SetPlain(0, ctx.Emit("take", {rows_of, ctx.Constant(row_index)}, {{"axis", int64_t{0}}}));
}

// OneHot: depth (input 1) and the [off, on] values (input 2) known at import time. Indices known
// too: computed here; computed by the graph (float or int64), with float values: the graph
// operator one_hot.
void ConvertOneHot(ImportContext& ctx) {
  double depth = ctx.HostScalar(1, "depth");
  const NDArray& values = ctx.HostInput(2, "values");
  if (values.size() != 2) ctx.Fail("values of {} elements ([off, on] expected)", values.size());
  if (!(depth >= 1) || depth > static_cast<double>(int64_t{1} << 28)) {
    ctx.Fail("depth {} out of range", depth);
  }
  const ImportedValue& x = ctx.Input(0);
  int rank = static_cast<int>(x.shape.size());
  int axis = ctx.NormalizeAxis(ctx.AttrInt("axis", -1), rank + 1);
  auto d = static_cast<int64_t>(depth);
  if (x.is_host()) {  // computed here, in the values' type
    std::vector<int64_t> shape = x.shape;
    shape.insert(shape.begin() + axis, d);
    ctx.CheckHostShape(shape);
    int64_t inner = NumElements({x.shape.begin() + axis, x.shape.end()});
    NDArray out = HostEmpty(shape, values.dtype());
    for (int64_t o = 0; o < NumElements(shape); ++o) {
      int64_t outer = o / (d * inner), position = o / inner % d, rest = o % inner;
      auto index = static_cast<int64_t>(x.host.GetDouble(outer * inner + rest));
      if (index < 0) index += d;
      out.SetDouble(o, values.GetDouble(index == position ? 1 : 0));
    }
    ctx.SetHost(0, out);
    return;
  }
  if (values.dtype() != DataType::Float(32)) {
    ctx.Fail("{} values for indices computed by the graph (float32 expected)",
             values.dtype().str());
  }
  ctx.SetPlain(0, ctx.Emit("one_hot", {ctx.Plain(0)},
                           {{"depth", static_cast<int64_t>(depth)},
                            {"axis", int64_t{axis}},
                            {"on_value", values.GetDouble(1)},
                            {"off_value", values.GetDouble(0)}}));
}

// NonZero: the indices of the nonzero elements ([rank, count], int64, in row-major order), only of
// a tensor known at import time (the count is the output's shape).
void ConvertNonZero(ImportContext& ctx) {
  const NDArray& x = ctx.HostInput(0, "the input (its nonzero count is the output's shape)");
  std::vector<int64_t> shape = x.shape();
  if (shape.empty()) ctx.Fail("a scalar input (its indices would have no axis)");
  auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.size(); ++i) {
    if (x.GetDouble(i) != 0) hits.push_back(i);
  }
  if (hits.empty()) ctx.Fail("no nonzero element (empty tensors are not supported)");
  auto count = static_cast<int64_t>(hits.size());
  NDArray out = HostEmpty({rank, count}, DataType::Int(64));
  for (int64_t j = 0; j < count; ++j) {
    int64_t flat = hits[static_cast<size_t>(j)];
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      out.SetDouble(d * count + j, static_cast<double>(flat % shape[static_cast<size_t>(d)]));
      flat /= shape[static_cast<size_t>(d)];
    }
  }
  ctx.SetHost(0, out);
}

}  // namespace tirtune::graph::onnx_import
