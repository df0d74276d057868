// Packed layouts: a constant parameter (a weight) stored in the order a scheduled kernel reads it,
// as Schedule::TransformLayout sets and MetaSchedule's layout rewrite does. A packed layout
// splits each axis of the source tensor into digits of a mixed radix and orders all the digits
// freely:
//
//   source W[co, ci] of shape (64, 48), dims [(co, 16, 4), (ci, 1, 48), (co, 1, 16)]
//   packed Wp[co / 16, ci, co % 16] of shape (4, 48, 16)
//
// The outermost digit of an axis may cover more than the axis (a tile that does not divide it);
// those packed elements are zeros and no access reaches them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/support/ndarray.h"

namespace tirtune {

struct PackedLayout {
  /// One packed dimension: digit (x / divisor) % extent of source axis `axis` (the outermost
  /// digit of an axis is x / divisor).
  struct Dim {
    int axis = 0;
    int64_t divisor = 1;
    int64_t extent = 1;
    bool operator==(const Dim&) const = default;
  };
  std::vector<int64_t> source_shape;
  std::vector<Dim> dims;

  bool operator==(const PackedLayout&) const = default;
  std::vector<int64_t> PackedShape() const;
  /// Throws UserError naming the problem unless every axis is split into digits that cover it
  /// exactly once: the smallest divisor of an axis is 1, each digit's divisor is the next inner
  /// digit's divisor times that digit's extent, the outermost reaches past the axis by less than
  /// one of its steps; an axis of extent 1 may have no digit.
  void Check() const;
  /// True when packing changes nothing: the digits in source order (each axis's outermost
  /// first) and no padding, so the packed elements are the source's in the same order.
  bool IsIdentity() const;
  /// The packed indices of the element at `source_indices` (expressions of the caller's loops).
  std::vector<Expr> PackedIndices(const std::vector<Expr>& source_indices) const;
  /// `source` (of source_shape) in the packed layout; padding elements are zero.
  NDArray Pack(const NDArray& source) const;
  /// The inverse: the source tensor of a packed one.
  NDArray Unpack(const NDArray& packed) const;

  std::string ToJson() const;
  /// UserError naming `what` for malformed text or a layout Check rejects.
  static PackedLayout FromJson(const std::string& text, const std::string& what);
};

/// The function attribute Schedule::TransformLayout sets: a JSON object from parameter index to
/// that parameter's packed layout (PackedLayout::ToJson); the parameter's buffer has the packed
/// shape and its caller passes PackedLayout::Pack of the tensor the function was written for.
inline constexpr const char* kPackedParamsAttr = "tirtune.packed_params";
/// The function attribute naming the parameters whose layout a schedule may choose (constants
/// of a model, weights of a workload): comma-separated parameter indices.
inline constexpr const char* kLayoutFreeAttr = "tirtune.layout_free";

/// The packed parameters of `func`, by index (none without kPackedParamsAttr). UserError for a
/// malformed attribute.
std::map<int, PackedLayout> PackedParams(const PrimFunc& func);
/// `func` with kPackedParamsAttr stating `packed` (the attribute removed when empty).
PrimFunc WithPackedParams(const PrimFunc& func, const std::map<int, PackedLayout>& packed);
/// The parameter indices of kLayoutFreeAttr, ascending (none without it).
std::vector<int> LayoutFreeParams(const PrimFunc& func);
/// `func` with kLayoutFreeAttr naming `params` (the attribute removed when empty).
PrimFunc WithLayoutFreeParams(const PrimFunc& func, const std::vector<int>& params);

}  // namespace tirtune
