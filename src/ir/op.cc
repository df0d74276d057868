// Expression builders: promote a literal operand to the other operand's type, then fold
// constants and the trivial identities (x + 0, x * 1, x * 0 for integers).
#include "tirtune/ir/op.h"

#include <cmath>
#include <limits>

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

bool IsImm(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

double ImmValue(const Expr& e) {
  if (const auto* i = e.as<IntImmNode>()) return static_cast<double>(i->value);
  return e.as<FloatImmNode>()->value;
}

// Makes both operands the same type: a literal takes the other side's type; a scalar operand
// is broadcast to the other side's lanes.
void Promote(Expr* a, Expr* b) {
  if (a->dtype() == b->dtype()) return;
  if (IsImm(*a) && !IsImm(*b)) {
    *a = MakeConst(b->dtype().element_of(), ImmValue(*a));
  } else if (IsImm(*b) && !IsImm(*a)) {
    *b = MakeConst(a->dtype().element_of(), ImmValue(*b));
  } else if (IsImm(*a) && IsImm(*b)) {
    // Two literals of different kinds: float wins.
    if (a->dtype().is_float()) {
      *b = MakeConst(a->dtype(), ImmValue(*b));
    } else {
      *a = MakeConst(b->dtype(), ImmValue(*a));
    }
  }
  int la = a->dtype().lanes(), lb = b->dtype().lanes();
  if (la == 1 && lb > 1) *a = MakeBroadcast(*a, lb);
  if (lb == 1 && la > 1) *b = MakeBroadcast(*b, la);
  TT_ICHECK(a->dtype() == b->dtype(), "cannot combine {} with {}", a->dtype().str(),
            b->dtype().str());
}

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

// Folds an arithmetic binary op over two immediates of one type; undefined when it cannot.
Expr FoldArith(NodeKind k, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  if (const auto* x = a.as<IntImmNode>()) {
    const auto* y = b.as<IntImmNode>();
    if (!y) return Expr();
    int64_t u = x->value, v = y->value;
    switch (k) {
      case NodeKind::kAdd:
        return IntImm(t, u + v);
      case NodeKind::kSub:
        return IntImm(t, u - v);
      case NodeKind::kMul:
        return IntImm(t, u * v);
      case NodeKind::kDiv:
        return v == 0 ? Expr() : IntImm(t, u / v);
      case NodeKind::kFloorDiv:
        return v == 0 ? Expr() : IntImm(t, FloorDivInt(u, v));
      case NodeKind::kFloorMod:
        return v == 0 ? Expr() : IntImm(t, FloorModInt(u, v));
      case NodeKind::kMin:
        return IntImm(t, std::min(u, v));
      case NodeKind::kMax:
        return IntImm(t, std::max(u, v));
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
  }
  if (const auto* x = a.as<FloatImmNode>()) {
    const auto* y = b.as<FloatImmNode>();
    if (!y) return Expr();
    double u = x->value, v = y->value;
    switch (k) {
      case NodeKind::kAdd:
        return MakeConst(t, u + v);
      case NodeKind::kSub:
        return MakeConst(t, u - v);
      case NodeKind::kMul:
        return MakeConst(t, u * v);
      case NodeKind::kDiv:
        return MakeConst(t, u / v);
      case NodeKind::kMin:
        return MakeConst(t, std::min(u, v));
      case NodeKind::kMax:
        return MakeConst(t, std::max(u, v));
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
      default:
        return Expr();
    }
  }
  return Expr();
}

Expr Binary(NodeKind k, Expr a, Expr b) {
  Promote(&a, &b);
  if (Expr folded = FoldArith(k, a, b); folded.defined()) return folded;
  bool integral = a.dtype().is_integral() && a.dtype().is_scalar();
  if (integral) {
    switch (k) {
      case NodeKind::kAdd:
        if (IsConstInt(b, 0)) return a;
        if (IsConstInt(a, 0)) return b;
        break;
      case NodeKind::kSub:
        if (IsConstInt(b, 0)) return a;
        break;
      case NodeKind::kMul:
        if (IsConstInt(b, 1)) return a;
        if (IsConstInt(a, 1)) return b;
        if (IsConstInt(a, 0) || IsConstInt(b, 0)) return IntImm(a.dtype(), 0);
        break;
      case NodeKind::kDiv:
      case NodeKind::kFloorDiv:
        if (IsConstInt(b, 1)) return a;
        break;
      case NodeKind::kFloorMod:
        if (IsConstInt(b, 1)) return IntImm(a.dtype(), 0);
        break;
      default:
        break;
    }
  }
  return MakeBinary(k, std::move(a), std::move(b));
}

}  // namespace

Expr operator+(Expr a, Expr b) { return Binary(NodeKind::kAdd, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return Binary(NodeKind::kSub, std::move(a), std::move(b)); }
Expr operator-(Expr a) {
  if (const auto* i = a.as<IntImmNode>()) return IntImm(a.dtype(), -i->value);
  if (const auto* f = a.as<FloatImmNode>()) return FloatImm(a.dtype(), -f->value);
  Expr zero = MakeConst(a.dtype().element_of(), 0);  // before `a` is moved from
  return Binary(NodeKind::kSub, std::move(zero), std::move(a));
}
Expr operator*(Expr a, Expr b) { return Binary(NodeKind::kMul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return Binary(NodeKind::kDiv, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return Binary(NodeKind::kLT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return Binary(NodeKind::kLE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return Binary(NodeKind::kGT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return Binary(NodeKind::kGE, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) {
  if (const int64_t* v = AsConstInt(a)) return *v ? b : Bool(false);
  if (const int64_t* v = AsConstInt(b)) return *v ? a : Bool(false);
  return Binary(NodeKind::kAnd, std::move(a), std::move(b));
}
Expr operator||(Expr a, Expr b) {
  if (const int64_t* v = AsConstInt(a)) return *v ? Bool(true) : b;
  if (const int64_t* v = AsConstInt(b)) return *v ? Bool(true) : a;
  return Binary(NodeKind::kOr, std::move(a), std::move(b));
}
Expr operator!(Expr a) {
  if (const int64_t* v = AsConstInt(a)) return Bool(!*v);
  return MakeNot(std::move(a));
}
Expr Eq(Expr a, Expr b) { return Binary(NodeKind::kEQ, std::move(a), std::move(b)); }
Expr Ne(Expr a, Expr b) { return Binary(NodeKind::kNE, std::move(a), std::move(b)); }
Expr FloorDiv(Expr a, Expr b) { return Binary(NodeKind::kFloorDiv, std::move(a), std::move(b)); }
Expr FloorMod(Expr a, Expr b) { return Binary(NodeKind::kFloorMod, std::move(a), std::move(b)); }
Expr Min(Expr a, Expr b) { return Binary(NodeKind::kMin, std::move(a), std::move(b)); }
Expr Max(Expr a, Expr b) { return Binary(NodeKind::kMax, std::move(a), std::move(b)); }

Expr Select(Expr cond, Expr t, Expr f) {
  Promote(&t, &f);
  if (const int64_t* v = AsConstInt(cond)) return *v ? t : f;
  return MakeSelect(std::move(cond), std::move(t), std::move(f));
}

Expr Cast(DataType t, Expr value) {
  if (value.dtype() == t) return value;
  if (t.is_scalar() && IsImm(value)) return MakeConst(t, ImmValue(value));
  return MakeCast(t, std::move(value));
}

namespace {
Expr Unary(Intrinsic op, Expr x) { return MakeCall(op, {std::move(x)}); }
}  // namespace

Expr Exp(Expr x) { return Unary(Intrinsic::kExp, std::move(x)); }
Expr Log(Expr x) { return Unary(Intrinsic::kLog, std::move(x)); }
Expr Sqrt(Expr x) { return Unary(Intrinsic::kSqrt, std::move(x)); }
Expr Rsqrt(Expr x) { return Unary(Intrinsic::kRsqrt, std::move(x)); }
Expr Tanh(Expr x) { return Unary(Intrinsic::kTanh, std::move(x)); }
Expr Sigmoid(Expr x) { return Unary(Intrinsic::kSigmoid, std::move(x)); }
Expr Erf(Expr x) { return Unary(Intrinsic::kErf, std::move(x)); }
Expr Fabs(Expr x) { return Unary(Intrinsic::kFabs, std::move(x)); }
Expr Floor(Expr x) { return Unary(Intrinsic::kFloor, std::move(x)); }
Expr Ceil(Expr x) { return Unary(Intrinsic::kCeil, std::move(x)); }
Expr Round(Expr x) { return Unary(Intrinsic::kRound, std::move(x)); }
Expr Sin(Expr x) { return Unary(Intrinsic::kSin, std::move(x)); }
Expr Cos(Expr x) { return Unary(Intrinsic::kCos, std::move(x)); }
Expr Pow(Expr x, Expr y) {
  Promote(&x, &y);
  return MakeCall(Intrinsic::kPow, {std::move(x), std::move(y)});
}

Expr MinValue(DataType t) {
  if (t.is_float()) {
    return FloatImm(t, t.bits() == 64   ? -std::numeric_limits<double>::max()
                       : t.bits() == 32 ? -std::numeric_limits<float>::max()
                                        : -65504.0);
  }
  if (t.is_bool() || t.code() == DataType::Code::kUInt) return IntImm(t, 0);
  return IntImm(
      t, t.bits() == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (t.bits() - 1)));
}

Expr MaxValue(DataType t) {
  if (t.is_float()) {
    return FloatImm(t, t.bits() == 64   ? std::numeric_limits<double>::max()
                       : t.bits() == 32 ? std::numeric_limits<float>::max()
                                        : 65504.0);
  }
  if (t.is_bool()) return IntImm(t, 1);
  if (t.bits() == 64) {
    return IntImm(t, std::numeric_limits<int64_t>::max());
  }
  int value_bits = t.code() == DataType::Code::kUInt ? t.bits() : t.bits() - 1;
  return IntImm(t, (int64_t{1} << value_bits) - 1);
}

Expr MakeConst(DataType t, double value) {
  // A float32 constant holds exactly the value a float32 computation would produce.
  if (t.is_float() && t.bits() == 32) return FloatImm(t, static_cast<float>(value));
  if (t.is_float()) return FloatImm(t, value);
  return IntImm(t, static_cast<int64_t>(value));
}

}  // namespace tirtune
