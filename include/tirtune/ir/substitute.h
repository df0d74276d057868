// Replacing variables by expressions throughout an expression or statement.
#pragma once

#include <functional>
#include <unordered_map>

#include "tirtune/ir/expr.h"
#include "tirtune/ir/stmt.h"

namespace tirtune {

/// Maps variables (by identity) to their replacements.
using VarMap = std::unordered_map<const VarNode*, Expr>;

/// Replaces every use of a variable in `vmap`; other variables are left alone. Unchanged
/// subtrees stay shared.
Expr Substitute(const Expr& expr, const VarMap& vmap);
Stmt Substitute(const Stmt& stmt, const VarMap& vmap);

/// Replaces every use of a variable for which `f` returns a defined expression.
Expr Substitute(const Expr& expr, const std::function<Expr(const VarNode*)>& f);
Stmt Substitute(const Stmt& stmt, const std::function<Expr(const VarNode*)>& f);

/// True when `expr` (or `stmt`) uses any variable for which `pred` holds.
bool UsesVar(const Expr& expr, const std::function<bool(const VarNode*)>& pred);
bool UsesVar(const Stmt& stmt, const std::function<bool(const VarNode*)>& pred);

}  // namespace tirtune
