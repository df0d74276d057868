// UnrollLoops: an unrolled loop with a constant extent up to options.max_explicit_unroll becomes
// one copy of its body per iteration, with the loop variable replaced by its value; a larger one
// (or one whose extent is not constant) becomes a serial loop annotated "pragma_unroll" = N, which
// asks the code generator to unroll it by N = min(extent, max_explicit_unroll).
//
//   for i in range(4):                           for i in range(4):
//     for j in unroll(2):                            B[i * 2] = A[i * 2]
//       B[i * 2 + j] = A[i * 2 + j]                   B[i * 2 + 1] = A[i * 2 + 1]
//
// The loop annotation "pragma_auto_unroll_max_step" = N (TVM's meaning) unrolls, in addition,
// every serial loop nested inside the annotated loop whose body runs at most N statements in
// all, counting the iterations of the loops it contains; the annotation itself is consumed
// (unless options.expand_auto_unroll is false: then neither happens).
// A loop whose body allocates is never expanded (each copy would allocate the same buffer); an
// unrolled one becomes serial with "pragma_unroll".
#include <algorithm>
#include <limits>

#include "runtime_loops.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

constexpr const char* kPragmaUnroll = "pragma_unroll";

// Gives every loop and let inside `s` a fresh variable, so that the copies of an unrolled body do
// not define the same variables.
class VariableRenamer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Var fresh = op->loop_var.Copy();
    Stmt body = VisitStmt(Substitute(op->body, VarMap{{op->loop_var.get(), fresh}}));
    return MakeFor(fresh, VisitExpr(op->min), VisitExpr(op->extent), op->for_kind, body,
                   op->thread_tag, op->annotations);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Var fresh = op->var.Copy();
    Stmt body = VisitStmt(Substitute(op->body, VarMap{{op->var.get(), fresh}}));
    return MakeLetStmt(fresh, VisitExpr(op->value), body);
  }
};

class LoopUnroller : public StmtMutator {
 public:
  explicit LoopUnroller(const LowerOptions& options) : options_(options) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    // Step 1. The body first, under this loop's auto-unroll limit if it sets one.
    Annotations annotations = op->annotations;
    int64_t outer_limit = auto_unroll_limit_;
    if (options_.expand_auto_unroll && annotations.erase(kAutoUnrollMaxStep) > 0) {
      auto_unroll_limit_ = AutoUnrollLimitInside(op, outer_limit);
    }
    Stmt body = VisitStmt(op->body);
    auto_unroll_limit_ = outer_limit;

    // Step 2. Expand, keep, or hand the unrolling over to the code generator.
    const int64_t* extent = AsConstInt(op->extent);
    bool allocates = Allocates(body);
    if (op->for_kind == ForKind::kUnrolled) {
      if (extent != nullptr && *extent <= options_.max_explicit_unroll && !allocates) {
        return Expand(op, *extent, body);
      }
      // max_explicit_unroll 0 expands nothing and asks for the whole extent.
      int64_t factor = options_.max_explicit_unroll > 0 ? options_.max_explicit_unroll : kManySteps;
      if (extent != nullptr) factor = std::min(factor, *extent);
      if (extent == nullptr && options_.max_explicit_unroll <= 0) factor = 1;
      annotations[kPragmaUnroll] = IntImm(DataType::Index(), std::max<int64_t>(factor, 1));
      return MakeFor(op->loop_var, op->min, op->extent, ForKind::kSerial, body, "", annotations);
    }
    if (AutoUnrollExpands(op, body, outer_limit)) return Expand(op, *extent, body);
    return MakeFor(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag,
                   annotations);
  }

 private:
  Stmt Expand(const ForNode* op, int64_t extent, const Stmt& body) {
    if (extent <= 0) return MakeEvaluate(IntImm(DataType::Index(), 0));
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < extent; ++k) {
      Expr value = op->min + IntImm(op->loop_var.dtype(), k);
      Stmt copy = Substitute(body, VarMap{{op->loop_var.get(), value}});
      copies.push_back(k == 0 ? copy : VariableRenamer().VisitStmt(copy));
    }
    return MakeSeq(std::move(copies));
  }

  const LowerOptions& options_;
  // The largest step count a serial loop may have to be unrolled here; 0 outside any
  // "pragma_auto_unroll_max_step" loop.
  int64_t auto_unroll_limit_ = 0;
};

}  // namespace

PrimFunc UnrollLoops(const PrimFunc& func, const LowerOptions& options) {
  return func.WithBody(LoopUnroller(options).VisitStmt(func->body));
}

}  // namespace tirtune
