// How the cuBLAS backend runs a composite: as one cuBLASLt product (runtime/cublas_lt.h).
//
// The graph's matrices are row-major, cuBLASLt's column-major, and a row-major matrix is the
// column-major storage of its transpose. So a product Y[M, N] = L[M, K] R[K, N] is computed as
// Y^T = R^T L^T: cuBLAS's A is the right operand R (m = N), its B the left operand L (n = M),
// and D, N x M with leading dimension N, is Y's row-major memory. Each operand is read in place
// through the strides of its view (a transpose or reshape before the product, or dense's [N, K]
// weight): a matrix whose rows are contiguous is stored as is (op N), one whose columns are is
// read transposed (op T); anything else is declined. The per-channel bias is the epilogue's
// bias (one value per row of D), a tensor added is C with beta = 1, and ReLU or tanh-GELU is the
// epilogue's activation, which cuBLASLt applies last: D = act(R^T L^T + C + bias).
//
// Tests check the plans on the CPU: the product cuBLASLt defines, evaluated on the host, against
// the interpreter's result of the composite.
#pragma once

#include <string>

#include "tirtune/graph/graph.h"
#include "tirtune/runtime/cublas_lt.h"

namespace tirtune::offload {

struct CublasPlan {
  cuda::LtMatmulDesc matmul;
  /// Composite arguments: cuBLAS's A (the right operand), its B (the left), the bias, C (the
  /// tensor added); -1 when absent.
  int a = -1, b = -1, bias = -1, addend = -1;
  /// "dense 128x768x3072 (A transposed, bias, GELU)", for messages.
  std::string summary;
};

/// The cuBLASLt product of composite call `call` of `outer`. Throws LibraryDeclined ("cuBLAS
/// cannot run OP: WHY") for what one such product cannot say.
CublasPlan PlanCublas(const graph::Graph& outer, const graph::Call& call);

}  // namespace tirtune::offload
