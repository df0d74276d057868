// EvalSet: interval arithmetic over symbolic ends. Each rule is monotone reasoning on one node
// kind; a kind without a rule widens to Everything as soon as it depends on a ranged variable.
#include <utility>

#include "tirtune/arith/int_set.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/substitute.h"

namespace tirtune::arith {
namespace {

// Applies `f` to an end when it is bounded; an unbounded end stays unbounded.
template <typename F>
Expr MapEnd(const Expr& e, F f) {
  return e.defined() ? f(e) : Expr();
}

class SetEvaluator : public ExprFunctor<IntSet> {
 public:
  SetEvaluator(VarIntSetMap dom_map, Analyzer* analyzer)
      : dom_map_(std::move(dom_map)), analyzer_(analyzer) {}

  IntSet VisitExpr(const Expr& e) override {
    if (!UsesRangedVar(e)) return IntSet::Point(e);
    return ExprFunctor<IntSet>::VisitExpr(e);
  }

  IntSet VisitExpr_(const IntImmNode* op) override { return IntSet::Point(GetRef(op)); }
  IntSet VisitExpr_(const FloatImmNode*) override { return IntSet::Everything(); }
  IntSet VisitExpr_(const StringImmNode*) override { return IntSet::Everything(); }
  IntSet VisitExpr_(const VarNode* op) override {
    Var var{ObjectPtr<const VarNode>(op)};
    auto it = dom_map_.find(var);
    return it == dom_map_.end() ? IntSet::Point(var) : it->second;
  }

  IntSet VisitExpr_(const AddNode* op) override {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a.IsNothing() || b.IsNothing()) return IntSet::Nothing();
    Expr lo = a.min().defined() && b.min().defined() ? a.min() + b.min() : Expr();
    Expr hi = a.max().defined() && b.max().defined() ? a.max() + b.max() : Expr();
    return IntSet::Interval(lo, hi);
  }
  IntSet VisitExpr_(const SubNode* op) override {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a.IsNothing() || b.IsNothing()) return IntSet::Nothing();
    Expr lo = a.min().defined() && b.max().defined() ? a.min() - b.max() : Expr();
    Expr hi = a.max().defined() && b.min().defined() ? a.max() - b.min() : Expr();
    return IntSet::Interval(lo, hi);
  }
  IntSet VisitExpr_(const MulNode* op) override {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a.IsNothing() || b.IsNothing()) return IntSet::Nothing();
    if (b.IsSinglePoint()) return ScaleBy(a, b.PointValue());
    if (a.IsSinglePoint()) return ScaleBy(b, a.PointValue());
    // Two ranged factors: only constant corners are safe to compare.
    const int64_t* ends[4] = {AsConstInt(a.min()), AsConstInt(a.max()), AsConstInt(b.min()),
                              AsConstInt(b.max())};
    if (!a.min().defined() || !a.max().defined() || !b.min().defined() || !b.max().defined() ||
        !ends[0] || !ends[1] || !ends[2] || !ends[3]) {
      return IntSet::Everything();
    }
    Expr c[4] = {a.min() * b.min(), a.min() * b.max(), a.max() * b.min(), a.max() * b.max()};
    Expr lo = Min(Min(c[0], c[1]), Min(c[2], c[3]));
    Expr hi = Max(Max(c[0], c[1]), Max(c[2], c[3]));
    return IntSet::Interval(lo, hi);
  }
  IntSet VisitExpr_(const DivNode* op) override { return Divide(op, NodeKind::kDiv); }
  IntSet VisitExpr_(const FloorDivNode* op) override { return Divide(op, NodeKind::kFloorDiv); }
  IntSet VisitExpr_(const FloorModNode* op) override {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a.IsNothing() || b.IsNothing()) return IntSet::Nothing();
    if (!b.IsSinglePoint()) return IntSet::Everything();
    const Expr& m = b.PointValue();
    if (a.IsSinglePoint()) return IntSet::Point(FloorMod(a.PointValue(), m));
    if (analyzer_->ConstIntBound(m).min_value <= 0) return IntSet::Everything();
    // Within one period floormod is a shift, so it keeps the interval's shape.
    if (a.min().defined() && a.max().defined() &&
        analyzer_->CanProveEqual(FloorDiv(a.min(), m), FloorDiv(a.max(), m))) {
      return IntSet::Interval(FloorMod(a.min(), m), FloorMod(a.max(), m));
    }
    return IntSet::Interval(IntImm(m.dtype(), 0), m - 1);
  }
  IntSet VisitExpr_(const MinNode* op) override { return MinMax(op, /*is_min=*/true); }
  IntSet VisitExpr_(const MaxNode* op) override { return MinMax(op, /*is_min=*/false); }
  IntSet VisitExpr_(const EQNode*) override { return BoolSet(); }
  IntSet VisitExpr_(const NENode*) override { return BoolSet(); }
  IntSet VisitExpr_(const LTNode*) override { return BoolSet(); }
  IntSet VisitExpr_(const LENode*) override { return BoolSet(); }
  IntSet VisitExpr_(const GTNode*) override { return BoolSet(); }
  IntSet VisitExpr_(const GENode*) override { return BoolSet(); }
  IntSet VisitExpr_(const AndNode*) override { return BoolSet(); }
  IntSet VisitExpr_(const OrNode*) override { return BoolSet(); }
  IntSet VisitExpr_(const NotNode*) override { return BoolSet(); }
  IntSet VisitExpr_(const SelectNode* op) override {
    return Union(VisitExpr(op->t), VisitExpr(op->f), analyzer_);
  }
  IntSet VisitExpr_(const CastNode* op) override {
    DataType from = op->value.dtype(), to = op->dtype;
    // Only a widening integer cast keeps the order of values and every value itself.
    bool widening = from.is_integral() && to.is_integral() && from.is_scalar() &&
                    (from.code() == to.code() || (from.is_uint() && to.is_int())) &&
                    (to.bits() > from.bits() || (to.bits() == from.bits() && from == to));
    if (!widening) return IntSet::Everything();
    IntSet v = VisitExpr(op->value);
    if (v.IsNothing()) return v;
    auto cast = [&](const Expr& e) { return Cast(to, e); };
    return IntSet::Interval(MapEnd(v.min(), cast), MapEnd(v.max(), cast));
  }
  IntSet VisitExpr_(const CallNode*) override { return IntSet::Everything(); }
  IntSet VisitExpr_(const BufferLoadNode*) override { return IntSet::Everything(); }
  IntSet VisitExpr_(const RampNode* op) override {
    IntSet base = VisitExpr(op->base), stride = VisitExpr(op->stride);
    if (base.IsNothing() || stride.IsNothing()) return IntSet::Nothing();
    if (!stride.IsSinglePoint()) return IntSet::Everything();
    DataType t = op->base.dtype();
    IntSet lanes = IntSet::Interval(IntImm(t, 0), IntImm(t, op->lanes - 1));
    IntSet offsets = ScaleBy(lanes, stride.PointValue());
    Expr lo = base.min().defined() && offsets.min().defined() ? base.min() + offsets.min() : Expr();
    Expr hi = base.max().defined() && offsets.max().defined() ? base.max() + offsets.max() : Expr();
    return IntSet::Interval(lo, hi);
  }
  IntSet VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }
  IntSet VisitExpr_(const LetNode* op) override {
    IntSet value = VisitExpr(op->value);
    auto saved = dom_map_.find(op->var);
    std::optional<IntSet> old;
    if (saved != dom_map_.end()) old = saved->second;
    dom_map_[op->var] = value;
    IntSet body = VisitExpr(op->body);
    if (old) {
      dom_map_[op->var] = *old;
    } else {
      dom_map_.erase(op->var);
    }
    return body;
  }

 private:
  bool UsesRangedVar(const Expr& e) const {
    return UsesVar(
        e, [&](const VarNode* v) { return dom_map_.count(Var{ObjectPtr<const VarNode>(v)}) > 0; });
  }

  IntSet BoolSet() const { return IntSet::Interval(Bool(false), Bool(true)); }

  // s * p for a single value p of known sign.
  IntSet ScaleBy(const IntSet& s, const Expr& p) {
    if (s.IsSinglePoint()) return IntSet::Point(s.PointValue() * p);
    IntBound sign = analyzer_->ConstIntBound(p);
    if (sign.is_single() && sign.min_value == 0) return IntSet::Point(IntImm(p.dtype(), 0));
    auto mul = [&](const Expr& e) { return e * p; };
    if (sign.min_value >= 0) return IntSet::Interval(MapEnd(s.min(), mul), MapEnd(s.max(), mul));
    if (sign.max_value <= 0) return IntSet::Interval(MapEnd(s.max(), mul), MapEnd(s.min(), mul));
    return IntSet::Everything();
  }

  // Floor and truncating division are both monotone in the dividend for a divisor of fixed
  // sign, so the ends map to the ends (swapped for a negative divisor).
  IntSet Divide(const ExprNode* op, NodeKind k) {
    IntSet a = VisitExpr(BinaryA(op)), b = VisitExpr(BinaryB(op));
    if (a.IsNothing() || b.IsNothing()) return IntSet::Nothing();
    if (!b.IsSinglePoint()) return IntSet::Everything();
    const Expr& d = b.PointValue();
    auto div = [&](const Expr& e) { return k == NodeKind::kDiv ? e / d : FloorDiv(e, d); };
    if (a.IsSinglePoint()) return IntSet::Point(div(a.PointValue()));
    IntBound sign = analyzer_->ConstIntBound(d);
    if (sign.min_value > 0) return IntSet::Interval(MapEnd(a.min(), div), MapEnd(a.max(), div));
    if (sign.max_value < 0) return IntSet::Interval(MapEnd(a.max(), div), MapEnd(a.min(), div));
    return IntSet::Everything();
  }

  IntSet MinMax(const ExprNode* op, bool is_min) {
    IntSet a = VisitExpr(BinaryA(op)), b = VisitExpr(BinaryB(op));
    if (a.IsNothing() || b.IsNothing()) return IntSet::Nothing();
    auto both = [&](const Expr& x, const Expr& y) { return is_min ? Min(x, y) : Max(x, y); };
    // min(x, y) <= y: an unbounded upper end of one operand yields to the other's.
    auto combine = [&](const Expr& x, const Expr& y, bool keep_either) -> Expr {
      if (x.defined() && y.defined()) return both(x, y);
      if (!keep_either) return Expr();
      return x.defined() ? x : y;
    };
    Expr lo = combine(a.min(), b.min(), /*keep_either=*/!is_min);
    Expr hi = combine(a.max(), b.max(), /*keep_either=*/is_min);
    return IntSet::Interval(lo, hi);
  }

  VarIntSetMap dom_map_;
  Analyzer* analyzer_;
};

}  // namespace

IntSet EvalSet(const Expr& expr, const VarIntSetMap& dom_map, Analyzer* analyzer) {
  Analyzer local;
  Analyzer* an = analyzer ? analyzer : &local;
  for (const auto& [var, set] : dom_map) {
    if (set.IsNothing()) return IntSet::Nothing();
  }
  IntSet s = SetEvaluator(dom_map, an).VisitExpr(an->Simplify(expr));
  if (s.IsNothing()) return s;
  auto simplify = [&](const Expr& e) { return an->Simplify(e); };
  Expr lo = MapEnd(s.min(), simplify), hi = MapEnd(s.max(), simplify);
  if (s.IsSinglePoint()) return IntSet::Point(lo);
  return IntSet::Interval(lo, hi);
}

IntSet EvalSet(const Expr& expr, const VarRangeMap& dom_map, Analyzer* analyzer) {
  VarIntSetMap sets;
  for (const auto& [var, range] : dom_map) sets.emplace(var, IntSet::FromRange(range));
  return EvalSet(expr, sets, analyzer);
}

}  // namespace tirtune::arith
