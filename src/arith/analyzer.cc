// Analyzer: the fact store and the entry points that run the simplifier and the bound analysis
// against it.
#include "tirtune/arith/analyzer.h"

#include "const_int_bound.h"
#include "expr_compare.h"
#include "simplifier.h"
#include "tirtune/ir/op.h"

namespace tirtune::arith {

void Analyzer::Bind(const Var& var, const Range& range) {
  IntBound lo = ConstIntBound(range.min);
  IntBound extent = ConstIntBound(range.extent);
  IntBound b;
  b.min_value = lo.min_value;
  // max = min + extent - 1 over the largest min and the largest extent.
  IntBound hi = BoundAdd(IntBound::Single(lo.max_value), IntBound::Single(extent.max_value));
  b.max_value = (lo.has_max() && extent.has_max()) ? BoundAdd(hi, IntBound::Single(-1)).max_value
                                                   : IntBound::kPosInf;
  Bind(var, b);
}

void Analyzer::Bind(const Var& var, const IntBound& bound) { var_bounds_[var.get()] = bound; }

void Analyzer::Unbind(const Var& var) { var_bounds_.erase(var.get()); }

Expr Analyzer::Simplify(const Expr& expr) {
  // One pass reaches a fixed point for most inputs; a second catches rules that the first
  // pass's output enables (a merged pair exposing a new floordiv, say).
  Simplifier simplifier(var_bounds_);
  Expr once = simplifier.VisitExpr(expr);
  Expr twice = simplifier.VisitExpr(once);
  return ExprDeepEqual(once, twice) ? once : twice;
}

bool Analyzer::CanProve(const Expr& cond) {
  Expr s = Simplify(cond);
  const int64_t* v = AsConstInt(s);
  return v != nullptr && *v != 0;
}

bool Analyzer::CanProveEqual(const Expr& a, const Expr& b) {
  if (a.dtype() != b.dtype()) return false;
  if (IsCanonicalInt(a.dtype())) return CanProve(Eq(a, b));
  return ExprDeepEqual(Simplify(a), Simplify(b));
}

IntBound Analyzer::ConstIntBound(const Expr& expr) const {
  return EvalConstIntBound(expr, var_bounds_);
}

}  // namespace tirtune::arith
