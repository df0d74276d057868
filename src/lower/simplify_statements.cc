// SimplifyStatements: every expression is simplified under the ranges of the loops around it,
// and the statements that decide nothing are removed: an `if` whose condition is provably true or
// false keeps only the branch that runs, a loop of extent 1 (without annotations, not thread-bound)
// is replaced by its body at the loop's min, a loop of extent 0 and an allocation nobody uses
// disappear, and no-op `evaluate`s are dropped from sequences.
//
//   for i in range(4):                           for i in range(4):
//     for j in range(1):                             B[i * 2 + 1] = A[i]
//       if i * 2 + j < 8:
//         B[i * 2 + j + 1] = A[i + j * 4]
#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

bool IsNoOp(const Stmt& s) {
  const auto* eval = s.as<EvaluateNode>();
  return eval != nullptr && eval->value.as<IntImmNode>() != nullptr;
}

Stmt NoOp() { return MakeEvaluate(IntImm(DataType::Index(), 0)); }

class StatementSimplifier : public StmtMutator {
 public:
  using StmtMutator::VisitExpr;
  using StmtMutator::VisitStmt_;

  Expr VisitExpr(const Expr& e) override { return analyzer_.Simplify(e); }

  Stmt VisitStmt_(const ForNode* op) override {
    Expr min = VisitExpr(op->min);
    Expr extent = VisitExpr(op->extent);
    const int64_t* n = AsConstInt(extent);
    if (n != nullptr && *n <= 0) return NoOp();
    // A thread-bound loop of extent 1 stays: it makes a kernel of what is under it.
    if (n != nullptr && *n == 1 && op->annotations.empty() &&
        op->for_kind != ForKind::kThreadBinding) {
      return VisitStmt(Substitute(op->body, VarMap{{op->loop_var.get(), min}}));
    }
    analyzer_.Bind(op->loop_var, Range{min, extent});
    Stmt body = VisitStmt(op->body);
    analyzer_.Unbind(op->loop_var);
    if (IsNoOp(body)) return NoOp();
    return MakeFor(op->loop_var, min, extent, op->for_kind, body, op->thread_tag, op->annotations);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Expr cond = VisitExpr(op->condition);
    if (IsConstInt(cond, 1) || analyzer_.CanProve(cond)) return VisitStmt(op->then_case);
    if (IsConstInt(cond, 0) || analyzer_.CanProve(MakeNot(cond))) {
      return op->else_case.defined() ? VisitStmt(op->else_case) : NoOp();
    }
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    if (else_case.defined() && IsNoOp(else_case)) else_case = Stmt();
    if (IsNoOp(then_case)) {
      if (!else_case.defined()) return NoOp();
      return MakeIfThenElse(analyzer_.Simplify(MakeNot(cond)), else_case);
    }
    return MakeIfThenElse(cond, then_case, else_case);
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    std::vector<Stmt> seq;
    for (const Stmt& s : op->seq) {
      Stmt v = VisitStmt(s);
      if (!IsNoOp(v)) seq.push_back(v);
    }
    return seq.empty() ? NoOp() : MakeSeq(std::move(seq));
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt body = VisitStmt(op->body);
    if (IsNoOp(body)) return body;
    return MakeAllocate(op->buffer, body);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    Stmt body = VisitStmt(op->body);
    if (IsNoOp(body)) return body;
    return MakeLetStmt(op->var, value, body);
  }

 private:
  arith::Analyzer analyzer_;
};

}  // namespace

PrimFunc SimplifyStatements(const PrimFunc& func) {
  return func.WithBody(StatementSimplifier().VisitStmt(func->body));
}

}  // namespace tirtune
