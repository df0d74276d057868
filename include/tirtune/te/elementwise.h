// Element-wise operators of the operator library: arithmetic, activations and bias addition.
#pragma once

#include <string>

#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// a + b and a * b; both tensors have the same shape.
Tensor Add(const Tensor& a, const Tensor& b, std::string name = "T_add");
Tensor Multiply(const Tensor& a, const Tensor& b, std::string name = "T_multiply");
/// max(x, 0).
Tensor Relu(const Tensor& x, std::string name = "T_relu");
/// The exact GELU: 0.5 x (1 + erf(x / sqrt(2))).
Tensor Gelu(const Tensor& x, std::string name = "T_gelu");
/// min(max(x, lo), hi).
Tensor Clip(const Tensor& x, double lo, double hi, std::string name = "T_clip");
Tensor Sigmoid(const Tensor& x, std::string name = "T_sigmoid");
Tensor Tanh(const Tensor& x, std::string name = "T_tanh");
Tensor Exp(const Tensor& x, std::string name = "T_exp");
/// x + bias broadcast along the last dimension (the channels, in NHWC).
Tensor BiasAdd(const Tensor& x, const Tensor& bias, std::string name = "T_bias_add");

}  // namespace tirtune::te
