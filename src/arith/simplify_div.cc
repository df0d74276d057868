// Simplifier rules for integer division by a positive constant:
//   (x*8 + y) // 8   ->  x + y // 8        (x when 0 <= y < 8 is known)
//   (x*8 + y) % 8    ->  y % 8             (y when 0 <= y < 8 is known)
//   x % 16 // 4      ->  x // 4 % 4        (one form per digit)
//   (x*4 + 2) // 8   ->  (x*2 + 1) // 4 -> x // 2    (common factors cancel)
//   x // 4 // 8      ->  x // 32,   x % 32 % 8 -> x % 8
// Truncating division is rewritten as floor division when the dividend is known non-negative.
#include <numeric>

#include "const_int_bound.h"
#include "simplifier.h"

namespace tirtune::arith {

std::optional<LinearForm> Simplifier::FloorDivLinear(const LinearForm& form, int64_t c) const {
  DataType t = form.dtype();
  if (c == 1) return form;
  // Step 1. Multiples of c leave the division: floordiv(c*q + r, c) == q + floordiv(r, c).
  LinearForm quot(t, FloorDivInt(form.constant(), c));
  LinearForm rest(t, FloorModInt(form.constant(), c));
  for (const LinearTerm& term : form.terms()) {
    bool ok = term.coeff % c == 0 ? quot.AddTerm(term.expr, term.coeff / c)
                                  : rest.AddTerm(term.expr, term.coeff);
    if (!ok) return std::nullopt;
  }
  // Step 2. The bounds of the rest may pin its quotient to one value.
  IntBound rb = Bound(rest);
  if (rb.has_min() && rb.has_max()) {
    int64_t q = FloorDivInt(rb.min_value, c);
    if (q == FloorDivInt(rb.max_value, c)) {
      if (!quot.AddConst(q)) return std::nullopt;
      return quot;
    }
  }
  // Step 3. A factor g of c and of every coefficient cancels:
  // floordiv(g*y + k, g*m) == floordiv(y + floordiv(k, g), m).
  if (int64_t g = std::gcd(rest.TermGcd(), c); g > 1) {
    LinearForm y = rest;
    y.DivideTerms(g);
    y.SetConst(FloorDivInt(rest.constant(), g));
    std::optional<LinearForm> inner = FloorDivLinear(y, c / g);
    if (!inner || !quot.AddScaled(*inner, 1)) return std::nullopt;
    return quot;
  }
  // Step 4. Nested division: floordiv(floordiv(x, c1) + k, c) == floordiv(x + k*c1, c1*c).
  if (rest.terms().size() == 1 && rest.terms()[0].coeff == 1) {
    const auto* div = rest.terms()[0].expr.as<FloorDivNode>();
    const int64_t* c1 = div ? AsConstInt(div->b) : nullptr;
    std::optional<LinearForm> x = c1 && *c1 > 0 ? Linear(div->a) : std::nullopt;
    int64_t offset, divisor;
    if (x && !__builtin_mul_overflow(rest.constant(), *c1, &offset) && x->AddConst(offset) &&
        !__builtin_mul_overflow(*c1, c, &divisor)) {
      std::optional<LinearForm> inner = FloorDivLinear(*x, divisor);
      if (!inner || !quot.AddScaled(*inner, 1)) return std::nullopt;
      return quot;
    }
  }
  // Step 5. A digit written low-first is written high-first, so that each digit has one form:
  // floordiv(floormod(x, c*m), c) == floormod(floordiv(x, c), m).
  if (rest.terms().size() == 1 && rest.terms()[0].coeff == 1 && rest.constant() == 0) {
    const auto* mod = rest.terms()[0].expr.as<FloorModNode>();
    const int64_t* c1 = mod ? AsConstInt(mod->b) : nullptr;
    std::optional<LinearForm> x = c1 && *c1 > 0 && *c1 % c == 0 ? Linear(mod->a) : std::nullopt;
    std::optional<LinearForm> high = x ? FloorDivLinear(*x, c) : std::nullopt;
    std::optional<LinearForm> digit = high ? FloorModLinear(*high, *c1 / c) : std::nullopt;
    if (digit && quot.AddScaled(*digit, 1)) return quot;
  }
  // Step 6. What is left stays a division term.
  Expr r = Canonical(rest);
  if (!r.defined() || !quot.AddTerm(MakeBinary(NodeKind::kFloorDiv, r, IntImm(t, c)), 1)) {
    return std::nullopt;
  }
  return quot;
}

std::optional<LinearForm> Simplifier::FloorModLinear(const LinearForm& form, int64_t c) const {
  DataType t = form.dtype();
  if (c == 1) return LinearForm(t, 0);
  // Step 1. Multiples of c vanish. Other coefficients are kept as they are (not reduced modulo
  // c) so that a sum of loop digits stays recognisable to iter-map detection.
  LinearForm rest(t, FloorModInt(form.constant(), c));
  for (const LinearTerm& term : form.terms()) {
    if (term.coeff % c != 0 && !rest.AddTerm(term.expr, term.coeff)) return std::nullopt;
  }
  // Step 2. The bounds of the rest may place it inside one period.
  IntBound rb = Bound(rest);
  if (rb.has_min() && rb.has_max()) {
    int64_t q = FloorDivInt(rb.min_value, c);
    if (q == FloorDivInt(rb.max_value, c)) {
      int64_t shift;
      if (__builtin_mul_overflow(q, -c, &shift) || !rest.AddConst(shift)) return std::nullopt;
      return rest;
    }
  }
  // Step 3. A factor g of c and of every coefficient comes out:
  // floormod(g*y + g*q + s, g*m) == g*floormod(y + q, m) + s  for 0 <= s < g.
  if (int64_t g = std::gcd(rest.TermGcd(), c); g > 1) {
    LinearForm y = rest;
    y.DivideTerms(g);
    y.SetConst(FloorDivInt(rest.constant(), g));
    std::optional<LinearForm> inner = FloorModLinear(y, c / g);
    if (!inner || !inner->Scale(g) || !inner->AddConst(FloorModInt(rest.constant(), g))) {
      return std::nullopt;
    }
    return inner;
  }
  // Step 4. An inner modulo by a multiple of c does not change the residue:
  // floormod(x % (c*n) + k, c) == floormod(x + k, c).
  for (size_t i = 0; i < rest.terms().size(); ++i) {
    const auto* mod = rest.terms()[i].expr.as<FloorModNode>();
    const int64_t* c1 = mod ? AsConstInt(mod->b) : nullptr;
    if (!c1 || *c1 <= 0 || *c1 % c != 0) continue;
    std::optional<LinearForm> x = Linear(mod->a);
    if (!x) break;
    LinearForm next = rest;
    next.EraseTerm(i);
    if (!next.AddScaled(*x, rest.terms()[i].coeff)) break;
    return FloorModLinear(next, c);
  }
  // Step 5. What is left stays a modulo term.
  Expr r = Canonical(rest);
  LinearForm out(t);
  if (!r.defined() || !out.AddTerm(MakeBinary(NodeKind::kFloorMod, r, IntImm(t, c)), 1)) {
    return std::nullopt;
  }
  return out;
}

Expr Simplifier::VisitExpr_(const FloorDivNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  if (!IsCanonicalInt(op->dtype)) return Rebuild(op, a, b);
  const int64_t* c = AsConstInt(b);
  if (c && *c > 0) {
    std::optional<LinearForm> la = Linear(a);
    if (std::optional<LinearForm> r = la ? FloorDivLinear(*la, *c) : std::nullopt) {
      if (Expr e = Canonical(*r); e.defined()) return e;
    }
  }
  IntBound ab = Bound(a), bb = Bound(b);
  if (ab.min_value >= 0 && bb.min_value > 0 && ab.max_value < bb.min_value) {
    return IntImm(op->dtype, 0);
  }
  return Rebuild(op, a, b);
}

Expr Simplifier::VisitExpr_(const FloorModNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  if (!IsCanonicalInt(op->dtype)) return Rebuild(op, a, b);
  const int64_t* c = AsConstInt(b);
  if (c && *c > 0) {
    std::optional<LinearForm> la = Linear(a);
    if (std::optional<LinearForm> r = la ? FloorModLinear(*la, *c) : std::nullopt) {
      if (Expr e = Canonical(*r); e.defined()) return e;
    }
  }
  IntBound ab = Bound(a), bb = Bound(b);
  if (ab.min_value >= 0 && bb.min_value > 0 && ab.max_value < bb.min_value) return a;
  return Rebuild(op, a, b);
}

Expr Simplifier::VisitExpr_(const DivNode* op) {
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  if (!IsCanonicalInt(op->dtype)) return Rebuild(op, a, b);
  const int64_t* c = AsConstInt(b);
  if (c && *c == 1) return a;
  // Truncation and floor agree on a non-negative dividend and a positive divisor.
  if (c && *c > 0 && Bound(a).min_value >= 0) {
    std::optional<LinearForm> la = Linear(a);
    if (std::optional<LinearForm> r = la ? FloorDivLinear(*la, *c) : std::nullopt) {
      if (Expr e = Canonical(*r); e.defined()) return e;
    }
  }
  return Rebuild(op, a, b);
}

}  // namespace tirtune::arith
