// The canonical linear form of an integer expression: a sum of coefficient × term plus a
// constant, with the terms (any sub-expression that is not + - or × by a constant) kept sorted by
// CompareExpr. Two sums that differ only in how they were written have the same form.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tirtune/ir/expr.h"

namespace tirtune::arith {

struct LinearTerm {
  Expr expr;
  int64_t coeff;
};

/// A sum `terms[0].expr * terms[0].coeff + ... + constant` of one integer type. Coefficients are
/// never zero. Every operation reports int64 overflow by returning false (or nullopt), leaving
/// the form unspecified; callers then keep the expression as it was.
class LinearForm {
 public:
  explicit LinearForm(DataType dtype, int64_t constant = 0) : dtype_(dtype), constant_(constant) {}

  /// Flattens + and - and multiplication by constants of `e`; everything else becomes a term.
  static std::optional<LinearForm> FromExpr(const Expr& e);

  DataType dtype() const { return dtype_; }
  const std::vector<LinearTerm>& terms() const { return terms_; }
  int64_t constant() const { return constant_; }
  bool is_const() const { return terms_.empty(); }

  [[nodiscard]] bool AddTerm(const Expr& term, int64_t coeff);
  [[nodiscard]] bool AddConst(int64_t c);
  /// this += other * scale.
  [[nodiscard]] bool AddScaled(const LinearForm& other, int64_t scale);
  [[nodiscard]] bool Scale(int64_t s);
  void SetConst(int64_t c) { constant_ = c; }
  /// Removes the term at `index`.
  void EraseTerm(size_t index) { terms_.erase(terms_.begin() + static_cast<long>(index)); }

  /// The greatest common divisor of the coefficients' magnitudes (0 with no terms).
  int64_t TermGcd() const;
  /// Divides every coefficient by `g`, which must divide them all; the constant is untouched.
  void DivideTerms(int64_t g);

  /// True when the constant and every coefficient are values of dtype(); ToExpr needs it.
  bool FitsType() const;

  /// The expression: positive terms in order, then negative ones subtracted, then the constant,
  /// e.g. `i*4 + j - k*2 + 3`.
  Expr ToExpr() const;

 private:
  DataType dtype_;
  std::vector<LinearTerm> terms_;
  int64_t constant_ = 0;
};

}  // namespace tirtune::arith
