// The strides a storage_align request asks for (storage_align.cc), shared by the passes that lay
// out buffers.
#pragma once

#include <vector>

#include "tirtune/lower/passes.h"

namespace tirtune::lower {

/// Strides for a buffer of `shape` with the strides of the requested axes padded; empty when the
/// shape is not constant.
std::vector<Expr> AlignedStrides(const std::vector<Expr>& shape,
                                 const std::vector<StorageAlignRequest>& requests);

}  // namespace tirtune::lower
