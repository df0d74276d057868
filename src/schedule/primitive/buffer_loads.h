// The loads of a buffer in an expression or statement, and comparing the index tuples of loads
// and stores: what the primitives that pattern-match block bodies (compute_inline,
// reverse_compute_inline, fuse_reduction_epilogue, rfactor, cache_write) look for.
#pragma once

#include <vector>

#include "tirtune/ir/stmt.h"

namespace tirtune {

/// The loads of `buffer` in `expr`, in post order.
std::vector<const BufferLoadNode*> LoadsOf(const Expr& expr, const Buffer& buffer);

/// Whether `expr` (or `stmt`) loads `buffer` anywhere.
bool LoadsBuffer(const Expr& expr, const Buffer& buffer);
bool LoadsBuffer(const Stmt& stmt, const Buffer& buffer);

/// Whether two index tuples are structurally equal element by element, e.g. a load and a store
/// of the same element.
bool SameIndices(const std::vector<Expr>& a, const std::vector<Expr>& b);

}  // namespace tirtune
