// SerializeNestedParallel: only the outermost parallel loop of a nest runs on the thread pool, so
// a parallel loop inside another one becomes serial. Thread-bound loops become serial too: the CPU
// code generators have no threads to bind them to (GPU lowering is a later wave).
//
//   for i in parallel(4):                        for i in parallel(4):
//     for j in parallel(8):                          for j in range(8):
//       B[i * 8 + j] = A[i * 8 + j]                      B[i * 8 + j] = A[i * 8 + j]
#include "tirtune/ir/functor.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

class NestedParallelSerializer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool parallel = op->for_kind == ForKind::kParallel;
    if (parallel) ++parallel_depth_;
    Stmt body = VisitStmt(op->body);
    if (parallel) --parallel_depth_;
    ForKind kind = op->for_kind;
    if ((parallel && parallel_depth_ > 0) || kind == ForKind::kThreadBinding) {
      kind = ForKind::kSerial;
    }
    if (kind == op->for_kind && body.same_as(op->body)) return GetStmtRef(op);
    return MakeFor(op->loop_var, op->min, op->extent, kind, body, /*thread_tag=*/"",
                   op->annotations);
  }

 private:
  int parallel_depth_ = 0;
};

}  // namespace

PrimFunc SerializeNestedParallel(const PrimFunc& func) {
  return func.WithBody(NestedParallelSerializer().VisitStmt(func->body));
}

}  // namespace tirtune
