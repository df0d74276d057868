// ConvertBlocksToLoops: each block realize is replaced by its block's body with the iterators
// substituted by their bindings, guarded by the predicate when it is not `True`, inside one
// Allocate per buffer the block allocates (the root block's allocations thus enclose the whole
// body). Reduction inits must have been lowered first (LowerInitBlocks).
//
//   with block("root"):                          with allocate(B, (16,), float32):
//     B = alloc_buffer((16,), float32)               for i0 in range(4):
//     for i0 in range(4):                                for i1 in range(5):
//       for i1 in range(5):                                  if i0 * 5 + i1 < 16:
//         with block("B"):                                       B[i0 * 5 + i1] = A[i0 * 5 + i1]
//           vi = axis.spatial(16, i0 * 5 + i1)
//           where(i0 * 5 + i1 < 16)
//           reads(A[vi])
//           writes(B[vi])
//           B[vi] = A[vi]
#include "tirtune/ir/functor.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/passes.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

class BlockConverter : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    TT_ICHECK(!block->init.defined(), "block {} still has an init; run LowerInitBlocks first",
              block->name);
    // Inner blocks first: their bindings may use this block's iterators, which the substitution
    // below then replaces as well.
    Stmt body = VisitStmt(block->body);
    VarMap vmap;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      vmap[block->iter_vars[i].var.get()] = VisitExpr(op->iter_values[i]);
    }
    body = Substitute(body, vmap);
    for (auto it = block->alloc_buffers.rbegin(); it != block->alloc_buffers.rend(); ++it) {
      body = MakeAllocate(*it, body);
    }
    if (!IsConstInt(op->predicate, 1)) body = MakeIfThenElse(VisitExpr(op->predicate), body);
    return body;
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    TT_UNREACHABLE("block {} outside a block realize", op->name);
  }
};

}  // namespace

PrimFunc ConvertBlocksToLoops(const PrimFunc& func) {
  return func.WithBody(BlockConverter().VisitStmt(func->body));
}

}  // namespace tirtune
