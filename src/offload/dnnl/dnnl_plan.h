// The body of a oneDNN composite read as one primitive and its post-ops (dnnl_backend.cc builds
// the primitive from it). Private to src/offload/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/offload/library.h"

namespace tirtune::offload::dnnl_plan {

// What the body does, in the terms of one oneDNN primitive.
struct PostOp {
  enum Kind { kSum, kRelu, kClip, kGelu, kMul, kAdd } kind;
  int addend = -1;  // kSum: the composite argument added; kMul, kAdd: the per-channel constant
  float alpha = 0, beta = 0;
};

// The call's attributes with the operator's defaults filled in.
inline graph::Attrs AttrsOf(const graph::Call& c) {
  return graph::CheckAttrs(*graph::FindOp(c.op), c.attrs);
}

// A composite argument read through transposes and reshapes: its elements at the strides of a
// tensor of shape `dims`, as oneDNN's memory descriptors say it (no copy).
struct View {
  std::vector<int64_t> dims, strides;
};

/// Row-major strides of `shape`, in elements.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape);

/// `v` reshaped to `shape` (the same elements, row-major order), or nullopt where one stride per
/// dimension cannot say it (a merge of dimensions that are not adjacent in memory).
std::optional<View> Reshaped(const View& v, const std::vector<int64_t>& shape);

struct Plan {
  const graph::Call* main = nullptr;      // conv / dense / matmul / pool / softmax, in the body
  int data = -1, weight = -1, bias = -1;  // composite argument indices
  // A matrix product's operands read through transposes and reshapes in the body, before it.
  std::optional<View> data_view, weight_view;
  std::vector<PostOp> post;
};

/// Throws LibraryDeclined: "oneDNN cannot run OP: WHY".
[[noreturn]] void Decline(const graph::Call& call, const std::string& why);

/// The primitive, its arguments and post-ops of composite call `call` of `outer`; declines what
/// one oneDNN primitive with post-ops cannot say.
Plan ReadBody(const graph::Graph& outer, const graph::Call& call);

}  // namespace tirtune::offload::dnnl_plan
