// The copy stage that cache_read and cache_write add to a scope: a loop nest over a whole buffer
// with one block copying it into another, the new buffer's allocation, the statement positions in
// the scope where the stage can go, and the errors of placing it.
#pragma once

#include <string>
#include <vector>

#include "tirtune/schedule/error.h"
#include "tirtune/schedule/state.h"

namespace tirtune {

/// The scope block of `realize`, which is to hold the copy stage; RootBlockCacheError when
/// `realize` is the root block.
const BlockRealizeNode* CacheScopeOf(const ScheduleState& state, const BlockRealizeNode* realize,
                                     const char* primitive);

/// The cache buffer and the loop nest of the copy block that fills it (cache_read) or writes it
/// back (cache_write).
struct CacheStage {
  Buffer cache;            // `<buffer name>_<scope>`, e.g. "A_shared": compact, same shape
  std::string block_name;  // the cache buffer's name, made unique among the blocks
  Stmt nest;               // `for ax0, ax1, ...` over the whole buffer around the copy block
};

enum class CopyDirection : uint8_t { kIntoCache, kOutOfCache };

/// The cache of `buffer` in `scope` and the stage copying `buffer` into it, or it back into
/// `buffer`. The copy block has spatial iterators v0, v1, ... copying element [v0, v1, ...].
CacheStage MakeCacheStage(const ScheduleState& state, const Buffer& buffer, StorageScope scope,
                          CopyDirection direction);

/// Replaces `realize` by `new_realize` (the block rewritten to use the cache), then inserts
/// `stage` into the scope block of `realize` before its `pos`-th statement (or at the end) and
/// appends the cache buffer to its allocations.
void AddCacheStage(ScheduleState* state, const BlockRealizeNode* realize, Stmt new_realize,
                   size_t pos, const CacheStage& stage);

/// `scope` with `stmts` as its body and `allocations` appended to the buffers it allocates.
Stmt WithScopeStatements(const BlockRealizeNode* scope, std::vector<Stmt> stmts,
                         const std::vector<Buffer>& allocations);

/// The statements directly in the body of `scope`: the elements of its sequence, or the body.
std::vector<Stmt> ScopeStatements(const BlockRealizeNode* scope);

/// The index, in ScopeStatements(scope), of the statement that contains `node`.
size_t ScopeStatementIndex(const ScheduleState& state, const BlockRealizeNode* scope,
                           const StmtNode* node);

/// The direct child blocks of `scope` that write `buffer`.
std::vector<const BlockRealizeNode*> WritersInScope(const ScheduleState& state,
                                                    const BlockRealizeNode* scope,
                                                    const Buffer& buffer);

/// NotSingleWriteBlockError: a cache stage copies a whole buffer, which is only right when one
/// block of the scope produces it.
class NotSingleWriteBlockError : public ScheduleError {
 public:
  NotSingleWriteBlockError(const char* primitive, std::string buffer,
                           std::vector<const BlockRealizeNode*> writers);
  const char* Kind() const override { return "NotSingleWriteBlockError"; }
  std::string ShortMessage() const override;
  std::vector<const Object*> Locations() const override;

 private:
  const char* primitive_;
  std::string buffer_;
  std::vector<HeldNode<BlockRealizeNode>> writers_;
};

/// CacheLocationError: the copy stage has no place among the scope's statements, because the
/// block shares its outermost loop nest with another block that accesses the buffer.
class CacheLocationError : public ScheduleError {
 public:
  CacheLocationError(const char* primitive, const BlockRealizeNode* block,
                     const BlockRealizeNode* other, std::string buffer)
      : primitive_(primitive), block_(block), other_(other), buffer_(std::move(buffer)) {}
  const char* Kind() const override { return "CacheLocationError"; }
  std::string ShortMessage() const override;
  std::string Explanation() const override;
  std::vector<const Object*> Locations() const override { return {block_, other_}; }

 private:
  const char* primitive_;
  HeldNode<BlockRealizeNode> block_;
  HeldNode<BlockRealizeNode> other_;
  std::string buffer_;
};

}  // namespace tirtune
