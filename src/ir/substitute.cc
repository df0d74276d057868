// Substitute and UsesVar: a mutator that swaps variables, and a visitor that looks for them.
#include "tirtune/ir/substitute.h"

#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

class VarSubstituter : public StmtMutator {
 public:
  explicit VarSubstituter(const std::function<Expr(const VarNode*)>& f) : f_(f) {}
  using StmtMutator::VisitExpr_;
  Expr VisitExpr_(const VarNode* op) override {
    Expr e = f_(op);
    return e.defined() ? e : GetRef(op);
  }

 private:
  const std::function<Expr(const VarNode*)>& f_;
};

class VarFinder : public StmtVisitor {
 public:
  explicit VarFinder(const std::function<bool(const VarNode*)>& pred) : pred_(pred) {}
  using StmtVisitor::VisitExpr_;
  void VisitExpr(const Expr& e) override {
    if (!found) StmtVisitor::VisitExpr(e);
  }
  void VisitStmt(const Stmt& s) override {
    if (!found) StmtVisitor::VisitStmt(s);
  }
  void VisitExpr_(const VarNode* op) override {
    if (pred_(op)) found = true;
  }
  bool found = false;

 private:
  const std::function<bool(const VarNode*)>& pred_;
};

std::function<Expr(const VarNode*)> Lookup(const VarMap& vmap) {
  return [&vmap](const VarNode* v) -> Expr {
    auto it = vmap.find(v);
    return it == vmap.end() ? Expr() : it->second;
  };
}

}  // namespace

Expr Substitute(const Expr& expr, const std::function<Expr(const VarNode*)>& f) {
  return VarSubstituter(f).VisitExpr(expr);
}
Stmt Substitute(const Stmt& stmt, const std::function<Expr(const VarNode*)>& f) {
  return VarSubstituter(f).VisitStmt(stmt);
}
Expr Substitute(const Expr& expr, const VarMap& vmap) {
  if (vmap.empty()) return expr;
  return Substitute(expr, Lookup(vmap));
}
Stmt Substitute(const Stmt& stmt, const VarMap& vmap) {
  if (vmap.empty()) return stmt;
  return Substitute(stmt, Lookup(vmap));
}

bool UsesVar(const Expr& expr, const std::function<bool(const VarNode*)>& pred) {
  VarFinder finder(pred);
  finder.VisitExpr(expr);
  return finder.found;
}
bool UsesVar(const Stmt& stmt, const std::function<bool(const VarNode*)>& pred) {
  VarFinder finder(pred);
  finder.VisitStmt(stmt);
  return finder.found;
}

}  // namespace tirtune
