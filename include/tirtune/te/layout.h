// Data-movement operators of the operator library: pad, reshape, transpose, concatenate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// `pad_before[d]` and `pad_after[d]` elements of `pad_value` around dimension d. Each element is
/// `select(in bounds, data[clamped indices], pad_value)`: a select may evaluate both branches, so
/// the load is clamped into `data` (only on the padded sides); unpadded dimensions are copied.
Tensor Pad(const Tensor& data, const std::vector<int64_t>& pad_before,
           const std::vector<int64_t>& pad_after, double pad_value = 0.0,
           std::string name = "pad_temp");
/// The same elements in row-major order under a new shape of equal size.
Tensor Reshape(const Tensor& data, const std::vector<int64_t>& new_shape,
               std::string name = "T_reshape");
/// out[i_0, ..., i_n-1] = data[...] with out dimension d being data dimension `axes[d]`.
Tensor Transpose(const Tensor& data, const std::vector<int>& axes,
                 std::string name = "T_transpose");
/// `a` and `b` joined along `axis`; all other dimensions must agree.
Tensor Concatenate(const Tensor& a, const Tensor& b, int axis, std::string name = "T_concat");

}  // namespace tirtune::te
