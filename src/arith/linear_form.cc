// LinearForm: flattening sums into sorted terms, checked coefficient arithmetic, and printing a
// form back as an expression.
#include "linear_form.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "expr_compare.h"

namespace tirtune::arith {

std::optional<LinearForm> LinearForm::FromExpr(const Expr& e) {
  LinearForm out(e.dtype());
  if (const int64_t* c = AsConstInt(e)) {
    out.constant_ = *c;
    return out;
  }
  switch (e->kind()) {
    case NodeKind::kAdd:
    case NodeKind::kSub: {
      auto a = FromExpr(BinaryA(e.get()));
      auto b = FromExpr(BinaryB(e.get()));
      if (!a || !b) return std::nullopt;
      int64_t sign = e->kind() == NodeKind::kAdd ? 1 : -1;
      if (!a->AddScaled(*b, sign)) return std::nullopt;
      return a;
    }
    case NodeKind::kMul: {
      const Expr& x = BinaryA(e.get());
      const Expr& y = BinaryB(e.get());
      const int64_t* cx = AsConstInt(x);
      const int64_t* cy = AsConstInt(y);
      if (cx || cy) {
        auto f = FromExpr(cy ? x : y);
        if (!f || !f->Scale(cy ? *cy : *cx)) return std::nullopt;
        return f;
      }
      break;
    }
    default:
      break;
  }
  if (!out.AddTerm(e, 1)) return std::nullopt;
  return out;
}

bool LinearForm::AddTerm(const Expr& term, int64_t coeff) {
  if (coeff == 0) return true;
  auto it = std::lower_bound(
      terms_.begin(), terms_.end(), term,
      [](const LinearTerm& t, const Expr& e) { return CompareExpr(t.expr, e) < 0; });
  if (it != terms_.end() && CompareExpr(it->expr, term) == 0) {
    int64_t sum;
    if (__builtin_add_overflow(it->coeff, coeff, &sum)) return false;
    if (sum == 0) {
      terms_.erase(it);
    } else {
      it->coeff = sum;
    }
    return true;
  }
  terms_.insert(it, LinearTerm{term, coeff});
  return true;
}

bool LinearForm::AddConst(int64_t c) { return !__builtin_add_overflow(constant_, c, &constant_); }

bool LinearForm::AddScaled(const LinearForm& other, int64_t scale) {
  for (const LinearTerm& t : other.terms_) {
    int64_t c;
    if (__builtin_mul_overflow(t.coeff, scale, &c) || !AddTerm(t.expr, c)) return false;
  }
  int64_t c;
  return !__builtin_mul_overflow(other.constant_, scale, &c) && AddConst(c);
}

bool LinearForm::Scale(int64_t s) {
  if (s == 0) {
    terms_.clear();
    constant_ = 0;
    return true;
  }
  for (LinearTerm& t : terms_) {
    if (__builtin_mul_overflow(t.coeff, s, &t.coeff)) return false;
  }
  return !__builtin_mul_overflow(constant_, s, &constant_);
}

int64_t LinearForm::TermGcd() const {
  int64_t g = 0;
  for (const LinearTerm& t : terms_) {
    // |INT64_MIN| does not fit; its gcd with anything is a power of two that fits, so use 2^62.
    int64_t m = t.coeff == INT64_MIN ? (int64_t{1} << 62) : std::llabs(t.coeff);
    g = std::gcd(g, m);
  }
  return g;
}

void LinearForm::DivideTerms(int64_t g) {
  for (LinearTerm& t : terms_) t.coeff /= g;
}

bool LinearForm::FitsType() const {
  if (dtype_.bits() >= 64) return true;
  int64_t hi = (int64_t{1} << (dtype_.bits() - 1)) - 1;
  auto fits = [&](int64_t v) { return v >= -hi - 1 && v <= hi; };
  if (!fits(constant_)) return false;
  return std::all_of(terms_.begin(), terms_.end(),
                     [&](const LinearTerm& t) { return fits(t.coeff); });
}

Expr LinearForm::ToExpr() const {
  Expr acc;
  auto scaled = [&](const LinearTerm& t, int64_t c) {
    return c == 1 ? t.expr : MakeBinary(NodeKind::kMul, t.expr, IntImm(dtype_, c));
  };
  for (const LinearTerm& t : terms_) {
    if (t.coeff <= 0) continue;
    acc = acc.defined() ? MakeBinary(NodeKind::kAdd, acc, scaled(t, t.coeff)) : scaled(t, t.coeff);
  }
  for (const LinearTerm& t : terms_) {
    if (t.coeff > 0) continue;
    if (!acc.defined()) {
      acc = scaled(t, t.coeff);
    } else if (t.coeff == INT64_MIN) {
      acc = MakeBinary(NodeKind::kAdd, acc, scaled(t, t.coeff));
    } else {
      acc = MakeBinary(NodeKind::kSub, acc, scaled(t, -t.coeff));
    }
  }
  if (!acc.defined()) return IntImm(dtype_, constant_);
  if (constant_ > 0) return MakeBinary(NodeKind::kAdd, acc, IntImm(dtype_, constant_));
  if (constant_ < 0 && constant_ != INT64_MIN) {
    return MakeBinary(NodeKind::kSub, acc, IntImm(dtype_, -constant_));
  }
  if (constant_ == INT64_MIN) return MakeBinary(NodeKind::kAdd, acc, IntImm(dtype_, constant_));
  return acc;
}

}  // namespace tirtune::arith
