// Integer sets for region and bound inference: intervals [min, max] with symbolic ends, the set of
// values an expression takes when its variables range over sets (EvalSet), and the covering
// region of a buffer access inside a loop nest (EvalRegion).
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/buffer.h"
#include "tirtune/ir/expr.h"

namespace tirtune::arith {

/// The integers in [min, max], both ends inclusive and possibly symbolic. An undefined end is
/// unbounded on that side. The empty set is a separate state (Nothing).
class IntSet {
 public:
  /// [min, max]; pass an undefined Expr for an unbounded end.
  static IntSet Interval(Expr min, Expr max);
  static IntSet Point(Expr value);
  static IntSet Everything();
  static IntSet Nothing();
  /// [range.min, range.min + range.extent - 1], simplified.
  static IntSet FromRange(const Range& range);

  /// The lower and upper end; undefined when unbounded on that side.
  const Expr& min() const { return min_; }
  const Expr& max() const { return max_; }
  bool HasLowerBound() const { return min_.defined(); }
  bool HasUpperBound() const { return max_.defined(); }
  bool IsEverything() const { return !nothing_ && !min_.defined() && !max_.defined(); }
  bool IsNothing() const { return nothing_; }
  /// True when both ends are the same expression (the set holds one value).
  bool IsSinglePoint() const;
  /// The single value; only when IsSinglePoint().
  const Expr& PointValue() const;

  /// The range [min, max - min + 1] covering the set, simplified; nullopt when unbounded. An
  /// empty set covers the empty range [0, 0).
  std::optional<Range> CoverRange(Analyzer* analyzer) const;

 private:
  Expr min_, max_;
  bool nothing_ = false;
};

/// The smallest interval holding both sets.
IntSet Union(const IntSet& a, const IntSet& b, Analyzer* analyzer);
/// The interval of values in both sets; Nothing when that is provably empty.
IntSet Intersect(const IntSet& a, const IntSet& b, Analyzer* analyzer);

using VarIntSetMap = std::unordered_map<Var, IntSet, ObjectPtrHash, ObjectPtrEqual>;
using VarRangeMap = std::unordered_map<Var, Range, ObjectPtrHash, ObjectPtrEqual>;

/// An interval holding every value `expr` takes when each variable in `dom_map` ranges over its
/// set (variables not in the map are fixed symbols). Handles + - ×, floordiv/floormod and
/// truncating division by constants or values of known sign, min, max, select, casts, ramps and
/// broadcasts; anything else that depends on a mapped variable is Everything(). `analyzer`
/// (may be null) supplies facts about the other variables and simplifies the ends.
IntSet EvalSet(const Expr& expr, const VarIntSetMap& dom_map, Analyzer* analyzer = nullptr);
IntSet EvalSet(const Expr& expr, const VarRangeMap& dom_map, Analyzer* analyzer = nullptr);

/// The covering range of each index of a buffer access when the loop variables in `dom_map`
/// range over their domains, e.g. indices [i*4 + j] with i in [0, 8), j in [0, 4) give
/// [Range(0, 32)]. Throws InternalError when an index is unbounded (a data-dependent index);
/// use EvalBufferRegion to fall back to the whole dimension instead.
std::vector<Range> EvalRegion(const std::vector<Expr>& indices, const VarRangeMap& dom_map,
                              Analyzer* analyzer = nullptr);

/// Like EvalRegion, but a dimension whose index cannot be bounded covers the buffer's whole
/// extent in that dimension.
BufferRegion EvalBufferRegion(const Buffer& buffer, const std::vector<Expr>& indices,
                              const VarRangeMap& dom_map, Analyzer* analyzer = nullptr);

}  // namespace tirtune::arith
