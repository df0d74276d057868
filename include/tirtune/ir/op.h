// Expression builders for readable IR construction: operators that promote literal operands to
// the other operand's type and fold constants, plus named helpers for the remaining node kinds
// and the math intrinsics.
#pragma once

#include "tirtune/ir/expr.h"

namespace tirtune {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator*(Expr a, Expr b);
/// True division on floats; truncating division on integers.
Expr operator/(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

Expr Eq(Expr a, Expr b);
Expr Ne(Expr a, Expr b);
Expr FloorDiv(Expr a, Expr b);
Expr FloorMod(Expr a, Expr b);
Expr Min(Expr a, Expr b);
Expr Max(Expr a, Expr b);
Expr Select(Expr cond, Expr t, Expr f);
/// Converts to `t`; returns `value` when it already has that type, folds immediates.
Expr Cast(DataType t, Expr value);

Expr Exp(Expr x);
Expr Log(Expr x);
Expr Sqrt(Expr x);
Expr Rsqrt(Expr x);
Expr Tanh(Expr x);
Expr Sigmoid(Expr x);
Expr Erf(Expr x);
Expr Pow(Expr x, Expr y);
Expr Fabs(Expr x);
Expr Floor(Expr x);
Expr Ceil(Expr x);
/// Halfway cases to even (nearbyint), as ONNX's Round.
Expr Round(Expr x);
Expr Sin(Expr x);
Expr Cos(Expr x);

/// The smallest and largest finite value of `t`, as immediates.
Expr MinValue(DataType t);
Expr MaxValue(DataType t);
/// The immediate `value` of type `t` (integer or float).
Expr MakeConst(DataType t, double value);

}  // namespace tirtune
