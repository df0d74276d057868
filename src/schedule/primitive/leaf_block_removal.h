// Removing a leaf block from the tree: its realize, together with the loops that only it kept
// alive, is cut out of the nearest enclosing sequence. The primitives that remove or move a block
// (compute_inline, reverse_compute_inline, fuse_reduction_epilogue, compute_at) plan the cut among
// their checks (it can fail) and then apply it, inside the same rewrite that updates the other
// blocks where there is one.
#pragma once

#include "tirtune/ir/functor.h"
#include "tirtune/schedule/error.h"
#include "tirtune/schedule/state.h"

namespace tirtune {

/// The cut: `old_stmt` (a sequence) becomes `new_stmt` (the sequence without the block's
/// subtree).
struct LeafBlockRemoval {
  const StmtNode* old_stmt = nullptr;
  Stmt new_stmt;
};

/// Plans removing `realize` and the loops above it that contain nothing else.
/// OnlyLeafInScopeError when that would leave a block or a branch with an empty body.
LeafBlockRemoval PlanLeafBlockRemoval(const ScheduleState& state, const BlockRealizeNode* realize,
                                      const char* primitive);

/// `body` (the function body) with `removal` applied, the allocation of `dropped_buffer` removed,
/// and the block of `target` replaced by `new_block` (keeping its bindings and predicate): the
/// rewrite of the primitives that fold a removed block into another one (reverse_compute_inline,
/// fuse_reduction_epilogue).
Stmt RemoveLeafAndReplaceBlock(const Stmt& body, LeafBlockRemoval removal, Buffer dropped_buffer,
                               const BlockRealizeNode* target, Block new_block);

/// A mutator of the whole function body that applies a planned removal and drops one buffer
/// from the alloc_buffers of the block that allocates it. Primitives derive from it to rewrite
/// the remaining blocks; overrides of VisitStmt_(const BlockNode*) call this one.
class LeafRemovingMutator : public StmtMutator {
 public:
  LeafRemovingMutator(LeafBlockRemoval removal, Buffer dropped_buffer)
      : removal_(std::move(removal)), dropped_buffer_(std::move(dropped_buffer)) {}

  using StmtMutator::VisitStmt;
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt(const Stmt& s) override;
  Stmt VisitStmt_(const BlockNode* op) override;

 private:
  LeafBlockRemoval removal_;
  Buffer dropped_buffer_;
};

}  // namespace tirtune
