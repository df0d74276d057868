// Tensors known at import time (initializers, Constant nodes, shape computations) and the few
// operations the importer evaluates on them directly: transposes, reshapes and NumPy-broadcast
// elementwise arithmetic. Private to the ONNX importer; no protobuf here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tirtune/support/ndarray.h"

namespace tirtune::graph::onnx_import {

/// Host tensors hold one of three element types: float32, int64 (every ONNX integer type) and
/// bool (one byte per element).
inline bool IsBool(DataType t) { return t == DataType::Bool(); }

/// The most elements a tensor computed at import time may have (2^28).
inline constexpr int64_t kMaxHostElements = int64_t{1} << 28;
/// An uninitialized tensor for an import-time result; UserError naming the shape past
/// kMaxHostElements ("too large to compute at import time").
NDArray HostEmpty(const std::vector<int64_t>& shape, DataType dtype);

/// Product of the extents; UserError naming the shape beyond 2^48 elements (or on overflow).
int64_t NumElements(const std::vector<int64_t>& shape);

/// "[1, 3, 224, 224]".
std::string ShapeString(const std::vector<int64_t>& shape);

/// The axes of `t` permuted: out dimension d is t's dimension perm[d].
NDArray HostTranspose(const NDArray& t, const std::vector<int64_t>& perm);

/// The same elements under another shape of equal size.
NDArray HostReshape(const NDArray& t, std::vector<int64_t> shape);

/// The elements as int64 (for shape-like tensors); floats are truncated.
std::vector<int64_t> HostInts(const NDArray& t);

/// A 1-D int64 tensor.
NDArray MakeInts(const std::vector<int64_t>& values);

/// A float32 tensor of shape [1] (broadcasts against anything).
NDArray FloatScalar(double value);

/// The largest finite float32: the padding of max pools, the bounds of an unbounded Clip.
constexpr double kLargestFloat32 = 3.4028234663852886e38;

/// Element type conversion (nonzero is true; floats to integers truncate and saturate): between
/// the three host types, and to any graph element type for a constant the graph takes.
NDArray HostCast(const NDArray& t, DataType to);

/// The host type holding values of graph element type `t`: float32 for floats, int64 for
/// integers, bool for bool.
inline DataType HostForm(DataType t) {
  if (t.is_bool()) return DataType::Bool();
  return t.is_float() ? DataType::Float(32) : DataType::Int(64);
}

/// The NumPy broadcast of two shapes; `*ok` is set to false when they do not broadcast.
std::vector<int64_t> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     bool* ok);

/// out[i] = f(a[i'], b[i'']) under broadcasting, in double, stored as `out_dtype`.
NDArray HostBinary(const NDArray& a, const NDArray& b, DataType out_dtype,
                   const std::function<double(double, double)>& f);

/// where(cond, x, y) under broadcasting.
NDArray HostWhere(const NDArray& cond, const NDArray& x, const NDArray& y);

/// x broadcast to `shape` (NumPy rules, as ONNX's Expand: the result has the broadcast shape).
NDArray HostExpand(const NDArray& x, const std::vector<int64_t>& shape);

/// Elements of `data` at `indices` along `axis` (ONNX Gather); negative indices count from the
/// end. Returns an undefined array when an index is out of range.
NDArray HostGather(const NDArray& data, const NDArray& indices, int axis);

/// data[starts[d] : ends[d] : steps[d]] per axis, with clamped starts/ends (ONNX Slice after
/// normalization).
NDArray HostSlice(const NDArray& data, const std::vector<int64_t>& starts,
                  const std::vector<int64_t>& steps, const std::vector<int64_t>& out_shape);

/// `inputs` joined along `axis`.
NDArray HostConcat(const std::vector<NDArray>& inputs, int axis);

}  // namespace tirtune::graph::onnx_import
