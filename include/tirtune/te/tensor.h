// The tensor-expression DSL: placeholders, computes over spatial axes and reductions over reduce
// axes, described element-wise in the style of TVM's `te` and lowered by CreatePrimFunc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/expr.h"
#include "tirtune/ir/stmt.h"

namespace tirtune::te {

class TensorNode;

/// A handle to a tensor: an input (placeholder) or the result of a compute. Every tensor owns the
/// buffer that holds it in the functions made from it. Handles are cheap to copy and compare by
/// identity.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const TensorNode> node) : node_(std::move(node)) {}

  bool defined() const { return static_cast<bool>(node_); }
  const TensorNode* get() const { return node_.get(); }
  const TensorNode* operator->() const { return node_.get(); }
  bool same_as(const Tensor& other) const { return node_ == other.node_; }

  const Buffer& buffer() const;
  const std::string& name() const;
  DataType dtype() const;
  int ndim() const;
  const std::vector<Expr>& shape() const;
  /// The extent of dimension `i`, which must be a constant.
  int64_t dim(int i) const;

  /// A read of the element at `indices`: a BufferLoad of this tensor's buffer. Inside the
  /// fcompute of a Compute, the read also makes this tensor an input of that compute.
  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Index>
  Expr operator()(Index... indices) const {
    return (*this)(std::vector<Expr>{Expr(indices)...});
  }

 private:
  std::shared_ptr<const TensorNode> node_;
};

/// How a reduction combines the values of its source.
enum class ReduceKind : uint8_t { kNone, kSum, kMax, kMin, kProd };

/// The definition behind a Tensor.
class TensorNode {
 public:
  enum class Kind : uint8_t { kPlaceholder, kCompute };
  Kind kind = Kind::kPlaceholder;
  Buffer buffer;
  /// Compute only: one spatial axis per dimension (domain [0, extent)).
  std::vector<IterVar> axes;
  /// Compute only: the axes a reduction runs over; empty when `reduce_kind` is kNone.
  std::vector<IterVar> reduce_axes;
  ReduceKind reduce_kind = ReduceKind::kNone;
  /// Compute only: the element's value in terms of the axes; for a reduction, the value that is
  /// combined into the element at each point of the reduce axes.
  Expr value;
  /// The reduction's identity (the init value of each element); undefined without a reduction.
  Expr identity;
  /// The tensors `value` reads, in the order of their first read.
  std::vector<Tensor> inputs;
  /// Annotations copied onto the compute's block.
  Annotations attrs;

  bool is_placeholder() const { return kind == Kind::kPlaceholder; }
};

/// An input tensor.
Tensor Placeholder(std::vector<Expr> shape, DataType dtype, std::string name);

/// Computes each element of the result as `fcompute(indices)`. The body may be a plain
/// expression or, as a whole, one reduction (Sum, MaxReduce, MinReduce).
using FCompute = std::function<Expr(const std::vector<Var>&)>;

/// A compute whose spatial axes are named i0, i1, ...
Tensor Compute(std::vector<Expr> shape, const FCompute& fcompute, std::string name,
               Annotations attrs = {});
/// A compute whose spatial axes carry the given names (they become the loop variable names).
Tensor Compute(std::vector<Expr> shape, const std::vector<std::string>& axis_names,
               const FCompute& fcompute, std::string name, Annotations attrs = {});

/// The axes fcompute receives, as the index list of a read (`x(AsIndices(axes))`).
inline std::vector<Expr> AsIndices(const std::vector<Var>& axes) {
  return std::vector<Expr>(axes.begin(), axes.end());
}

/// A reduction axis over [0, extent). Refer to it in expressions as `axis.var`.
IterVar ReduceAxis(Expr extent, std::string name);

/// Reductions of `source` over `axes`, with identities 0, the lowest and the highest value of the
/// type, and 1 respectively. Usable only as the whole body of a compute, inside its fcompute.
Expr Sum(Expr source, const std::vector<IterVar>& axes);
Expr MaxReduce(Expr source, const std::vector<IterVar>& axes);
Expr MinReduce(Expr source, const std::vector<IterVar>& axes);
Expr ProdReduce(Expr source, const std::vector<IterVar>& axes);

}  // namespace tirtune::te
