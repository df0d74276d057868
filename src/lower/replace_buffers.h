// Replacing buffers by other buffers (by identity) throughout a statement, for the passes that
// give a buffer a new shape, strides or rank.
#pragma once

#include <unordered_map>

#include "tirtune/ir/stmt.h"

namespace tirtune::lower {

/// Maps buffers (by identity) to their replacements.
using BufferMap = std::unordered_map<const BufferNode*, Buffer>;

/// Replaces every reference to a buffer in `bmap` (loads, stores, regions, allocations) and
/// leaves the indices alone, so a replacement must have the same rank.
Stmt ReplaceBuffers(const Stmt& stmt, const BufferMap& bmap);

}  // namespace tirtune::lower
