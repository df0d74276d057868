// Simplifier rules for + - and ×: integer sums become canonical linear forms, so
// `i*4 + j - i*4` is `j`, `(x + 3) - 1` is `x + 2` and `2*(x + 1)` is `x*2 + 2`. Floats and
// narrow integers are only folded.
#include "expr_compare.h"
#include "simplifier.h"

namespace tirtune::arith {
namespace {

// Orders the operands of a commutative product so that `i*j` and `j*i` are one term.
Expr OrderedMul(const Expr& a, const Expr& b) {
  return CompareExpr(a, b) <= 0 ? MakeBinary(NodeKind::kMul, a, b)
                                : MakeBinary(NodeKind::kMul, b, a);
}

}  // namespace

Expr Simplifier::VisitExpr_(const AddNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  std::optional<LinearForm> la = Linear(a), lb = Linear(b);
  if (la && lb && la->AddScaled(*lb, 1)) {
    if (Expr e = Canonical(*la); e.defined()) return e;
  }
  return Rebuild(op, a, b);
}

Expr Simplifier::VisitExpr_(const SubNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  std::optional<LinearForm> la = Linear(a), lb = Linear(b);
  if (la && lb && la->AddScaled(*lb, -1)) {
    if (Expr e = Canonical(*la); e.defined()) return e;
  }
  return Rebuild(op, a, b);
}

Expr Simplifier::VisitExpr_(const MulNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  std::optional<LinearForm> la = Linear(a), lb = Linear(b);
  if (!la || !lb) return Rebuild(op, a, b);
  if (la->is_const() || lb->is_const()) {
    LinearForm form = lb->is_const() ? *la : *lb;
    if (form.Scale(lb->is_const() ? lb->constant() : la->constant())) {
      if (Expr e = Canonical(form); e.defined()) return e;
    }
    return Rebuild(op, a, b);
  }
  // A product of two non-constant factors is one term. Pull single-term coefficients out so
  // that `(i*2) * (j*3)` is `i*j*6`.
  LinearForm form(op->dtype);
  bool single_a = la->terms().size() == 1 && la->constant() == 0;
  bool single_b = lb->terms().size() == 1 && lb->constant() == 0;
  int64_t coeff = 1;
  if (single_a && single_b &&
      !__builtin_mul_overflow(la->terms()[0].coeff, lb->terms()[0].coeff, &coeff) &&
      form.AddTerm(OrderedMul(la->terms()[0].expr, lb->terms()[0].expr), coeff)) {
    if (Expr e = Canonical(form); e.defined()) return e;
  }
  return OrderedMul(a, b);
}

}  // namespace tirtune::arith
