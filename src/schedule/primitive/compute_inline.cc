// compute_inline: removes a block that computes an intermediate buffer elementwise, substituting
// its value expression at every load of that buffer.
//
// Preconditions:
//  1. the block is spatial (no init, no reduction iterators) and has no predicate;
//  2. its body is a single store `B[v0, v1, ...] = f(...)` whose indices are distinct block
//     iterators; f uses no other iterator and does not read B;
//  3. B is an intermediate buffer (not a function parameter) that no other block writes, and the
//     block writes all of it (v_d ranges over [0, shape[d])), so every load sees its value;
//  4. every block that reads B is a leaf block, so that all its loads of B are its own;
//  5. removing the block leaves its scope with a non-empty body.
// Each load `B[e0, e1, ...]` becomes f with v0 := e0, v1 := e1, ...; each reader's read regions
// lose B and gain the regions at which f's buffers are now loaded. The block, the loops that held
// only it, and B's allocation disappear.
//
// Before:                                  After ComputeInline(B):
//   with block("root"):                      with block("root"):
//     B = alloc_buffer((16,), float32)         for i in range(16):
//     for i in range(16):                        with block("C"):
//       with block("B"):                           vi = axis.spatial(16, i)
//         vi = axis.spatial(16, i)                 reads(A[vi])
//         B[vi] = A[vi] * 2.0                      C[vi] = A[vi] * 2.0 + 1.0
//     for i in range(16):
//       with block("C"):
//         vi = axis.spatial(16, i)
//         reads(B[vi])
//         C[vi] = B[vi] + 1.0
#include "compute_inline.h"

#include <fmt/format.h>

#include <unordered_set>

#include "block_checks.h"
#include "buffer_loads.h"
#include "leaf_block_removal.h"
#include "read_regions.h"
#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

constexpr const char* kPrimitive = "compute_inline";

class ValueUsesOtherIterError : public ScheduleError {
 public:
  ValueUsesOtherIterError(const BlockRealizeNode* block, std::string iter)
      : block_(block), iter_(std::move(iter)) {}
  const char* Kind() const override { return "ValueUsesOtherIterError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot inline block '{}': its value uses iterator '{}', which is not a store index, so "
        "a load of the buffer does not determine the value",
        block_->block->name, iter_);
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  std::string iter_;
};

class SelfReadError : public ScheduleError {
 public:
  explicit SelfReadError(const BlockRealizeNode* block) : block_(block) {}
  const char* Kind() const override { return "SelfReadError"; }
  std::string ShortMessage() const override {
    const auto* store = block_->block->body.as<BufferStoreNode>();
    return fmt::format("cannot inline block '{}': its value reads '{}', the buffer it writes",
                       block_->block->name, store->buffer->name);
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
};

class PartialWriteError : public ScheduleError {
 public:
  PartialWriteError(const BlockRealizeNode* block, std::string buffer, std::string iter)
      : block_(block), buffer_(std::move(buffer)), iter_(std::move(iter)) {}
  const char* Kind() const override { return "PartialWriteError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot inline block '{}': iterator '{}' does not cover its dimension of '{}', so loads "
        "of the elements it leaves unwritten would see the block's value instead of the buffer's",
        block_->block->name, iter_, buffer_);
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  std::string buffer_;
  std::string iter_;
};

class MultipleWritersError : public ScheduleError {
 public:
  MultipleWritersError(const BlockRealizeNode* block, const BlockRealizeNode* other,
                       std::string buffer)
      : block_(block), other_(other), buffer_(std::move(buffer)) {}
  const char* Kind() const override { return "MultipleWritersError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot inline block '{}': block '{}' also writes '{}', so its loads do not all see the "
        "value of block '{}'",
        block_->block->name, other_->block->name, buffer_, block_->block->name);
  }
  std::vector<const Object*> Locations() const override { return {block_, other_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  HeldNode<BlockRealizeNode> other_;
  std::string buffer_;
};

class NonLeafReaderError : public ScheduleError {
 public:
  NonLeafReaderError(const BlockRealizeNode* block, const BlockRealizeNode* reader)
      : block_(block), reader_(reader) {}
  const char* Kind() const override { return "NonLeafReaderError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot inline block '{}': block '{}' reads its buffer but contains other blocks; only "
        "leaf blocks can have their loads rewritten",
        block_->block->name, reader_->block->name);
  }
  std::vector<const Object*> Locations() const override { return {block_, reader_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  HeldNode<BlockRealizeNode> reader_;
};

// Replaces every load of the inlined buffer by the producer's value and rewrites the read
// regions of the blocks that loaded it; removes the producer on the way.
class ComputeInliner : public LeafRemovingMutator {
 public:
  ComputeInliner(LeafBlockRemoval removal, const BufferStoreNode* store,
                 std::vector<const VarNode*> index_vars)
      : LeafRemovingMutator(std::move(removal), store->buffer),
        store_(store),
        index_vars_(std::move(index_vars)) {
    PostOrderVisit(store->value, [this](const Object* node) {
      if (node->kind() == NodeKind::kBufferLoad) {
        value_buffers_.insert(static_cast<const BufferLoadNode*>(node)->buffer.get());
      }
    });
  }

  using LeafRemovingMutator::VisitExpr_;
  using LeafRemovingMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr visited = LeafRemovingMutator::VisitExpr_(op);
    const auto* load = visited.as<BufferLoadNode>();
    if (!load->buffer.same_as(store_->buffer)) return visited;
    VarMap vmap;
    for (size_t d = 0; d < index_vars_.size(); ++d) vmap[index_vars_[d]] = load->indices[d];
    return Substitute(store_->value, vmap);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt visited = LeafRemovingMutator::VisitStmt_(op);
    if (!ReadsBuffer(op, store_->buffer)) return visited;
    const auto* block = visited.as<BlockNode>();
    Stmt accesses = block->init.defined() ? MakeSeq({block->init, block->body}) : block->body;
    std::vector<BufferRegion> added = LoadedRegions(
        accesses, [this](const BufferNode* b) { return value_buffers_.count(b) > 0; });
    return MakeBlock(block->name, block->iter_vars,
                     SpliceRegions(block->reads, store_->buffer, added), block->writes, block->body,
                     block->init, block->alloc_buffers, block->annotations);
  }

 private:
  const BufferStoreNode* store_;
  std::vector<const VarNode*> index_vars_;
  std::unordered_set<const BufferNode*> value_buffers_;
};

}  // namespace

void InlineBlock(Schedule* sch, BlockRV block_rv) {
  const ScheduleState& state = sch->state();
  const BlockRealizeNode* realize = sch->Get(block_rv);
  // Step 1. The block computes one element of B per iterator value, from those iterators.
  CheckSpatialBlock(realize, kPrimitive);
  CheckTrivialPredicate(realize, kPrimitive);
  const BufferStoreNode* store = SingleStoreOf(realize, kPrimitive);
  std::vector<const VarNode*> index_vars = StoreIndexVars(realize, store, kPrimitive);
  for (const IterVar& iv : realize->block->iter_vars) {
    const VarNode* var = iv.var.get();
    bool is_index = std::find(index_vars.begin(), index_vars.end(), var) != index_vars.end();
    if (!is_index && UsesVar(store->value, [var](const VarNode* v) { return v == var; })) {
      throw ValueUsesOtherIterError(realize, var->name);
    }
  }
  const Buffer& buffer = store->buffer;
  if (LoadsBuffer(store->value, buffer)) throw SelfReadError(realize);

  // Step 2. B is private to this producer and its leaf readers.
  CheckIntermediate(sch->func(), buffer, realize, kPrimitive);
  for (size_t d = 0; d < index_vars.size(); ++d) {
    const Range* dom = &FindIterVar(realize->block.get(), index_vars[d])->dom;
    arith::Analyzer analyzer;
    if (!analyzer.CanProveEqual(dom->min, IntImm(dom->min.dtype(), 0)) ||
        !analyzer.CanProveEqual(dom->extent, buffer->shape[d])) {
      throw PartialWriteError(realize, buffer->name, index_vars[d]->name);
    }
  }
  for (const BlockRealizeNode* writer : BlocksWriting(state, buffer)) {
    if (writer != realize) throw MultipleWritersError(realize, writer, buffer->name);
  }
  for (const BlockRealizeNode* reader : BlocksReading(state, buffer)) {
    if (HasChildBlocks(reader)) throw NonLeafReaderError(realize, reader);
  }

  // Step 3. Removing the block leaves its scope non-empty.
  LeafBlockRemoval removal = PlanLeafBlockRemoval(state, realize, kPrimitive);
  if (sch->check_only()) return;

  // Step 4. Remove the block and substitute its value at every load, in one rewrite.
  ComputeInliner inliner(std::move(removal), store, std::move(index_vars));
  sch->mutable_state().SetFunc(sch->func().WithBody(inliner.VisitStmt(sch->func()->body)));
}

void Schedule::ComputeInline(BlockRV block_rv) {
  InlineBlock(this, block_rv);
  Record("ComputeInline", {block_rv.ref()}, nlohmann::json::object(), {});
}

}  // namespace tirtune
