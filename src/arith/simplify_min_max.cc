// Simplifier rules for min, max and select. An integer min/max is decided when the bounds of the
// difference of its operands have a sign (`min(x, 10)` is `x` when x <= 10 is known); a select
// is decided when its condition simplifies to a constant or both branches are the same.
#include <algorithm>

#include "const_int_bound.h"
#include "expr_compare.h"
#include "simplifier.h"

namespace tirtune::arith {

Expr Simplifier::SimplifyMinMax(const ExprNode* op, NodeKind k, const Expr& a,
                                const Expr& b) const {
  if (Expr folded = FoldConstants(k, a, b); folded.defined()) return folded;
  if (!IsCanonicalInt(op->dtype)) return Rebuild(op, a, b);
  bool is_min = k == NodeKind::kMin;
  // Step 1. Decide by the sign of a - b.
  std::optional<LinearForm> diff = Linear(a);
  std::optional<LinearForm> lb = Linear(b);
  if (diff && lb && diff->AddScaled(*lb, -1)) {
    IntBound d = Bound(*diff);
    if (d.max_value <= 0) return is_min ? a : b;
    if (d.min_value >= 0) return is_min ? b : a;
  }
  // Step 2. Constants gather: min(min(x, c1), c2) == min(x, min(c1, c2)).
  Expr x = a, y = b;
  if (AsConstInt(x) && !AsConstInt(y)) std::swap(x, y);
  if (const int64_t* c2 = AsConstInt(y); c2 && x->kind() == k) {
    if (const int64_t* c1 = AsConstInt(BinaryB(x.get()))) {
      int64_t c = is_min ? std::min(*c1, *c2) : std::max(*c1, *c2);
      return MakeBinary(k, BinaryA(x.get()), IntImm(op->dtype, c));
    }
  }
  // Step 3. Operands in canonical order, a constant last.
  if (!AsConstInt(y) && CompareExpr(x, y) > 0) std::swap(x, y);
  if (x.same_as(BinaryA(op)) && y.same_as(BinaryB(op))) return GetRef(op);
  return MakeBinary(k, x, y);
}

Expr Simplifier::VisitExpr_(const MinNode* op) {
  return SimplifyMinMax(op, NodeKind::kMin, VisitExpr(op->a), VisitExpr(op->b));
}

Expr Simplifier::VisitExpr_(const MaxNode* op) {
  return SimplifyMinMax(op, NodeKind::kMax, VisitExpr(op->a), VisitExpr(op->b));
}

Expr Simplifier::VisitExpr_(const SelectNode* op) {
  Expr cond = VisitExpr(op->cond);
  Expr t = VisitExpr(op->t), f = VisitExpr(op->f);
  if (const int64_t* c = AsConstInt(cond)) return *c ? t : f;
  if (ExprDeepEqual(t, f)) return t;
  if (cond.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return GetRef(op);
  return MakeSelect(cond, t, f);
}

}  // namespace tirtune::arith
