// Planning and applying the removal of a leaf block.
#include "leaf_block_removal.h"

#include <fmt/format.h>

namespace tirtune {

LeafBlockRemoval PlanLeafBlockRemoval(const ScheduleState& state, const BlockRealizeNode* realize,
                                      const char* primitive) {
  // Step 1. Climb through the loops that hold nothing but the block.
  const StmtNode* cut = realize;
  const StmtNode* parent = state.Parent(cut);
  while (parent != nullptr && parent->kind() == NodeKind::kFor) {
    cut = parent;
    parent = state.Parent(cut);
  }
  // Step 2. The first non-loop ancestor must be a sequence that keeps other statements.
  const auto* seq = parent == nullptr ? nullptr : parent->as<SeqStmtNode>();
  if (seq == nullptr) {
    const BlockRealizeNode* scope = state.ScopeBlock(realize);
    throw SimpleScheduleError(
        "OnlyLeafInScopeError",
        fmt::format("{} would remove block '{}', the only statement left in {}; a block "
                    "cannot have an empty body",
                    primitive, realize->block->name,
                    scope == nullptr ? std::string("the function")
                                     : fmt::format("block '{}'", scope->block->name)),
        {realize});
  }
  std::vector<Stmt> rest;
  for (const Stmt& s : seq->seq) {
    if (s.get() != cut) rest.push_back(s);
  }
  return {seq, MakeSeq(std::move(rest))};
}

Stmt LeafRemovingMutator::VisitStmt(const Stmt& s) {
  if (s.get() == removal_.old_stmt) return StmtMutator::VisitStmt(removal_.new_stmt);
  return StmtMutator::VisitStmt(s);
}

Stmt LeafRemovingMutator::VisitStmt_(const BlockNode* op) {
  Stmt visited = StmtMutator::VisitStmt_(op);
  const auto* block = visited.as<BlockNode>();
  std::vector<Buffer> allocs;
  for (const Buffer& b : block->alloc_buffers) {
    if (!b.same_as(dropped_buffer_)) allocs.push_back(b);
  }
  if (allocs.size() == block->alloc_buffers.size()) return visited;
  return MakeBlock(block->name, block->iter_vars, block->reads, block->writes, block->body,
                   block->init, std::move(allocs), block->annotations);
}

namespace {

class BlockReplacingLeafRemover : public LeafRemovingMutator {
 public:
  BlockReplacingLeafRemover(LeafBlockRemoval removal, Buffer dropped_buffer,
                            const BlockRealizeNode* target, Block new_block)
      : LeafRemovingMutator(std::move(removal), std::move(dropped_buffer)),
        target_(target),
        new_block_(std::move(new_block)) {}

  using LeafRemovingMutator::VisitStmt_;
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    if (op != target_) return LeafRemovingMutator::VisitStmt_(op);
    return MakeBlockRealize(op->iter_values, op->predicate, new_block_);
  }

 private:
  HeldNode<BlockRealizeNode> target_;
  Block new_block_;
};

}  // namespace

Stmt RemoveLeafAndReplaceBlock(const Stmt& body, LeafBlockRemoval removal, Buffer dropped_buffer,
                               const BlockRealizeNode* target, Block new_block) {
  BlockReplacingLeafRemover remover(std::move(removal), std::move(dropped_buffer), target,
                                    std::move(new_block));
  return remover.VisitStmt(body);
}

}  // namespace tirtune
