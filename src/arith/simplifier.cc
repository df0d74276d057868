// What every simplifier rule family shares: exact constant folding, bounds of expressions and of
// linear forms, the canonical rebuild of a sum, and the rules for casts and lets.
#include "simplifier.h"

#include <cmath>

#include "const_int_bound.h"
#include "expr_compare.h"
#include "tirtune/ir/op.h"

namespace tirtune::arith {

bool IsCanonicalInt(DataType t) {
  return t.is_int() && t.is_scalar() && (t.bits() == 32 || t.bits() == 64);
}

namespace {

// Integer folding in int64 with every overflow and out-of-type result refused.
Expr FoldInt(NodeKind k, DataType t, int64_t u, int64_t v) {
  int64_t r = 0;
  switch (k) {
    case NodeKind::kAdd:
      if (__builtin_add_overflow(u, v, &r)) return Expr();
      break;
    case NodeKind::kSub:
      if (__builtin_sub_overflow(u, v, &r)) return Expr();
      break;
    case NodeKind::kMul:
      if (__builtin_mul_overflow(u, v, &r)) return Expr();
      break;
    case NodeKind::kDiv:
      if (v == 0 || (u == INT64_MIN && v == -1)) return Expr();
      r = u / v;
      break;
    case NodeKind::kFloorDiv:
      if (v == 0 || (u == INT64_MIN && v == -1)) return Expr();
      r = FloorDivInt(u, v);
      break;
    case NodeKind::kFloorMod:
      if (v == 0 || (u == INT64_MIN && v == -1)) return Expr();
      r = FloorModInt(u, v);
      break;
    case NodeKind::kMin:
      r = std::min(u, v);
      break;
    case NodeKind::kMax:
      r = std::max(u, v);
      break;
    case NodeKind::kEQ:
      return Bool(u == v);
    case NodeKind::kNE:
      return Bool(u != v);
    case NodeKind::kLT:
      return Bool(u < v);
    case NodeKind::kLE:
      return Bool(u <= v);
    case NodeKind::kGT:
      return Bool(u > v);
    case NodeKind::kGE:
      return Bool(u >= v);
    case NodeKind::kAnd:
      return Bool(u && v);
    case NodeKind::kOr:
      return Bool(u || v);
    default:
      return Expr();
  }
  IntBound range = TypeBound(t);
  if (r < range.min_value || r > range.max_value) return Expr();
  return IntImm(t, r);
}

}  // namespace

Expr FoldConstants(NodeKind k, const Expr& a, const Expr& b) {
  if (a.dtype() != b.dtype()) return Expr();
  if (const auto* x = a.as<IntImmNode>()) {
    const auto* y = b.as<IntImmNode>();
    return y ? FoldInt(k, a.dtype(), x->value, y->value) : Expr();
  }
  const auto* x = a.as<FloatImmNode>();
  const auto* y = b.as<FloatImmNode>();
  if (!x || !y) return Expr();
  // Only float32/float64 round-trip exactly through the double folding of the builders.
  if (a.dtype().bits() != 32 && a.dtype().bits() != 64) return Expr();
  if (std::isnan(x->value) || std::isnan(y->value)) return Expr();
  // min/max of +0 and -0 depend on operand order; leave them to the program.
  bool min_max = k == NodeKind::kMin || k == NodeKind::kMax;
  if (min_max && x->value == y->value && x->value == 0.0) return Expr();
  switch (k) {
    case NodeKind::kAdd:
    case NodeKind::kSub:
    case NodeKind::kMul:
    case NodeKind::kDiv:
    case NodeKind::kMin:
    case NodeKind::kMax:
    case NodeKind::kEQ:
    case NodeKind::kNE:
    case NodeKind::kLT:
    case NodeKind::kLE:
    case NodeKind::kGT:
    case NodeKind::kGE: {
      // The builders fold two immediates.
      switch (k) {
        case NodeKind::kAdd:
          return a + b;
        case NodeKind::kSub:
          return a - b;
        case NodeKind::kMul:
          return a * b;
        case NodeKind::kDiv:
          return a / b;
        case NodeKind::kMin:
          return Min(a, b);
        case NodeKind::kMax:
          return Max(a, b);
        case NodeKind::kEQ:
          return Eq(a, b);
        case NodeKind::kNE:
          return Ne(a, b);
        case NodeKind::kLT:
          return a < b;
        case NodeKind::kLE:
          return a <= b;
        case NodeKind::kGT:
          return a > b;
        default:
          return a >= b;
      }
    }
    default:
      return Expr();
  }
}

IntBound Simplifier::Bound(const Expr& e) const { return EvalConstIntBound(e, bounds_); }

IntBound Simplifier::Bound(const LinearForm& form) const {
  IntBound acc = IntBound::Single(form.constant());
  for (const LinearTerm& t : form.terms()) {
    acc = BoundAdd(acc, BoundMulConst(Bound(t.expr), t.coeff));
  }
  return acc;
}

std::optional<LinearForm> Simplifier::Linear(const Expr& e) const {
  if (!IsCanonicalInt(e.dtype())) return std::nullopt;
  return LinearForm::FromExpr(e);
}

namespace {

// A term read as one digit of a base: (base // lower) % extent, with extent 0 for none.
struct Digit {
  Expr base;
  int64_t lower;
  int64_t extent;
};

std::optional<Digit> AsDigit(const Expr& term) {
  if (const auto* mod = term.as<FloorModNode>()) {
    const int64_t* e = AsConstInt(mod->b);
    if (!e || *e <= 0) return std::nullopt;
    if (const auto* div = mod->a.as<FloorDivNode>()) {
      const int64_t* l = AsConstInt(div->b);
      if (l && *l > 0) return Digit{div->a, *l, *e};
    }
    return Digit{mod->a, 1, *e};
  }
  if (const auto* div = term.as<FloorDivNode>()) {
    const int64_t* l = AsConstInt(div->b);
    if (l && *l > 0) return Digit{div->a, *l, 0};
  }
  return std::nullopt;
}

Expr DigitExpr(const Digit& d) {
  DataType t = d.base.dtype();
  Expr e = d.base;
  if (d.lower != 1) e = MakeBinary(NodeKind::kFloorDiv, e, IntImm(t, d.lower));
  if (d.extent != 0) e = MakeBinary(NodeKind::kFloorMod, e, IntImm(t, d.extent));
  return e;
}

}  // namespace

Expr Simplifier::Canonical(LinearForm form) const {
  // Adjacent digits of one base join: (x // L) % E1 * k + (x // (L*E1)) % E2 * (k*E1) is
  // (x // L) % (E1*E2) * k, so `x // 4 * 4 + x % 4` is `x` and `x // 4 % 4 * 4 + x % 4` is
  // `x % 16`. Joining may enable another join, so repeat.
  for (bool merged = true; merged;) {
    merged = false;
    const auto& terms = form.terms();
    for (size_t i = 0; i < terms.size() && !merged; ++i) {
      std::optional<Digit> lo = AsDigit(terms[i].expr);
      int64_t next_lower, next_coeff;
      if (!lo || lo->extent == 0 || __builtin_mul_overflow(lo->lower, lo->extent, &next_lower) ||
          __builtin_mul_overflow(terms[i].coeff, lo->extent, &next_coeff)) {
        continue;
      }
      for (size_t j = 0; j < terms.size(); ++j) {
        std::optional<Digit> hi = j == i ? std::nullopt : AsDigit(terms[j].expr);
        if (!hi || hi->lower != next_lower || terms[j].coeff != next_coeff ||
            !ExprDeepEqual(hi->base, lo->base)) {
          continue;
        }
        Digit joined{lo->base, lo->lower, 0};
        if (hi->extent != 0 && __builtin_mul_overflow(lo->extent, hi->extent, &joined.extent)) {
          break;
        }
        LinearForm next = form;
        int64_t k = terms[i].coeff;
        next.EraseTerm(std::max(i, j));
        next.EraseTerm(std::min(i, j));
        bool ok;
        if (joined.lower == 1 && joined.extent == 0) {
          std::optional<LinearForm> x = Linear(joined.base);
          ok = x && next.AddScaled(*x, k);
        } else {
          ok = next.AddTerm(DigitExpr(joined), k);
        }
        if (!ok) break;
        form = std::move(next);
        merged = true;
        break;
      }
    }
  }
  if (!form.FitsType()) return Expr();
  return form.ToExpr();
}

Expr Simplifier::Rebuild(const ExprNode* op, const Expr& a, const Expr& b) const {
  if (Expr folded = FoldConstants(op->kind(), a, b); folded.defined()) return folded;
  if (a.same_as(BinaryA(op)) && b.same_as(BinaryB(op))) return GetRef(op);
  return MakeBinary(op->kind(), a, b);
}

Expr Simplifier::VisitExpr_(const CastNode* op) {
  Expr value = VisitExpr(op->value);
  DataType t = op->dtype;
  if (value.dtype() == t) return value;
  if (t.is_scalar()) {
    if (const int64_t* v = AsConstInt(value)) {
      if (t.is_integral()) {
        IntBound range = TypeBound(t);
        if (*v >= range.min_value && *v <= range.max_value) return IntImm(t, *v);
      } else if ((t.bits() == 32 || t.bits() == 64) && std::llabs(*v) < (int64_t{1} << 53)) {
        return MakeConst(t, static_cast<double>(*v));  // exact in double, rounded once
      }
    } else if (const auto* f = value.as<FloatImmNode>()) {
      if (t.is_float() && (t.bits() == 32 || t.bits() == 64)) return MakeConst(t, f->value);
      if (t.is_int() && std::isfinite(f->value)) {
        double truncated = std::trunc(f->value);
        IntBound range = TypeBound(t);
        if (truncated >= static_cast<double>(range.min_value) &&
            truncated <= static_cast<double>(range.max_value) && std::fabs(truncated) < 9e18) {
          return IntImm(t, static_cast<int64_t>(truncated));
        }
      }
    }
  }
  return value.same_as(op->value) ? GetRef(op) : MakeCast(t, value);
}

Expr Simplifier::VisitExpr_(const LetNode* op) {
  Expr value = VisitExpr(op->value);
  // Inside the body the variable is known to hold the value: its bounds are the value's.
  const VarNode* var = op->var.get();
  std::optional<IntBound> saved;
  if (auto it = bounds_.find(var); it != bounds_.end()) saved = it->second;
  if (value.dtype().is_integral()) bounds_[var] = Bound(value);
  Expr body = VisitExpr(op->body);
  if (saved) {
    bounds_[var] = *saved;
  } else {
    bounds_.erase(var);
  }
  if (value.same_as(op->value) && body.same_as(op->body)) return GetRef(op);
  return MakeLet(op->var, value, body);
}

}  // namespace tirtune::arith
