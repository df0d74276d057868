// set_scope: moves an intermediate buffer to another storage scope (global, shared, local). The
// buffer is rebuilt with the new scope and every reference to it (loads, stores, read and write
// regions, the allocation) switches to the rebuilt one.
//
// Preconditions:
//  1. the block has a `write_index`-th write buffer;
//  2. that buffer is allocated by a block, not a function parameter (whose storage belongs to
//     the caller).
// Setting the scope a buffer already has changes nothing (and is still recorded).
//
// Before:                                   After SetScope(block "B", 0, local):
//   with block("root"):                       with block("root"):
//     B = alloc_buffer((16,), float32)          B = alloc_buffer((16,), float32, scope="local")
//     ... with block("B"): B[vi] = ...          ... with block("B"): B[vi] = ...
#include "buffer_access.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {

void Schedule::SetScope(BlockRV block_rv, int write_index, StorageScope scope) {
  const BlockRealizeNode* realize = Get(block_rv);
  // Step 1. The buffer, and where it is allocated.
  Buffer buffer = NthAccessBuffer(realize, write_index, BufferAccess::kWrite, "set_scope");
  const BlockRealizeNode* site = AllocSiteOrThrow(state_, buffer, realize, "set_scope");
  if (check_only_) return;

  // Step 2. Rebuild the allocating block's subtree with the re-scoped buffer: every use of an
  // allocated buffer lies inside the block that allocates it.
  if (buffer->scope != scope) {
    Buffer scoped = buffer.WithScope(scope);
    state_.Replace(site, ReplaceBuffers(GetStmtRef(site), {{buffer.get(), scoped}}));
  }
  Record("SetScope", {block_rv.ref()},
         {{"write_index", write_index}, {"scope", StorageScopeName(scope)}}, {});
}

}  // namespace tirtune
