// Access regions of the blocks that the inlining and reduction primitives rewrite: the regions of
// the loads in a statement, splicing regions into a block's read or write list, and moving
// regions into other iterators.
#pragma once

#include <functional>
#include <vector>

#include "tirtune/ir/stmt.h"
#include "tirtune/ir/substitute.h"

namespace tirtune {

/// One region per buffer for which `want` holds, in order of first load in `stmt`. A buffer
/// loaded at one index tuple gets that point; loaded at several, their per-dimension hull.
/// Indices that use variables of loops inside `stmt` are relaxed over those loops; a dimension
/// indexed by a loaded value (a gather) covers the whole buffer dimension.
std::vector<BufferRegion> LoadedRegions(const Stmt& stmt,
                                        const std::function<bool(const BufferNode*)>& want);

/// The smallest region covering both (regions of the same buffer); a dimension whose hull cannot
/// be bounded, or whose bounds would load from a buffer, covers the whole buffer dimension.
BufferRegion UnionRegion(const BufferRegion& a, const BufferRegion& b);

/// `regions` without the entries of `removed` (may be undefined), with `added` merged in: the
/// entry of a buffer already listed is widened to cover the added region; the other added
/// regions go, in order, where the first entry of `removed` was, or at the end.
std::vector<BufferRegion> SpliceRegions(const std::vector<BufferRegion>& regions,
                                        const Buffer& removed,
                                        const std::vector<BufferRegion>& added);

/// `regions` with `vmap` substituted into every range, leaving out the regions of `skipped` (may
/// be undefined): the regions of a block moved into other iterators.
std::vector<BufferRegion> SubstituteRegions(const std::vector<BufferRegion>& regions,
                                            const VarMap& vmap, const Buffer& skipped = Buffer());

}  // namespace tirtune
