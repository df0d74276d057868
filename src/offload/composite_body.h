// The body of a composite read as one library primitive and its post-ops, for the backends that
// run it (dnnl/dnnl_backend.cc builds a oneDNN primitive from it, cublas_backend.cc a cuBLASLt
// matmul). Private to src/offload/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/offload/library.h"

namespace tirtune::offload::body {

// What the body does, in the terms of one primitive (oneDNN's post-ops).
struct PostOp {
  enum Kind { kSum, kRelu, kClip, kGelu, kMul, kAdd, kGeluTanh } kind;  // kGelu: erf's
  int addend = -1;  // kSum: the composite argument added; kMul, kAdd: the per-channel constant
  float alpha = 0, beta = 0;
};

// The call's attributes with the operator's defaults filled in.
inline graph::Attrs AttrsOf(const graph::Call& c) {
  return graph::CheckAttrs(*graph::FindOp(c.op), c.attrs);
}

// A composite argument read through transposes and reshapes: its elements at the strides of a
// tensor of shape `dims`, as a library's memory descriptors say it (no copy).
struct View {
  std::vector<int64_t> dims, strides;
};

/// Row-major strides of `shape`, in elements.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape);

/// `v` reshaped to `shape` (the same elements, row-major order), or nullopt where one stride per
/// dimension cannot say it (a merge of dimensions that are not adjacent in memory).
std::optional<View> Reshaped(const View& v, const std::vector<int64_t>& shape);

/// `view` when there is one (an operand read through transposes and reshapes), else the tensor
/// of `shape` as it lies: row-major.
View ViewOrRowMajor(const std::optional<View>& view, const std::vector<int64_t>& shape);

struct Plan {
  const graph::Call* main = nullptr;      // conv / dense / matmul / pool / softmax, in the body
  int data = -1, weight = -1, bias = -1;  // composite argument indices
  // A matrix product's operands read through transposes and reshapes in the body, before it.
  std::optional<View> data_view, weight_view;
  std::vector<PostOp> post;
};

/// A batch norm's scale and shift (per-channel constants multiplied and added, after
/// SimplifyInference) right after the primitive, folded into its constant weight and bias:
/// (x * W + b) * s + t is x * (W s) + (b s + t).
struct FoldedScaleShift {
  NDArray weight;           // the weight's shape, each output channel scaled
  std::vector<float> bias;  // one per output channel: the bias (or 0) through the same steps
  size_t post_ops = 0;      // how many of the plan's first post-ops it replaces
};

/// The fold of `plan` (of composite call `call` of `outer`; `channels` outputs), or nullopt when
/// nothing folds: no float32 constant weight read in place, a bias that is not a constant, or
/// no per-channel multiply or add first among the post-ops. The output channel is the weight's
/// last axis (a convolution's [spatial..., C, K]), a dense's first ([N, K]).
std::optional<FoldedScaleShift> FoldScaleShift(const graph::Graph& outer, const graph::Call& call,
                                               const Plan& plan, int64_t channels);

/// Throws LibraryDeclined: "LIBRARY cannot run OP: WHY" (LIBRARY: "oneDNN", "cuBLAS").
[[noreturn]] void Decline(const std::string& library, const graph::Call& call,
                          const std::string& why);

/// The primitive, its arguments and post-ops of composite call `call` of `outer`; declines (in
/// the name of `library`) what one primitive with oneDNN's post-ops cannot say. A backend
/// declines further what its library lacks.
Plan ReadBody(const graph::Graph& outer, const graph::Call& call, const std::string& library);

/// A matrix product's operand as patterns see it when a library reads it in place: `x`
/// transposed, reshaped, or transposed then reshaped.
graph::Pattern ViewedOperand(const graph::Pattern& x);

/// Gives every pattern the check that the composite its match would make is one the library
/// takes: `build` builds it as Build would (or plans it), throwing LibraryDeclined when not.
void CheckByBuilding(std::vector<graph::FusionPattern>* patterns,
                     std::function<void(const graph::Graph&, const graph::Call&)> build);

}  // namespace tirtune::offload::body
