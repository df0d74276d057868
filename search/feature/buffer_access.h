// One buffer access of a store, seen as an affine function of the loops around the store, and the
// footprint quantities the per-store features are made of (private to search/feature/).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tirtune/ir/buffer.h"

namespace tirtune::feature {

/// A load or the store itself. The element index is offset + sum(coef[k] * loop_k) +
/// lane_stride * lane plus terms that do not vary with the loops; floordiv/floormod and other
/// non-affine terms are approximated by the coefficients of their first operand (scaled by
/// 1/divisor for floordiv).
struct BufferAccess {
  const BufferNode* buffer = nullptr;
  bool is_write = false;
  int elem_bytes = 4;
  /// Lanes of the access: a ramp index touches `lanes` elements per execution.
  int lanes = 1;
  double lane_stride = 0;
  /// One coefficient per loop around the store, outermost first.
  std::vector<double> coef;
  /// The constant part of the index.
  double offset = 0;
};

/// Maps the variable of each loop around a store to its position (0 = outermost).
using LoopPositions = std::unordered_map<const VarNode*, int>;

/// The access of `buffer` at `indices` (row-major over the buffer's constant shape when it has
/// several dimensions) from inside loops `loops` (size `num_loops`).
BufferAccess AnalyzeAccess(const Buffer& buffer, const std::vector<Expr>& indices, bool is_write,
                           const LoopPositions& loops, size_t num_loops);

/// What an access touches while the loops from `first_loop` inwards run once (all their
/// iterations), lanes included.
struct Footprint {
  /// Element accesses, counting repeats.
  double touches = 0;
  /// Distinct elements.
  double unique = 0;
  /// Cache lines brought in, counting a line again whenever the access left it in between.
  double lines = 0;
  /// Distinct cache lines.
  double unique_lines = 0;
  /// Element stride of the innermost loop (or lane) that moves the access; 0 when none does.
  double stride = 0;
};

/// The footprint of `access` over loops [first_loop, extents.size()) with the given extents.
Footprint ComputeFootprint(const BufferAccess& access, const std::vector<int64_t>& extents,
                           size_t first_loop);

}  // namespace tirtune::feature
