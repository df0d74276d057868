// Simplifier rules for comparisons and logic. An integer comparison becomes a linear form
// `d <= 0` (or `d == 0`); it is decided when the bounds of d have a sign, and otherwise written
// back as `P + c < N` with the common factor of the coefficients divided out:
//   i < 16        ->  True when i is in [0, 16)
//   x*4 < 8       ->  x < 2
//   i + 1 <= n    ->  i < n
// Logic folds constants, `a && a`, `a && !a`, double negation, and negated integer comparisons.
#include "const_int_bound.h"
#include "expr_compare.h"
#include "simplifier.h"

namespace tirtune::arith {
namespace {

// Splits a form into its positively and negatively weighted parts: f == pos - neg.
void SplitSigns(const LinearForm& f, LinearForm* pos, LinearForm* neg, bool* ok) {
  for (const LinearTerm& t : f.terms()) {
    if (t.coeff > 0) {
      *ok = *ok && pos->AddTerm(t.expr, t.coeff);
    } else {
      *ok = *ok && t.coeff != INT64_MIN && neg->AddTerm(t.expr, -t.coeff);
    }
  }
}

// Builds `lhs <k> rhs` from two forms; undefined when a side does not fit the type.
Expr BuildCompare(NodeKind k, const LinearForm& lhs, const LinearForm& rhs) {
  if (!lhs.FitsType() || !rhs.FitsType()) return Expr();
  return MakeBinary(k, lhs.ToExpr(), rhs.ToExpr());
}

// `e <= 0` for integer e whose bounds are `be`.
Expr LessEqualZero(LinearForm e, const IntBound& be) {
  if (be.max_value <= 0) return Bool(true);
  if (be.min_value > 0) return Bool(false);
  if (e.is_const()) return Bool(e.constant() <= 0);
  // g*y + k <= 0  <=>  y + ceil(k/g) <= 0.
  if (int64_t g = e.TermGcd(); g > 1) {
    e.DivideTerms(g);
    e.SetConst(e.constant() / g + (e.constant() % g > 0 ? 1 : 0));
  }
  // pos - neg + k <= 0  <=>  pos + (k - 1) < neg; the constant goes where it is non-negative.
  LinearForm pos(e.dtype()), neg(e.dtype());
  bool ok = e.constant() != INT64_MIN;
  SplitSigns(e, &pos, &neg, &ok);
  if (!ok) return Expr();
  int64_t c = e.constant() - 1;
  if (neg.is_const() || (!pos.is_const() && c < 0)) {
    if (c == INT64_MIN) return Expr();
    neg.SetConst(-c);
  } else {
    pos.SetConst(c);
  }
  return BuildCompare(NodeKind::kLT, pos, neg);
}

// `d == 0` (or `d != 0`) for integer d whose bounds are `bd`.
Expr EqualZero(LinearForm d, bool eq, const IntBound& bd) {
  if (bd.min_value > 0 || bd.max_value < 0) return Bool(!eq);
  if (d.is_const()) return Bool((d.constant() == 0) == eq);
  int64_t g = d.TermGcd();
  if (d.constant() % g != 0) return Bool(!eq);
  d.DivideTerms(g);
  d.SetConst(d.constant() / g);
  // d == 0 and -d == 0 say the same; orient so that the first term is positive.
  if (d.terms()[0].coeff < 0 && !d.Scale(-1)) return Expr();
  LinearForm pos(d.dtype()), neg(d.dtype());
  bool ok = d.constant() != INT64_MIN;
  SplitSigns(d, &pos, &neg, &ok);
  if (!ok) return Expr();
  if (neg.is_const() || d.constant() < 0) {
    neg.SetConst(-d.constant());
  } else {
    pos.SetConst(d.constant());
  }
  return BuildCompare(eq ? NodeKind::kEQ : NodeKind::kNE, pos, neg);
}

NodeKind Negate(NodeKind k) {
  switch (k) {
    case NodeKind::kLT:
      return NodeKind::kGE;
    case NodeKind::kLE:
      return NodeKind::kGT;
    case NodeKind::kGT:
      return NodeKind::kLE;
    case NodeKind::kGE:
      return NodeKind::kLT;
    case NodeKind::kEQ:
      return NodeKind::kNE;
    default:
      return NodeKind::kEQ;
  }
}

}  // namespace

Expr Simplifier::SimplifyCompare(const ExprNode* op, NodeKind k, const Expr& a,
                                 const Expr& b) const {
  auto fallback = [&]() {
    if (op && op->kind() == k) return Rebuild(op, a, b);
    Expr folded = FoldConstants(k, a, b);
    return folded.defined() ? folded : MakeBinary(k, a, b);
  };
  if (Expr folded = FoldConstants(k, a, b); folded.defined()) return folded;
  if (!IsCanonicalInt(a.dtype())) return fallback();
  std::optional<LinearForm> d = Linear(a), lb = Linear(b);
  if (!d || !lb || !d->AddScaled(*lb, -1)) return fallback();  // d = a - b
  Expr out;
  switch (k) {
    case NodeKind::kEQ:
    case NodeKind::kNE:
      out = EqualZero(*d, k == NodeKind::kEQ, Bound(*d));
      break;
    case NodeKind::kLT:  // a - b + 1 <= 0
      if (d->AddConst(1)) out = LessEqualZero(*d, Bound(*d));
      break;
    case NodeKind::kLE:  // a - b <= 0
      out = LessEqualZero(*d, Bound(*d));
      break;
    case NodeKind::kGT:  // b - a + 1 <= 0
      if (d->Scale(-1) && d->AddConst(1)) out = LessEqualZero(*d, Bound(*d));
      break;
    case NodeKind::kGE:  // b - a <= 0
      if (d->Scale(-1)) out = LessEqualZero(*d, Bound(*d));
      break;
    default:
      break;
  }
  if (!out.defined()) return fallback();
  // Keep the original node when the canonical form is what it already was.
  if (op && ExprDeepEqual(out, GetRef(op))) return GetRef(op);
  return out;
}

#define TT_SIMPLIFY_COMPARE(Name)                                                      \
  Expr Simplifier::VisitExpr_(const Name##Node* op) {                                  \
    return SimplifyCompare(op, NodeKind::k##Name, VisitExpr(op->a), VisitExpr(op->b)); \
  }
TT_SIMPLIFY_COMPARE(EQ)
TT_SIMPLIFY_COMPARE(NE)
TT_SIMPLIFY_COMPARE(LT)
TT_SIMPLIFY_COMPARE(LE)
TT_SIMPLIFY_COMPARE(GT)
TT_SIMPLIFY_COMPARE(GE)
#undef TT_SIMPLIFY_COMPARE

bool Simplifier::IsNegationOf(const Expr& a, const Expr& b) const {
  if (const auto* n = a.as<NotNode>()) return ExprDeepEqual(n->a, b);
  if (const auto* n = b.as<NotNode>()) return ExprDeepEqual(n->a, a);
  // `!(x < y)` has already become `y < x + 1`: compare with the flipped comparison.
  if (IsCompareKind(a->kind()) && IsCanonicalInt(BinaryA(a.get()).dtype())) {
    return ExprDeepEqual(
        SimplifyCompare(nullptr, Negate(a->kind()), BinaryA(a.get()), BinaryB(a.get())), b);
  }
  return false;
}

Expr Simplifier::VisitExpr_(const AndNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  if (const int64_t* v = AsConstInt(a)) return *v ? b : a;
  if (const int64_t* v = AsConstInt(b)) return *v ? a : b;
  if (ExprDeepEqual(a, b)) return a;
  if (IsNegationOf(a, b)) return Bool(false);
  return Rebuild(op, a, b);
}

Expr Simplifier::VisitExpr_(const OrNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  if (const int64_t* v = AsConstInt(a)) return *v ? a : b;
  if (const int64_t* v = AsConstInt(b)) return *v ? b : a;
  if (ExprDeepEqual(a, b)) return a;
  if (IsNegationOf(a, b)) return Bool(true);
  return Rebuild(op, a, b);
}

Expr Simplifier::VisitExpr_(const NotNode* op) {
  Expr a = VisitExpr(op->a);
  if (const int64_t* v = AsConstInt(a)) return Bool(!*v);
  if (const auto* inner = a.as<NotNode>()) return inner->a;
  // Negating an integer comparison flips it (not so for floats, where NaN compares false).
  if (IsCompareKind(a->kind()) && IsCanonicalInt(BinaryA(a.get()).dtype())) {
    return SimplifyCompare(nullptr, Negate(a->kind()), BinaryA(a.get()), BinaryB(a.get()));
  }
  return a.same_as(op->a) ? GetRef(op) : MakeNot(a);
}

}  // namespace tirtune::arith
