// Estimating the floating-point work of a function, for GFLOP/s reports on functions that do not
// come from the operator library (whose workloads know their exact FLOP count).
#pragma once

#include "tirtune/ir/function.h"

namespace tirtune {

/// Floating-point operations executed by `func`: for every store of a float value, the
/// arithmetic operations (+ - * / min max, one per intrinsic call) in the stored expression,
/// times the iterations of the loops and block iterators around it. A multiply-add counts 2.
/// Loops with symbolic extents count once. Block inits are included.
double EstimateFlops(const PrimFunc& func);

}  // namespace tirtune
