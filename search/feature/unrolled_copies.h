// Recognizing the copies an expanded unrolled loop leaves in the lowered form (private to
// search/feature/): sibling statements whose shape is the same once integer constants are ignored
// and the loop variables they define are matched by definition order.
#pragma once

#include <cstdint>
#include <vector>

#include "tirtune/ir/stmt.h"

namespace tirtune::feature {

/// A hash of the shape of `s`: node kinds, data types, buffers, float constants and the variables
/// defined outside `s`; integer constants (added ones included, so x + 0 simplified to x matches
/// x + 64) and the identity of variables defined inside `s` do not count. 0 when `s` stores
/// nothing.
uint64_t StoreShapeHash(const Stmt& s);

/// The stores of `s` in program order.
std::vector<const BufferStoreNode*> StoresInOrder(const Stmt& s);

}  // namespace tirtune::feature
