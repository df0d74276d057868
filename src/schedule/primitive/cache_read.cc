// cache_read: copies a buffer that a block reads into a new buffer of another storage scope
// (`<name>_<scope>`, e.g. A_shared) and makes that block read the copy. The copy is a new block
// of the same name with spatial iterators over the whole buffer, in its own loop nest
// `ax0, ax1, ...` directly in the block's scope; the new buffer is allocated by the scope block.
// Only `block` switches to the copy (its loads, in body and init, and its read regions); other
// readers keep the original.
//
// Preconditions:
//  1. the block has a `read_index`-th read buffer and is not the root block;
//  2. the block does not also write the buffer (it would read the copy made before its own
//     writes: a reduction's accumulator, or an element an earlier iteration wrote);
//  3. at most one block of the scope writes the buffer;
//  4. when another block of the scope produces the buffer before `block`, the two are in
//     different statements of the scope (the copy goes between them).
// The copy goes right after the statement holding the producer, when there is one before the
// block; otherwise right before the first statement holding a reader of the buffer.
//
// Before:                                After CacheRead(block "B", 0, shared):
//   with block("root"):                    with block("root"):
//                                            A_shared = alloc_buffer((16,), scope="shared")
//                                            for ax0 in range(16):
//                                              with block("A_shared"):
//                                                v0 = axis.spatial(16, ax0)
//                                                A_shared[v0] = A[v0]
//     for i in range(16):                    for i in range(16):
//       with block("B"):                       with block("B"):
//         vi = axis.spatial(16, i)               vi = axis.spatial(16, i)
//         reads(A[vi])                           reads(A_shared[vi])
//         B[vi] = A[vi] * 2.0                    B[vi] = A_shared[vi] * 2.0
#include <fmt/format.h>

#include <algorithm>

#include "buffer_access.h"
#include "cache_stage.h"
#include "tirtune/ir/functor.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

class CacheReadOfWrittenBufferError : public ScheduleError {
 public:
  CacheReadOfWrittenBufferError(const BlockRealizeNode* block, std::string buffer)
      : block_(block), buffer_(std::move(buffer)) {}
  const char* Kind() const override { return "CacheReadOfWrittenBufferError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cache_read of buffer '{}': block '{}' also writes it, so it would read a "
        "copy that misses its own writes",
        buffer_, block_->block->name);
  }
  std::string Explanation() const override {
    return ShortMessage() + ". Use cache_write to keep a block's output in another scope";
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  std::string buffer_;
};

// Rewrites loads of `src` into loads of `dst`, and read regions likewise; stores and write
// regions keep `src`.
class ReadRedirector : public StmtMutator {
 public:
  ReadRedirector(Buffer src, Buffer dst) : src_(std::move(src)), dst_(std::move(dst)) {}
  using StmtMutator::VisitExpr_;
  using StmtMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtMutator::VisitExpr_(op);
    const auto* load = e.as<BufferLoadNode>();
    if (!load->buffer.same_as(src_)) return e;
    return MakeBufferLoad(dst_, load->indices);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    const auto* b = s.as<BlockNode>();
    std::vector<BufferRegion> reads = b->reads;
    bool changed = false;
    for (BufferRegion& r : reads) {
      if (r.buffer.same_as(src_)) {
        r.buffer = dst_;
        changed = true;
      }
    }
    if (!changed) return s;
    return MakeBlock(b->name, b->iter_vars, std::move(reads), b->writes, b->body, b->init,
                     b->alloc_buffers, b->annotations);
  }

 private:
  Buffer src_, dst_;
};

// Step 2: where the copy goes among the scope's statements.
size_t CopyPosition(const ScheduleState& state, const BlockRealizeNode* scope,
                    const BlockRealizeNode* block, const Buffer& buffer) {
  size_t block_pos = ScopeStatementIndex(state, scope, block);
  std::vector<const BlockRealizeNode*> writers = WritersInScope(state, scope, buffer);
  if (writers.size() > 1) throw NotSingleWriteBlockError("cache_read", buffer->name, writers);
  if (writers.size() == 1) {
    size_t producer_pos = ScopeStatementIndex(state, scope, writers[0]);
    if (producer_pos == block_pos) {
      throw CacheLocationError("cache_read", block, writers[0], buffer->name);
    }
    if (producer_pos < block_pos) return producer_pos + 1;
  }
  size_t first_reader = block_pos;
  for (const BlockRealizeNode* child : state.ChildBlocks(scope)) {
    if (HasRegionOf(child->block->reads, buffer)) {
      first_reader = std::min(first_reader, ScopeStatementIndex(state, scope, child));
    }
  }
  return first_reader;
}

}  // namespace

BlockRV Schedule::CacheRead(BlockRV block_rv, int read_index, StorageScope scope) {
  const BlockRealizeNode* realize = Get(block_rv);
  // Step 1. The buffer and the scope.
  Buffer buffer = NthAccessBuffer(realize, read_index, BufferAccess::kRead, "cache_read");
  if (HasRegionOf(realize->block->writes, buffer)) {
    throw CacheReadOfWrittenBufferError(realize, buffer->name);
  }
  const BlockRealizeNode* scope_block = CacheScopeOf(state_, realize, "cache_read");
  size_t pos = CopyPosition(state_, scope_block, realize, buffer);
  if (check_only_) return BlockRV{kPlaceholderRVId};

  // Step 3. The cache buffer and its copy stage.
  CacheStage stage = MakeCacheStage(state_, buffer, scope, CopyDirection::kIntoCache);

  // Step 4. The block reads the cache; the scope gets the stage and the allocation.
  ReadRedirector redirect(buffer, stage.cache);
  AddCacheStage(&state_, realize, redirect.VisitStmt(GetStmtRef(realize)), pos, stage);

  BlockRV out = NewBlockRV(stage.block_name);
  Record("CacheRead", {block_rv.ref()},
         {{"read_index", read_index}, {"scope", StorageScopeName(scope)}}, {out.ref()});
  return out;
}

}  // namespace tirtune
