// Matrix products of the operator library: matmul, batch matmul and dense.
#pragma once

#include <string>

#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// C[M, N] = sum_k A[M, K] * B[K, N].
Tensor Matmul(const Tensor& a, const Tensor& b, std::string name = "C");
/// C[b, N, M] = sum_k A[b, N, K] * B[b, K, M] (Ansor's batch_matmul_nkkm).
Tensor BatchMatmul(const Tensor& a, const Tensor& b, std::string name = "C");
/// Y[M, N] = sum_k X[M, K] * W[N, K]: a fully connected layer with weights stored row per output.
Tensor Dense(const Tensor& data, const Tensor& weight, std::string name = "T_dense");

}  // namespace tirtune::te
