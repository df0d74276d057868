// Pooling operators of the operator library, in NHWC.
#pragma once

#include <cstdint>
#include <string>

#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// Max over kernel x kernel windows; padding never wins (it is the lowest float).
Tensor MaxPool2dNHWC(const Tensor& data, int64_t kernel, int64_t stride, int64_t pad,
                     std::string name = "pool_max");
/// Average over the part of each window inside the input (padding not counted, as ONNX's
/// default count_include_pad = 0).
Tensor AvgPool2dNHWC(const Tensor& data, int64_t kernel, int64_t stride, int64_t pad,
                     std::string name = "pool_avg");
/// out[n, 0, 0, c] = mean over h, w of data[n, h, w, c].
Tensor GlobalAvgPool2dNHWC(const Tensor& data, std::string name = "adaptive_pool_avg");

}  // namespace tirtune::te
