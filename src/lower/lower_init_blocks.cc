// LowerInitBlocks: a block's reduction init runs when every reduction iterator is at the start of
// its domain (TVM's rule), as an `if` in front of the update; a block without reduction
// iterators runs its init unconditionally.
//
//   with block("C"):                             with block("C"):
//     vi = axis.spatial(16, i)                     vi = axis.spatial(16, i)
//     vk = axis.reduce(8, k)                       vk = axis.reduce(8, k)
//     reads(A[vi, vk])                             reads(A[vi, vk])
//     writes(C[vi])                                writes(C[vi])
//     with init():                                 if vk == 0:
//       C[vi] = 0.0                                    C[vi] = 0.0
//     C[vi] = C[vi] + A[vi, vk]                    C[vi] = C[vi] + A[vi, vk]
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

class InitLowerer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt visited = StmtMutator::VisitStmt_(op);
    const auto* block = visited.as<BlockNode>();
    if (!block->init.defined()) return visited;
    Expr at_start;
    for (const IterVar& iv : block->iter_vars) {
      if (iv.kind != IterKind::kReduce) continue;
      Expr cond = Eq(iv.var, iv.dom.min);
      at_start = at_start.defined() ? (at_start && cond) : cond;
    }
    Stmt init = at_start.defined() ? MakeIfThenElse(at_start, block->init) : block->init;
    return MakeBlock(block->name, block->iter_vars, block->reads, block->writes,
                     MakeSeq({init, block->body}), /*init=*/Stmt(), block->alloc_buffers,
                     block->annotations);
  }
};

}  // namespace

PrimFunc LowerInitBlocks(const PrimFunc& func) {
  return func.WithBody(InitLowerer().VisitStmt(func->body));
}

}  // namespace tirtune
