// The fusion pattern of a PrimFunc, computed from its blocks' access patterns (TVM's
// AnnotateTIROpPattern analysis).
#pragma once

#include "tirtune/graph/graph.h"
#include "tirtune/ir/function.h"

namespace tirtune::graph {

/// The pattern of a function in block form, the largest over its blocks:
///  - a block without reduction iterators whose loads all use the store's indices is elemwise;
///    one whose loads use an ordered subset of them (constant 0 on extent-1 dimensions allowed)
///    is broadcast; any other load makes it injective;
///  - a reduction block whose update is `acc + a * b`, `a` and `b` reading disjoint sets of
///    buffers, is out_ewise_fusable (conv2d, dense); any other reduction is comm_reduce;
///  - a store that is not `buffer[spatial iterators]`, a store outside a block, or a function
///    not in block form is opaque.
OpPattern AnalyzeOpPattern(const PrimFunc& func);

}  // namespace tirtune::graph
