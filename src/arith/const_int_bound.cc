// Constant bounds by interval arithmetic over the expression tree. Every rule over-approximates:
// when a rule is unsure it widens to the type's range, never the other way.
#include "const_int_bound.h"

#include <algorithm>
#include <optional>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/functor.h"

namespace tirtune::arith {

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

namespace {

constexpr int64_t kNegInf = IntBound::kNegInf;
constexpr int64_t kPosInf = IntBound::kPosInf;

bool IsInf(int64_t x) { return x == kNegInf || x == kPosInf; }

// Extended-integer arithmetic: an infinite operand dominates, an overflow saturates.
int64_t ExtAdd(int64_t x, int64_t y) {
  if (IsInf(x)) return x;
  if (IsInf(y)) return y;
  int64_t r;
  if (__builtin_add_overflow(x, y, &r) || IsInf(r)) return x > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t ExtNeg(int64_t x) {
  if (x == kNegInf) return kPosInf;
  if (x == kPosInf) return kNegInf;
  return -x;
}

int64_t ExtMul(int64_t x, int64_t y) {
  if (x == 0 || y == 0) return 0;
  bool negative = (x < 0) != (y < 0);
  if (IsInf(x) || IsInf(y)) return negative ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r) || IsInf(r)) return negative ? kNegInf : kPosInf;
  return r;
}

// Floor division of an extended value by a finite non-zero constant.
int64_t ExtFloorDiv(int64_t x, int64_t c) {
  if (IsInf(x)) return (x > 0) == (c > 0) ? kPosInf : kNegInf;
  return FloorDivInt(x, c);
}

int64_t ExtTruncDiv(int64_t x, int64_t c) {
  if (IsInf(x)) return (x > 0) == (c > 0) ? kPosInf : kNegInf;
  if (x == kNegInf + 1 && c == -1) return kPosInf;
  return x / c;
}

IntBound Make(int64_t lo, int64_t hi) { return {lo, hi}; }

IntBound BoundMul(const IntBound& a, const IntBound& b) {
  int64_t c[4] = {ExtMul(a.min_value, b.min_value), ExtMul(a.min_value, b.max_value),
                  ExtMul(a.max_value, b.min_value), ExtMul(a.max_value, b.max_value)};
  return Make(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

IntBound BoundFloorDiv(const IntBound& a, const IntBound& b) {
  if (b.is_single() && b.min_value != 0 && !IsInf(b.min_value)) {
    int64_t c = b.min_value;
    int64_t x = ExtFloorDiv(a.min_value, c), y = ExtFloorDiv(a.max_value, c);
    return c > 0 ? Make(x, y) : Make(y, x);
  }
  if (b.min_value > 0) {
    // a / b moves toward zero as b grows, so the extremes come from the smallest divisor.
    int64_t lo = a.min_value >= 0 ? 0 : ExtFloorDiv(a.min_value, b.min_value);
    int64_t hi = a.max_value <= 0 ? 0 : ExtFloorDiv(a.max_value, b.min_value);
    return Make(lo, hi);
  }
  return IntBound::Everything();
}

IntBound BoundTruncDiv(const IntBound& a, const IntBound& b) {
  if (b.is_single() && b.min_value != 0 && !IsInf(b.min_value)) {
    int64_t c = b.min_value;
    int64_t x = ExtTruncDiv(a.min_value, c), y = ExtTruncDiv(a.max_value, c);
    return c > 0 ? Make(x, y) : Make(y, x);
  }
  if (b.min_value > 0) {
    int64_t lo = a.min_value >= 0 ? 0 : ExtTruncDiv(a.min_value, b.min_value);
    int64_t hi = a.max_value <= 0 ? 0 : ExtTruncDiv(a.max_value, b.min_value);
    return Make(lo, hi);
  }
  return IntBound::Everything();
}

IntBound BoundFloorMod(const IntBound& a, const IntBound& b) {
  if (b.min_value <= 0) return IntBound::Everything();
  if (b.is_single() && !IsInf(b.min_value) && !IsInf(a.min_value) && !IsInf(a.max_value)) {
    int64_t c = b.min_value;
    int64_t q = FloorDivInt(a.min_value, c);
    if (q == FloorDivInt(a.max_value, c)) {
      return Make(a.min_value - q * c, a.max_value - q * c);
    }
  }
  int64_t hi = b.max_value == kPosInf ? kPosInf : b.max_value - 1;
  if (a.min_value >= 0) hi = std::min(hi, a.max_value);
  return Make(0, hi);
}

class BoundEvaluator : public ExprFunctor<IntBound> {
 public:
  explicit BoundEvaluator(const VarBoundMap& vars) : vars_(vars) {}

  IntBound VisitExpr(const Expr& e) override {
    if (!e.dtype().is_integral()) return IntBound::Everything();
    return ExprFunctor<IntBound>::VisitExpr(e);
  }

  IntBound VisitExpr_(const IntImmNode* op) override { return IntBound::Single(op->value); }
  IntBound VisitExpr_(const FloatImmNode*) override { return IntBound::Everything(); }
  IntBound VisitExpr_(const StringImmNode*) override { return IntBound::Everything(); }
  IntBound VisitExpr_(const VarNode* op) override {
    if (auto it = local_.find(op); it != local_.end()) return it->second;
    if (auto it = vars_.find(op); it != vars_.end()) return it->second;
    return TypeBound(op->dtype);
  }
  IntBound VisitExpr_(const AddNode* op) override {
    return Clamp(op, BoundAdd(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntBound VisitExpr_(const SubNode* op) override {
    return Clamp(op, BoundAdd(VisitExpr(op->a), BoundNeg(VisitExpr(op->b))));
  }
  IntBound VisitExpr_(const MulNode* op) override {
    return Clamp(op, BoundMul(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntBound VisitExpr_(const DivNode* op) override {
    return Clamp(op, BoundTruncDiv(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntBound VisitExpr_(const FloorDivNode* op) override {
    return Clamp(op, BoundFloorDiv(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntBound VisitExpr_(const FloorModNode* op) override {
    return Clamp(op, BoundFloorMod(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntBound VisitExpr_(const MinNode* op) override {
    IntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return Make(std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value));
  }
  IntBound VisitExpr_(const MaxNode* op) override {
    IntBound a = VisitExpr(op->a), b = VisitExpr(op->b);
    return Make(std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value));
  }
  IntBound VisitExpr_(const EQNode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const NENode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const LTNode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const LENode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const GTNode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const GENode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const AndNode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const OrNode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const NotNode*) override { return Make(0, 1); }
  IntBound VisitExpr_(const SelectNode* op) override {
    return BoundUnion(VisitExpr(op->t), VisitExpr(op->f));
  }
  IntBound VisitExpr_(const CastNode* op) override {
    IntBound target = TypeBound(op->dtype);
    if (!op->value.dtype().is_integral()) return target;
    IntBound v = VisitExpr(op->value);
    // A value that does not fit wraps around, so anything in the target type is possible.
    if (v.min_value >= target.min_value && v.max_value <= target.max_value) return v;
    return target;
  }
  IntBound VisitExpr_(const CallNode* op) override { return TypeBound(op->dtype); }
  IntBound VisitExpr_(const BufferLoadNode* op) override { return TypeBound(op->dtype); }
  IntBound VisitExpr_(const RampNode* op) override {
    IntBound lanes = Make(0, op->lanes - 1);
    return BoundAdd(VisitExpr(op->base), BoundMul(VisitExpr(op->stride), lanes));
  }
  IntBound VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }
  IntBound VisitExpr_(const LetNode* op) override {
    IntBound value = VisitExpr(op->value);
    const VarNode* var = op->var.get();
    auto saved = local_.find(var) == local_.end() ? std::optional<IntBound>() : local_[var];
    local_[var] = value;
    IntBound body = VisitExpr(op->body);
    if (saved) {
      local_[var] = *saved;
    } else {
      local_.erase(var);
    }
    return body;
  }

 private:
  // Narrow types wrap on overflow; past their range nothing is known.
  IntBound Clamp(const ExprNode* op, const IntBound& b) {
    IntBound t = TypeBound(op->dtype);
    if (b.min_value < t.min_value || b.max_value > t.max_value) return t;
    return b;
  }

  const VarBoundMap& vars_;
  VarBoundMap local_;
};

}  // namespace

IntBound TypeBound(DataType t) {
  if (!t.is_integral()) return IntBound::Everything();
  if (t.is_bool()) return Make(0, 1);
  if (t.code() == DataType::Code::kUInt) {
    if (t.bits() >= 63) return Make(0, kPosInf);
    return Make(0, (int64_t{1} << t.bits()) - 1);
  }
  if (t.bits() >= 64) return IntBound::Everything();
  return Make(-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1);
}

IntBound BoundAdd(const IntBound& a, const IntBound& b) {
  int64_t lo = (a.min_value == kNegInf || b.min_value == kNegInf)
                   ? kNegInf
                   : ExtAdd(a.min_value, b.min_value);
  int64_t hi = (a.max_value == kPosInf || b.max_value == kPosInf)
                   ? kPosInf
                   : ExtAdd(a.max_value, b.max_value);
  return Make(lo, hi);
}

IntBound BoundNeg(const IntBound& a) { return Make(ExtNeg(a.max_value), ExtNeg(a.min_value)); }

IntBound BoundMulConst(const IntBound& a, int64_t c) { return BoundMul(a, IntBound::Single(c)); }

IntBound BoundUnion(const IntBound& a, const IntBound& b) {
  return Make(std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value));
}

IntBound EvalConstIntBound(const Expr& expr, const VarBoundMap& vars) {
  return BoundEvaluator(vars).VisitExpr(expr);
}

}  // namespace tirtune::arith
