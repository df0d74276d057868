// Read regions of a compute block, inferred from the loads in its body (private to te).
#pragma once

#include <vector>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/expr.h"

namespace tirtune::te {

/// One region per buffer loaded by `value` (except `exclude`), in order of first load. A buffer
/// read at one index tuple gets that point; read at several, each dimension gets the hull of its
/// indices when they differ by constants and the whole dimension otherwise. For example
/// `A[vi, vj] + A[vi, vj + 2] + A[vk, vj - 1]` reads `A[0:n, vj - 1:vj - 1 + 4]`.
std::vector<BufferRegion> InferReadRegions(const Expr& value, const Buffer& exclude = Buffer());

}  // namespace tirtune::te
