// IntSet: construction, the point test, the covering range, and union/intersection of intervals.
#include "tirtune/arith/int_set.h"

#include "expr_compare.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"

namespace tirtune::arith {

IntSet IntSet::Interval(Expr min, Expr max) {
  IntSet s;
  s.min_ = std::move(min);
  s.max_ = std::move(max);
  return s;
}

IntSet IntSet::Point(Expr value) { return Interval(value, value); }

IntSet IntSet::Everything() { return IntSet(); }

IntSet IntSet::Nothing() {
  IntSet s;
  s.nothing_ = true;
  return s;
}

IntSet IntSet::FromRange(const Range& range) {
  Analyzer analyzer;
  if (IsConstInt(range.extent, 1)) return Point(range.min);
  return Interval(range.min, analyzer.Simplify(range.min + range.extent - 1));
}

bool IntSet::IsSinglePoint() const {
  return !nothing_ && min_.defined() && max_.defined() && ExprDeepEqual(min_, max_);
}

const Expr& IntSet::PointValue() const {
  TT_ICHECK(IsSinglePoint(), "PointValue of a set that is not a single point");
  return min_;
}

std::optional<Range> IntSet::CoverRange(Analyzer* analyzer) const {
  if (nothing_) return Range::FromMinExtent(0, 0);
  if (!min_.defined() || !max_.defined()) return std::nullopt;
  if (IsSinglePoint()) return Range::FromMinExtent(min_, IntImm(min_.dtype(), 1));
  Analyzer local;
  Analyzer* a = analyzer ? analyzer : &local;
  return Range::FromMinExtent(min_, a->Simplify(max_ - min_ + 1));
}

IntSet Union(const IntSet& a, const IntSet& b, Analyzer* analyzer) {
  if (a.IsNothing()) return b;
  if (b.IsNothing()) return a;
  Analyzer local;
  Analyzer* an = analyzer ? analyzer : &local;
  Expr lo = a.HasLowerBound() && b.HasLowerBound() ? an->Simplify(Min(a.min(), b.min())) : Expr();
  Expr hi = a.HasUpperBound() && b.HasUpperBound() ? an->Simplify(Max(a.max(), b.max())) : Expr();
  return IntSet::Interval(lo, hi);
}

IntSet Intersect(const IntSet& a, const IntSet& b, Analyzer* analyzer) {
  if (a.IsNothing() || b.IsNothing()) return IntSet::Nothing();
  Analyzer local;
  Analyzer* an = analyzer ? analyzer : &local;
  auto pick = [&](const Expr& x, const Expr& y, bool lower) -> Expr {
    if (!x.defined()) return y;
    if (!y.defined()) return x;
    return an->Simplify(lower ? Max(x, y) : Min(x, y));
  };
  Expr lo = pick(a.min(), b.min(), /*lower=*/true);
  Expr hi = pick(a.max(), b.max(), /*lower=*/false);
  if (lo.defined() && hi.defined() && an->CanProve(lo > hi)) return IntSet::Nothing();
  return IntSet::Interval(lo, hi);
}

}  // namespace tirtune::arith
