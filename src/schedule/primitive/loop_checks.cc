// Shared loop preconditions and the predicate helper used by split.
#include "loop_checks.h"

#include <fmt/format.h>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"

namespace tirtune {

int64_t ConstExtentOf(const ForNode* loop, const char* primitive) {
  const int64_t* extent = AsConstInt(loop->extent);
  if (extent == nullptr) {
    throw SimpleScheduleError(
        "NotConstantExtentError",
        fmt::format("{} needs a loop with a constant extent; loop '{}' has a symbolic extent",
                    primitive, loop->loop_var->name),
        {loop});
  }
  return *extent;
}

void CheckSerial(const ForNode* loop, const char* primitive) {
  if (loop->for_kind != ForKind::kSerial) {
    throw SimpleScheduleError(
        "NotSerialLoopError",
        fmt::format("{} needs a serial loop; loop '{}' is {}", primitive, loop->loop_var->name,
                    ForKindName(loop->for_kind)),
        {loop});
  }
}

const ForNode* OnlyChildLoop(const ForNode* loop) { return loop->body.as<ForNode>(); }

namespace {
class PredicateAdder : public StmtMutator {
 public:
  explicit PredicateAdder(const Expr& predicate) : predicate_(predicate) {}
  bool found = false;
  Expr VisitExpr(const Expr& e) override { return e; }
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    found = true;
    Expr pred = IsConstInt(op->predicate, 1) ? predicate_ : op->predicate && predicate_;
    return MakeBlockRealize(op->iter_values, pred, op->block);
  }

 private:
  Expr predicate_;
};
}  // namespace

namespace {
class BindingSimplifier : public StmtMutator {
 public:
  explicit BindingSimplifier(arith::Analyzer* analyzer) : analyzer_(analyzer) {}
  Expr VisitExpr(const Expr& e) override { return e; }
  Stmt VisitStmt_(const ForNode* op) override {
    analyzer_->Bind(op->loop_var, Range{op->min, op->extent});
    return StmtMutator::VisitStmt_(op);
  }
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    std::vector<Expr> values;
    bool changed = false;
    for (const Expr& v : op->iter_values) {
      values.push_back(analyzer_->Simplify(v));
      changed |= !values.back().same_as(v);
    }
    Expr pred = analyzer_->Simplify(op->predicate);
    if (!changed && pred.same_as(op->predicate)) return GetStmtRef(op);
    return MakeBlockRealize(std::move(values), std::move(pred), op->block);
  }

 private:
  arith::Analyzer* analyzer_;
};
}  // namespace

Stmt SimplifyBindings(const Stmt& stmt, arith::Analyzer* analyzer) {
  return BindingSimplifier(analyzer).VisitStmt(stmt);
}

void BindEnclosingLoops(const ScheduleState& state, const StmtNode* node,
                        arith::Analyzer* analyzer) {
  for (const StmtNode* a : state.Ancestors(node)) {
    if (const auto* loop = a->as<ForNode>()) {
      analyzer->Bind(loop->loop_var, Range{loop->min, loop->extent});
    }
  }
}

Stmt AddPredicate(const Stmt& stmt, const Expr& predicate) {
  PredicateAdder adder(predicate);
  Stmt out = adder.VisitStmt(stmt);
  if (adder.found) return out;
  return MakeIfThenElse(predicate, stmt);
}

}  // namespace tirtune
