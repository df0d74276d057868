// How the cuDNN backend runs a composite: as one cuDNN convolution and the steps after it
// (runtime/cudnn.h).
//
// The graph's activations are channels last (N, spatial..., C) and its weights [spatial...,
// C / groups, K]; cuDNN names dimensions N, C, spatial... and takes a stride for each, so the
// activations are described where they lie, and the weight, read through its strides, is packed
// by cuDNN into its channels-last filter before the convolution. A 1-D convolution is a 2-D one
// of height 1. A bias, a per-channel constant added or multiplied (a batch norm's scale and
// shift), a tensor added, ReLU and clip(0, c) follow in the composite's order, each in place on
// the output; a scale and shift right after a constant weight (and bias) are folded into them
// at planning, so a convolution, batch norm and ReLU are one cuDNN call.
//
// Tests check the plans on the CPU: the convolution and steps cuDNN defines, evaluated on the
// host from the plan's descriptors, against the interpreter's result of the composite.
#pragma once

#include <string>
#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/runtime/cudnn.h"

namespace tirtune::offload {

/// A step's operand that is the plan's folded bias, not a composite argument.
inline constexpr int kFoldedBias = -2;

struct CudnnPlan {
  cuda::DnnConvDesc conv;
  /// Composite arguments: the data, the weight, and each step's operand (-1 for an activation,
  /// kFoldedBias for `folded_bias`).
  int data = -1, weight = -1;
  std::vector<int> step_operands;
  /// A batch norm's scale and shift right after the convolution folded into the constant
  /// weight and the bias (body::FoldScaleShift): the scaled weight, read like the argument it
  /// replaces, and the bias the first step adds; undefined and empty when nothing folded.
  NDArray folded_weight;
  std::vector<float> folded_bias;
  /// "conv2d 3x3, 64 -> 64 channels on 1x56x56 (stride 2, pad 1; bias, ReLU)", for messages.
  std::string summary;
};

/// The cuDNN convolution of composite call `call` of `outer`. Throws LibraryDeclined ("cuDNN
/// cannot run OP: WHY") for what one convolution and its steps cannot say.
CudnnPlan PlanCudnn(const graph::Graph& outer, const graph::Call& call);

}  // namespace tirtune::offload
