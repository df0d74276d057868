// Convolutions of the operator library in channel-last layouts (NLC, NHWC, NDHWC), following the
// definitions of TVM's TOPI and Ansor's benchmark suite. Padding is a separate `pad_temp` compute.
#pragma once

#include <cstdint>
#include <string>

#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// Parameters shared by the convolutions; the same in every spatial dimension.
struct ConvParams {
  int64_t stride = 1;
  int64_t pad = 0;       // zeros on each side
  int64_t dilation = 1;  // spacing of the kernel taps
  int64_t groups = 1;    // input and output channels split into this many independent groups
};

/// Output extent along one dimension: (in + 2 pad - dilation (kernel - 1) - 1) / stride + 1.
int64_t ConvOutputExtent(int64_t in, int64_t kernel, const ConvParams& p);

/// out[n, l, co] over data[N, L, CI] and weight[K, CI / groups, CO].
Tensor Conv1dNLC(const Tensor& data, const Tensor& weight, const ConvParams& p,
                 std::string name = "conv1d_nlc");
/// out[n, h, w, co] over data[N, H, W, CI] and weight[KH, KW, CI / groups, CO].
Tensor Conv2dNHWC(const Tensor& data, const Tensor& weight, const ConvParams& p,
                  std::string name = "conv2d_nhwc");
/// out[n, d, h, w, co] over data[N, D, H, W, CI] and weight[KD, KH, KW, CI / groups, CO].
Tensor Conv3dNDHWC(const Tensor& data, const Tensor& weight, const ConvParams& p,
                   std::string name = "conv3d_ndhwc");
/// out[n, h, w, c] over data[N, H, W, C] and weight[KH, KW, C]: one filter per channel
/// (`p.groups` is ignored).
Tensor DepthwiseConv2dNHWC(const Tensor& data, const Tensor& weight, const ConvParams& p,
                           std::string name = "depthwise_conv2d_nhwc");
/// The gradient of conv2d with respect to its input: data[N, H, W, CI], weight[KH, KW, CI, CO]
/// give out[N, (H - 1) stride - 2 pad + KH, ..., CO]. As in Ansor, the input is padded, then
/// dilated by the stride inside the convolution's body, which reads the kernel flipped.
Tensor Conv2dTransposeNHWC(const Tensor& data, const Tensor& weight, int64_t stride, int64_t pad,
                           std::string name = "conv2d_transpose_nhwc");
/// Capsule convolution (Ansor's conv2d_capsule_nhwijc): data[N, H, W, P, P, CI] and
/// weight[K, K, P, P, CI, CO] give out[n, h, w, i, j, co] = sum over kernel taps, k < P and ci of
/// data[n, ., ., i, k, ci] * weight[., ., k, j, ci, co]: a P x P matrix product per tap.
Tensor CapsuleConv2dNHWIJC(const Tensor& data, const Tensor& weight, int64_t stride, int64_t pad,
                           std::string name = "conv2d_capsule_nhwijc");

}  // namespace tirtune::te
