// Constant interval bounds of integer expressions, and the saturating interval arithmetic they
// are computed with (±inf are the IntBound sentinels).
#pragma once

#include <cstdint>

#include "tirtune/arith/analyzer.h"

namespace tirtune::arith {

/// Bounds of `expr` given bounds of its free variables. Unknown variables take their type's
/// range (int64: everything). Non-integer expressions are Everything().
IntBound EvalConstIntBound(const Expr& expr, const VarBoundMap& vars);

/// The value range of an integer type (int64 and uint64 reach the infinities).
IntBound TypeBound(DataType t);

/// Interval arithmetic on bounds; results saturate to the infinities instead of overflowing.
IntBound BoundAdd(const IntBound& a, const IntBound& b);
IntBound BoundNeg(const IntBound& a);
IntBound BoundMulConst(const IntBound& a, int64_t c);
IntBound BoundUnion(const IntBound& a, const IntBound& b);

/// Floor division and modulo on integers (the divisor must not be zero).
int64_t FloorDivInt(int64_t a, int64_t b);
int64_t FloorModInt(int64_t a, int64_t b);

}  // namespace tirtune::arith
