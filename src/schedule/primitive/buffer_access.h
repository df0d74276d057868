// The buffers a block accesses, where a buffer is allocated, and replacing one buffer by another
// throughout a statement: shared by cache_read, cache_write, set_scope and storage_align.
#pragma once

#include <string>
#include <unordered_map>

#include "tirtune/schedule/error.h"
#include "tirtune/schedule/state.h"

namespace tirtune {

enum class BufferAccess : uint8_t { kRead, kWrite };

/// The buffer of `realize`'s `index`-th read (or write) region; BufferIndexOutOfRangeError when
/// the block has no such region.
Buffer NthAccessBuffer(const BlockRealizeNode* realize, int index, BufferAccess access,
                       const char* primitive);

/// The block realize whose alloc_buffers hold `buffer`; null for a function parameter.
const BlockRealizeNode* AllocSite(const ScheduleState& state, const Buffer& buffer);

/// Like AllocSite, but NonAllocatedBufferError when `buffer` is a function parameter: its
/// layout and scope belong to the caller.
const BlockRealizeNode* AllocSiteOrThrow(const ScheduleState& state, const Buffer& buffer,
                                         const BlockRealizeNode* block, const char* primitive);

/// True when one of `regions` is of `buffer`.
bool HasRegionOf(const std::vector<BufferRegion>& regions, const Buffer& buffer);

/// Buffers to replace, keyed by node identity.
using BufferMap = std::unordered_map<const BufferNode*, Buffer>;

/// `stmt` with every reference to a buffer of `map` replaced: loads, stores, read and write
/// regions, block allocations and Allocate nodes.
Stmt ReplaceBuffers(const Stmt& stmt, const BufferMap& map);

}  // namespace tirtune
