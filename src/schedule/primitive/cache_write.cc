// cache_write: makes a block write a new buffer of another storage scope (`<name>_<scope>`, e.g.
// C_local) instead of the one it wrote, and adds a copy stage right after the block's statement
// in its scope that writes the whole new buffer back. Every reference to the buffer inside the
// block switches (stores, loads, regions, init), so a reduction accumulates in the cache: its
// init and update both touch the new buffer.
//
// Preconditions:
//  1. the block has a `write_index`-th write buffer and is not the root block;
//  2. no other block of the scope writes the buffer (the copy-back covers the whole buffer and
//     would overwrite what they wrote);
//  3. the block reads the buffer only as a reduction (a block with an init): a plain in-place
//     update would read the cache before anything was written to it;
//  4. no other block in the same statement of the scope reads or writes the buffer (the copy
//     goes after that statement).
//
// Before:                                After CacheWrite(block "C", 0, local):
//   with block("root"):                    with block("root"):
//                                            C_local = alloc_buffer((16,), scope="local")
//     for i in range(16):                    for i in range(16):
//       with block("C"):                       with block("C"):
//         vi = axis.spatial(16, i)               vi = axis.spatial(16, i)
//         writes(C[vi])                          writes(C_local[vi])
//         C[vi] = A[vi] + 1.0                    C_local[vi] = A[vi] + 1.0
//                                            for ax0 in range(16):
//                                              with block("C_local"):
//                                                v0 = axis.spatial(16, ax0)
//                                                C[v0] = C_local[v0]
#include <fmt/format.h>

#include "buffer_access.h"
#include "buffer_loads.h"
#include "cache_stage.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

class CacheWriteOfInPlaceUpdateError : public ScheduleError {
 public:
  CacheWriteOfInPlaceUpdateError(const BlockRealizeNode* block, std::string buffer)
      : block_(block), buffer_(std::move(buffer)) {}
  const char* Kind() const override { return "CacheWriteOfInPlaceUpdateError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cache_write of buffer '{}': block '{}' also reads it and is not a "
        "reduction, so it would read the cache before anything was written",
        buffer_, block_->block->name);
  }
  std::string Explanation() const override {
    return ShortMessage() +
           ". Cache the reads with cache_read and the writes of another block, or give the "
           "update an init";
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  std::string buffer_;
};

// Step 2: the checks of preconditions 2-4; returns the index of the block's statement.
size_t CheckCacheWrite(const ScheduleState& state, const BlockRealizeNode* scope,
                       const BlockRealizeNode* realize, const Buffer& buffer) {
  std::vector<const BlockRealizeNode*> writers = WritersInScope(state, scope, buffer);
  if (writers.size() > 1) throw NotSingleWriteBlockError("cache_write", buffer->name, writers);
  const BlockNode* block = realize->block.get();
  if (!block->init.defined() &&
      (HasRegionOf(block->reads, buffer) || LoadsBuffer(block->body, buffer))) {
    throw CacheWriteOfInPlaceUpdateError(realize, buffer->name);
  }
  size_t pos = ScopeStatementIndex(state, scope, realize);
  for (const BlockRealizeNode* other : state.ChildBlocks(scope)) {
    if (other == realize || ScopeStatementIndex(state, scope, other) != pos) continue;
    if (HasRegionOf(other->block->reads, buffer) || HasRegionOf(other->block->writes, buffer)) {
      throw CacheLocationError("cache_write", realize, other, buffer->name);
    }
  }
  return pos;
}

}  // namespace

BlockRV Schedule::CacheWrite(BlockRV block_rv, int write_index, StorageScope scope) {
  const BlockRealizeNode* realize = Get(block_rv);
  // Step 1. The buffer and the scope.
  Buffer buffer = NthAccessBuffer(realize, write_index, BufferAccess::kWrite, "cache_write");
  const BlockRealizeNode* scope_block = CacheScopeOf(state_, realize, "cache_write");
  size_t pos = CheckCacheWrite(state_, scope_block, realize, buffer);
  if (check_only_) return BlockRV{kPlaceholderRVId};

  // Step 3. The cache buffer and the copy-back stage.
  CacheStage stage = MakeCacheStage(state_, buffer, scope, CopyDirection::kOutOfCache);

  // Step 4. The block works on the cache; the stage goes right after the block's statement.
  AddCacheStage(&state_, realize,
                ReplaceBuffers(GetStmtRef(realize), {{buffer.get(), stage.cache}}), pos + 1, stage);

  BlockRV out = NewBlockRV(stage.block_name);
  Record("CacheWrite", {block_rv.ref()},
         {{"write_index", write_index}, {"scope", StorageScopeName(scope)}}, {out.ref()});
  return out;
}

}  // namespace tirtune
