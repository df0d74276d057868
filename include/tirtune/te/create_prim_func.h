// Lowering of a tensor-expression graph to a PrimFunc in block form (TVM's CreatePrimFunc).
#pragma once

#include <string>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// Builds a function whose parameters are the buffers of `args` (inputs, then outputs). Every
/// compute reachable from the arguments becomes one block, in topological order, inside a root
/// block that allocates the computes that are not arguments:
///
///   with block("root"):
///       C = alloc_buffer(...)                    # intermediates
///       for i in range(M):
///           for j in range(N):
///               for k in range(K):               # spatial axes, then reduce axes
///                   with block("C"):
///                       vi = axis.spatial(M, i)
///                       vj = axis.spatial(N, j)
///                       vk = axis.reduce(K, k)
///                       reads(A[vi, vk], B[vk, vj])
///                       writes(C[vi, vj])
///                       with init():
///                           C[vi, vj] = 0.0
///                       C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
///
/// Throws UserError when a placeholder that is read is not among `args`.
PrimFunc CreatePrimFunc(const std::vector<Tensor>& args, std::string name = "main");

}  // namespace tirtune::te
