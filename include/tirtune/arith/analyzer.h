// The arithmetic analyzer: a store of known facts about integer variables (their ranges) and the
// questions asked against it (simplify, prove, bound). Schedule primitives and region inference
// hold one Analyzer per transformation and bind loop ranges into it as they descend.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/expr.h"

namespace tirtune::arith {

/// Constant bounds [min_value, max_value] of an integer expression, both inclusive. The extreme
/// int64 values stand for -inf and +inf: a bound that reaches them is unknown on that side.
struct IntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;

  static IntBound Everything() { return {}; }
  static IntBound Single(int64_t v) { return {v, v}; }
  bool is_single() const { return min_value == max_value; }
  bool has_min() const { return min_value != kNegInf; }
  bool has_max() const { return max_value != kPosInf; }
  friend bool operator==(const IntBound& a, const IntBound& b) {
    return a.min_value == b.min_value && a.max_value == b.max_value;
  }
};

/// Constant bounds keyed by variable node; the facts an Analyzer knows.
using VarBoundMap = std::unordered_map<const VarNode*, IntBound>;

/// Holds facts about variables and answers questions about expressions under them. Every answer
/// is sound: "cannot prove" is always a possible answer, "proved" never lies.
class Analyzer {
 public:
  /// Records that `var` lies in [range.min, range.min + range.extent). The range's bounds are
  /// reduced to constants with the facts known so far; a symbolic end becomes unbounded. A new
  /// binding of the same variable replaces the old one.
  void Bind(const Var& var, const Range& range);
  /// Records constant bounds of `var` directly.
  void Bind(const Var& var, const IntBound& bound);
  /// Forgets what is known about `var`.
  void Unbind(const Var& var);
  /// The facts known so far.
  const VarBoundMap& var_bounds() const { return var_bounds_; }

  /// An expression mathematically equal to `expr` under the known facts, in canonical form:
  /// constants folded, integer sums as ordered `term*coeff + ... + const`, floordiv/floormod,
  /// min/max, comparisons and selects decided where the bounds allow. Floats are only folded.
  Expr Simplify(const Expr& expr);
  /// True when `cond` (a bool expression) provably holds under the known facts.
  bool CanProve(const Expr& cond);
  /// True when `a` and `b` provably have the same value.
  bool CanProveEqual(const Expr& a, const Expr& b);
  /// Constant bounds of an integer expression; Everything() for expressions it cannot bound.
  IntBound ConstIntBound(const Expr& expr) const;

 private:
  VarBoundMap var_bounds_;
};

}  // namespace tirtune::arith
