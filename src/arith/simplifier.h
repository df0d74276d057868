// The rewriting simplifier behind Analyzer::Simplify. Like Halide's simplifier its rules live in
// one file per node family (simplify_linear.cc: + - ×, simplify_div.cc: divisions,
// simplify_min_max.cc: min/max/select, simplify_compare.cc: comparisons and logic); this header
// is what they share.
#pragma once

#include <optional>

#include "linear_form.h"
#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/functor.h"

namespace tirtune::arith {

/// True for the types whose expressions get the canonical linear form: scalar int32 and int64.
/// Narrower integers wrap too easily for the bound-based rules, so they are only folded.
bool IsCanonicalInt(DataType t);

/// Folds `a <k> b` when both are immediates and the result is exact in their type (no overflow,
/// no division by zero, float folding only for float32/float64); undefined otherwise.
Expr FoldConstants(NodeKind k, const Expr& a, const Expr& b);

/// Bottom-up rewriter: children first, then the rules of the node's kind. The result always
/// equals the input whenever the variable bounds it was given hold.
class Simplifier : public ExprMutator {
 public:
  explicit Simplifier(const VarBoundMap& bounds) : bounds_(bounds) {}
  using ExprMutator::VisitExpr;

  // simplify_linear.cc
  Expr VisitExpr_(const AddNode* op) override;
  Expr VisitExpr_(const SubNode* op) override;
  Expr VisitExpr_(const MulNode* op) override;
  // simplify_div.cc
  Expr VisitExpr_(const DivNode* op) override;
  Expr VisitExpr_(const FloorDivNode* op) override;
  Expr VisitExpr_(const FloorModNode* op) override;
  // simplify_min_max.cc
  Expr VisitExpr_(const MinNode* op) override;
  Expr VisitExpr_(const MaxNode* op) override;
  Expr VisitExpr_(const SelectNode* op) override;
  // simplify_compare.cc
  Expr VisitExpr_(const EQNode* op) override;
  Expr VisitExpr_(const NENode* op) override;
  Expr VisitExpr_(const LTNode* op) override;
  Expr VisitExpr_(const LENode* op) override;
  Expr VisitExpr_(const GTNode* op) override;
  Expr VisitExpr_(const GENode* op) override;
  Expr VisitExpr_(const AndNode* op) override;
  Expr VisitExpr_(const OrNode* op) override;
  Expr VisitExpr_(const NotNode* op) override;
  // simplifier.cc
  Expr VisitExpr_(const CastNode* op) override;
  Expr VisitExpr_(const LetNode* op) override;

 private:
  // ---- simplifier.cc: helpers every rule family uses.
  IntBound Bound(const Expr& e) const;
  IntBound Bound(const LinearForm& form) const;
  /// The linear form of an already simplified expression of a canonical type; nullopt otherwise.
  std::optional<LinearForm> Linear(const Expr& e) const;
  /// The expression of a form after merging `x // c * c + x % c` into `x`; undefined when the
  /// form cannot be written in its type.
  Expr Canonical(LinearForm form) const;
  /// The node rebuilt from simplified operands (folded when both are immediates); `op` itself
  /// when nothing changed.
  Expr Rebuild(const ExprNode* op, const Expr& a, const Expr& b) const;

  // ---- simplify_div.cc
  /// floordiv(form, c) and floormod(form, c) for c > 0, as forms; nullopt on overflow.
  std::optional<LinearForm> FloorDivLinear(const LinearForm& form, int64_t c) const;
  std::optional<LinearForm> FloorModLinear(const LinearForm& form, int64_t c) const;

  // ---- simplify_compare.cc
  /// A comparison of simplified operands, decided by bounds or put in canonical form.
  Expr SimplifyCompare(const ExprNode* op, NodeKind k, const Expr& a, const Expr& b) const;
  /// True when `b` is the negation of `a`: `!a`, or the flipped form of an integer comparison.
  bool IsNegationOf(const Expr& a, const Expr& b) const;

  // ---- simplify_min_max.cc
  Expr SimplifyMinMax(const ExprNode* op, NodeKind k, const Expr& a, const Expr& b) const;

  VarBoundMap bounds_;
};

}  // namespace tirtune::arith
