// The operators of tirtune's library that the oneDNN baseline program (bench_dnnl) covers, by
// the oneDNN primitive family that computes them.
#pragma once

#include <vector>

#include "baselines/baseline_harness.h"

namespace tirtune::bench {

/// gemm (dnnl_sgemm), batch_matmul (matmul), mbg (GEMM + bias + GELU), tbg (transposes + batch
/// matmul).
std::vector<BaselineOperator> MatmulBaselines();

/// conv1d, conv2d, conv3d, depthwise_conv2d (convolution), conv2d_transpose (deconvolution), cbr
/// (convolution + bias + batch-norm scale/shift + ReLU).
std::vector<BaselineOperator> ConvBaselines();

/// softmax (softmax), norm (reduction, L2 norm).
std::vector<BaselineOperator> ReductionBaselines();

}  // namespace tirtune::bench
