// A deterministic total order on expressions. The canonical simplifier sorts the terms of a sum
// with it, so equal sums print the same way however they were written.
#pragma once

#include "tirtune/ir/expr.h"

namespace tirtune::arith {

/// Three-way comparison: negative, zero or positive. Zero exactly when the two expressions are
/// structurally equal with variables and buffers compared by identity. Variables order by name;
/// two distinct variables with the same name fall back to their addresses.
int CompareExpr(const Expr& a, const Expr& b);

/// Structural equality with variables and buffers compared by identity.
inline bool ExprDeepEqual(const Expr& a, const Expr& b) { return CompareExpr(a, b) == 0; }

/// Orders expressions by CompareExpr; for sorted containers.
struct ExprLess {
  bool operator()(const Expr& a, const Expr& b) const { return CompareExpr(a, b) < 0; }
};

}  // namespace tirtune::arith
