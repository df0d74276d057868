// Normalizations of the operator library: batch norm (inference), layer norm, softmax and the
// 2-norm.
#pragma once

#include <string>

#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// (x - mean) / sqrt(var + epsilon) * gamma + beta, with the per-channel statistics (the last
/// dimension) given as tensors.
Tensor BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& moving_mean, const Tensor& moving_var,
                          double epsilon = 1e-5, std::string name = "T_batch_norm");
/// Normalizes each row of x[M, N] over its N elements (two-pass mean and variance), then scales by
/// gamma[N] and shifts by beta[N].
Tensor LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double epsilon = 1e-5,
                 std::string name = "T_layer_norm");
/// Softmax of x[M, N] along the last axis, as TOPI builds it: max, exp, sum, divide.
Tensor Softmax(const Tensor& x, std::string name = "T_softmax_norm");
/// D[b] = sqrt(sum_{i, j} A[b, i, j]^2) (Ansor's norm_bmn).
Tensor Norm2(const Tensor& a, std::string name = "D");

}  // namespace tirtune::te
