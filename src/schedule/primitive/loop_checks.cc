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

Stmt AddPredicate(const Stmt& stmt, const Expr& predicate) {
  PredicateAdder adder(predicate);
  Stmt out = adder.VisitStmt(stmt);
  if (adder.found) return out;
  return MakeIfThenElse(predicate, stmt);
}

}  // namespace tirtune
