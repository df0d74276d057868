// The copy stage that cache_read and cache_write add to a scope: a loop nest over a whole buffer
// with one block copying it into another, the new buffer's allocation, and the statement
// positions in the scope where the stage can go.
#pragma once

#include <string>
#include <vector>

#include "tirtune/schedule/error.h"
#include "tirtune/schedule/state.h"

namespace tirtune {

/// `<buffer name>_<scope>`, e.g. "A_shared".
std::string CacheBufferName(const Buffer& buffer, StorageScope scope);

/// A compact buffer like `buffer` (same shape and element type) named `name`, in `scope`.
Buffer MakeCacheBuffer(const Buffer& buffer, const std::string& name, StorageScope scope);

/// The loop nest `for ax0, ax1, ...` over the whole of `src` around a block `block_name` with
/// spatial iterators v0, v1, ... that copies `src[v0, v1, ...]` into `dst[v0, v1, ...]`.
Stmt MakeCopyNest(const ScheduleState& state, const std::string& block_name, const Buffer& src,
                 const Buffer& dst);

/// The statements directly in the body of `scope`: the elements of its sequence, or the body.
std::vector<Stmt> ScopeStatements(const BlockRealizeNode* scope);

/// The index, in ScopeStatements(scope), of the statement that contains `node`.
size_t ScopeStatementIndex(const ScheduleState& state, const BlockRealizeNode* scope,
                           const StmtNode* node);

/// `scope` with `stage` inserted before its `pos`-th statement (or at the end) and `buffer`
/// appended to its allocations.
Stmt InsertCacheStage(const BlockRealizeNode* scope, size_t pos, Stmt stage, Buffer buffer);

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
  std::vector<const BlockRealizeNode*> writers_;
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
  const BlockRealizeNode* block_;
  const BlockRealizeNode* other_;
  std::string buffer_;
};

}  // namespace tirtune
