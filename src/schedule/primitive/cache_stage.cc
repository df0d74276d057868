// The copy stage of cache_read and cache_write, and where it goes in its scope.
#include "cache_stage.h"

#include <fmt/format.h>

#include "buffer_access.h"
#include "tirtune/support/error.h"

namespace tirtune {

namespace {

Stmt MakeCopyNest(const ScheduleState& state, const std::string& block_name, const Buffer& src,
                  const Buffer& dst) {
  std::vector<Var> loop_vars;
  std::vector<IterVar> iter_vars;
  std::vector<Expr> bindings, indices;
  for (int k = 0; k < src->ndim(); ++k) {
    const Expr& extent = src->shape[k];
    loop_vars.push_back(state.FreshLoopVar(fmt::format("ax{}", k), extent.dtype()));
    Var v(fmt::format("v{}", k), extent.dtype());
    iter_vars.push_back(
        IterVar{v, Range::FromMinExtent(IntImm(extent.dtype(), 0), extent), IterKind::kSpatial});
    bindings.push_back(loop_vars.back());
    indices.push_back(v);
  }
  Stmt copy = MakeBufferStore(dst, MakeBufferLoad(src, indices), indices);
  Block block = MakeBlock(block_name, iter_vars, {BufferRegion::Point(src, indices)},
                          {BufferRegion::Point(dst, indices)}, copy);
  Stmt nest = MakeBlockRealize(bindings, Bool(true), block);
  for (int k = src->ndim(); k-- > 0;) {
    const Expr& extent = src->shape[k];
    nest = MakeFor(loop_vars[k], IntImm(extent.dtype(), 0), extent, ForKind::kSerial, nest);
  }
  return nest;
}

// `scope` with `stage` inserted before its `pos`-th statement (or at the end) and `buffer`
// appended to its allocations.
Stmt InsertCacheStage(const BlockRealizeNode* scope, size_t pos, Stmt stage, Buffer buffer) {
  std::vector<Stmt> stmts = ScopeStatements(scope);
  TT_ICHECK(pos <= stmts.size(), "cache stage position {} past the {} statements of the scope", pos,
            stmts.size());
  stmts.insert(stmts.begin() + static_cast<std::ptrdiff_t>(pos), std::move(stage));
  return WithScopeStatements(scope, std::move(stmts), {std::move(buffer)});
}

}  // namespace

Stmt WithScopeStatements(const BlockRealizeNode* scope, std::vector<Stmt> stmts,
                         const std::vector<Buffer>& allocations) {
  const BlockNode* b = scope->block.get();
  std::vector<Buffer> allocs = b->alloc_buffers;
  allocs.insert(allocs.end(), allocations.begin(), allocations.end());
  Block block = MakeBlock(b->name, b->iter_vars, b->reads, b->writes, MakeSeq(std::move(stmts)),
                          b->init, std::move(allocs), b->annotations);
  return MakeBlockRealize(scope->iter_values, scope->predicate, block);
}

const BlockRealizeNode* CacheScopeOf(const ScheduleState& state, const BlockRealizeNode* realize,
                                     const char* primitive) {
  const BlockRealizeNode* scope = state.ScopeBlock(realize);
  if (scope == nullptr) {
    throw SimpleScheduleError("RootBlockCacheError",
                              fmt::format("{} of the root block '{}': it has no scope to hold "
                                          "the copy",
                                          primitive, realize->block->name),
                              {realize});
  }
  return scope;
}

CacheStage MakeCacheStage(const ScheduleState& state, const Buffer& buffer, StorageScope scope,
                          CopyDirection direction) {
  std::string name = fmt::format("{}_{}", buffer->name, StorageScopeName(scope));
  Buffer cache(name, buffer->dtype, buffer->shape, scope);
  std::string block_name = state.FreshBlockName(name);
  Stmt nest = direction == CopyDirection::kIntoCache
                  ? MakeCopyNest(state, block_name, buffer, cache)
                  : MakeCopyNest(state, block_name, cache, buffer);
  return {std::move(cache), std::move(block_name), std::move(nest)};
}

void AddCacheStage(ScheduleState* state, const BlockRealizeNode* realize, Stmt new_realize,
                   size_t pos, const CacheStage& stage) {
  // Blocks keep their names across replacements: find the rebuilt scope block by its name.
  std::string scope_name = state->ScopeBlock(realize)->block->name;
  state->Replace(realize, std::move(new_realize));
  const BlockRealizeNode* scope = state->FindBlock(scope_name);
  state->Replace(scope, InsertCacheStage(scope, pos, stage.nest, stage.cache));
}

std::vector<Stmt> ScopeStatements(const BlockRealizeNode* scope) {
  const Stmt& body = scope->block->body;
  if (const auto* seq = body.as<SeqStmtNode>()) return seq->seq;
  return {body};
}

size_t ScopeStatementIndex(const ScheduleState& state, const BlockRealizeNode* scope,
                           const StmtNode* node) {
  const auto* seq = scope->block->body.as<SeqStmtNode>();
  if (seq == nullptr) return 0;  // the body is the only statement
  // Climb to the statement directly in the scope's sequence.
  const StmtNode* child = node;
  while (state.Parent(child) != seq) {
    child = state.Parent(child);
    TT_ICHECK(child != nullptr && child != scope, "node is not in the body of block '{}'",
              scope->block->name);
  }
  for (size_t i = 0; i < seq->seq.size(); ++i) {
    if (seq->seq[i].get() == child) return i;
  }
  TT_UNREACHABLE("statement not found in its parent sequence");
}

std::vector<const BlockRealizeNode*> WritersInScope(const ScheduleState& state,
                                                    const BlockRealizeNode* scope,
                                                    const Buffer& buffer) {
  std::vector<const BlockRealizeNode*> writers;
  for (const BlockRealizeNode* child : state.ChildBlocks(scope)) {
    if (HasRegionOf(child->block->writes, buffer)) writers.push_back(child);
  }
  return writers;
}

NotSingleWriteBlockError::NotSingleWriteBlockError(const char* primitive, std::string buffer,
                                                   std::vector<const BlockRealizeNode*> writers)
    : primitive_(primitive), buffer_(std::move(buffer)), writers_(writers.begin(), writers.end()) {}

std::string NotSingleWriteBlockError::ShortMessage() const {
  std::string names;
  for (const BlockRealizeNode* w : writers_) {
    names += fmt::format("{}'{}'", names.empty() ? "" : ", ", w->block->name);
  }
  return fmt::format(
      "{} of buffer '{}', which {} blocks of the scope write ({}); the copy "
      "stage needs a single producer",
      primitive_, buffer_, writers_.size(), names);
}

std::vector<const Object*> NotSingleWriteBlockError::Locations() const {
  return {writers_.begin(), writers_.end()};
}

std::string CacheLocationError::ShortMessage() const {
  return fmt::format(
      "{} of buffer '{}' for block '{}': block '{}' accesses the buffer in the "
      "same loop nest, so no place in the scope fits the copy stage",
      primitive_, buffer_, block_->block->name, other_->block->name);
}

std::string CacheLocationError::Explanation() const {
  return ShortMessage() +
         ". The copy covers the whole buffer and goes between statements of the scope; apply "
         "the cache before compute_at or reverse_compute_at joins the two loop nests";
}

}  // namespace tirtune
