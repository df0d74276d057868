// Placeholders, computes and reductions. While a compute's fcompute runs, a thread-local context
// records the tensors it reads and the reduction it builds, so that the IR needs no tensor-level
// expression nodes: a read is an ordinary BufferLoad and a reduction is recognized by the marker
// variable Sum/MaxReduce/MinReduce return.
#include "tirtune/te/tensor.h"

#include <fmt/format.h>

#include <algorithm>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"

namespace tirtune::te {
namespace {

// What one running fcompute has read and reduced so far.
struct ComputeContext {
  std::vector<Tensor> reads;
  ReduceKind reduce_kind = ReduceKind::kNone;
  Expr reduce_source;
  Expr reduce_identity;
  std::vector<IterVar> reduce_axes;
  Var reduce_marker;  // what the reduction returned; the body must be exactly this
};

// Innermost last: an fcompute may itself build a compute.
thread_local std::vector<ComputeContext*> active_contexts;

// Installs a context for the duration of one fcompute call, also when it throws.
class ContextScope {
 public:
  explicit ContextScope(ComputeContext* context) { active_contexts.push_back(context); }
  ~ContextScope() { active_contexts.pop_back(); }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

Expr MakeReduction(ReduceKind kind, Expr source, const std::vector<IterVar>& axes,
                   const char* what) {
  if (active_contexts.empty()) {
    TT_USER_ERROR("{} used outside the fcompute of a Compute", what);
  }
  ComputeContext* context = active_contexts.back();
  if (context->reduce_kind != ReduceKind::kNone) {
    TT_USER_ERROR("{}: a compute holds at most one reduction", what);
  }
  if (axes.empty()) TT_USER_ERROR("{} over no axes", what);
  for (const IterVar& axis : axes) {
    if (axis.kind != IterKind::kReduce) {
      TT_USER_ERROR("{}: axis {} is not a reduce axis", what, axis.var->name);
    }
  }
  DataType t = source.dtype();
  context->reduce_kind = kind;
  context->reduce_axes = axes;
  context->reduce_identity = kind == ReduceKind::kSum    ? MakeConst(t, 0)
                             : kind == ReduceKind::kProd ? MakeConst(t, 1)
                             : kind == ReduceKind::kMax  ? MinValue(t)
                                                         : MaxValue(t);
  context->reduce_source = std::move(source);
  context->reduce_marker = Var("reduce", t);
  return context->reduce_marker;
}

// The buffers `value` loads, children before parents and left before right.
std::vector<const BufferNode*> LoadedBuffers(const Expr& value) {
  std::vector<const BufferNode*> buffers;
  PostOrderVisit(value, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferLoad) {
      buffers.push_back(static_cast<const BufferLoadNode*>(node)->buffer.get());
    }
  });
  return buffers;
}

}  // namespace

const Buffer& Tensor::buffer() const { return node_->buffer; }
const std::string& Tensor::name() const { return node_->buffer->name; }
DataType Tensor::dtype() const { return node_->buffer->dtype; }
int Tensor::ndim() const { return node_->buffer->ndim(); }
const std::vector<Expr>& Tensor::shape() const { return node_->buffer->shape; }

int64_t Tensor::dim(int i) const {
  TT_ICHECK(i >= 0 && i < ndim(), "tensor {} has no dimension {}", name(), i);
  const int64_t* extent = AsConstInt(shape()[i]);
  TT_ICHECK(extent != nullptr, "dimension {} of tensor {} is not constant", i, name());
  return *extent;
}

Expr Tensor::operator()(std::vector<Expr> indices) const {
  TT_ICHECK(defined(), "read of an undefined tensor");
  if (static_cast<int>(indices.size()) != ndim()) {
    TT_USER_ERROR("tensor {} has {} dimensions but is read with {} indices", name(), ndim(),
                  indices.size());
  }
  for (Expr& index : indices) index = Cast(DataType::Index(), index);
  if (!active_contexts.empty()) {
    std::vector<Tensor>& reads = active_contexts.back()->reads;
    bool seen = false;
    for (const Tensor& t : reads) seen = seen || t.same_as(*this);
    if (!seen) reads.push_back(*this);
  }
  return MakeBufferLoad(buffer(), std::move(indices));
}

Tensor Placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  auto node = std::make_shared<TensorNode>();
  node->kind = TensorNode::Kind::kPlaceholder;
  node->buffer = Buffer(std::move(name), dtype, std::move(shape));
  return Tensor(std::move(node));
}

Tensor Compute(std::vector<Expr> shape, const FCompute& fcompute, std::string name,
               Annotations attrs) {
  std::vector<std::string> axis_names;
  for (size_t i = 0; i < shape.size(); ++i) axis_names.push_back(fmt::format("i{}", i));
  return Compute(std::move(shape), axis_names, fcompute, std::move(name), std::move(attrs));
}

Tensor Compute(std::vector<Expr> shape, const std::vector<std::string>& axis_names,
               const FCompute& fcompute, std::string name, Annotations attrs) {
  TT_ICHECK(axis_names.size() == shape.size(), "compute {}: {} axis names for {} dimensions", name,
            axis_names.size(), shape.size());
  auto node = std::make_shared<TensorNode>();
  node->kind = TensorNode::Kind::kCompute;
  std::vector<Var> vars;
  for (size_t i = 0; i < shape.size(); ++i) {
    shape[i] = Cast(DataType::Index(), shape[i]);
    Var var(axis_names[i]);
    vars.push_back(var);
    node->axes.push_back(IterVar{var, Range{Expr(0), shape[i]}, IterKind::kSpatial});
  }

  // Step 1. Run fcompute, recording what it reads and reduces.
  ComputeContext context;
  Expr body;
  {
    ContextScope scope(&context);
    body = fcompute(vars);
  }
  TT_ICHECK(body.defined(), "compute {}: fcompute returned no expression", name);

  // Step 2. A reduction must be the whole body: the block's update statement is built from it.
  if (context.reduce_kind != ReduceKind::kNone) {
    if (!body.same_as(context.reduce_marker)) {
      TT_USER_ERROR("compute {}: a reduction must be the whole body, not part of an expression",
                    name);
    }
    node->reduce_kind = context.reduce_kind;
    node->reduce_axes = context.reduce_axes;
    node->identity = context.reduce_identity;
    node->value = context.reduce_source;
  } else {
    node->value = body;
  }

  // Step 3. The inputs, in the order the body first loads them: the order in which fcompute
  // read them depends on the compiler's evaluation order of operands, and the inputs' order
  // decides the order of blocks. Every load must be of a tensor read through Tensor::operator().
  for (const BufferNode* b : LoadedBuffers(node->value)) {
    auto it = std::find_if(context.reads.begin(), context.reads.end(),
                           [&](const Tensor& t) { return t.buffer().get() == b; });
    TT_ICHECK(it != context.reads.end(),
              "compute {} loads buffer {} that was not read through a Tensor", name, b->name);
    bool seen = std::any_of(node->inputs.begin(), node->inputs.end(),
                            [&](const Tensor& t) { return t.same_as(*it); });
    if (!seen) node->inputs.push_back(*it);
  }
  node->attrs = std::move(attrs);
  node->buffer = Buffer(std::move(name), node->value.dtype(), std::move(shape));
  return Tensor(std::move(node));
}

IterVar ReduceAxis(Expr extent, std::string name) {
  return IterVar{Var(std::move(name)), Range{Expr(0), Cast(DataType::Index(), extent)},
                 IterKind::kReduce};
}

Expr Sum(Expr source, const std::vector<IterVar>& axes) {
  return MakeReduction(ReduceKind::kSum, std::move(source), axes, "Sum");
}

Expr MaxReduce(Expr source, const std::vector<IterVar>& axes) {
  return MakeReduction(ReduceKind::kMax, std::move(source), axes, "MaxReduce");
}

Expr MinReduce(Expr source, const std::vector<IterVar>& axes) {
  return MakeReduction(ReduceKind::kMin, std::move(source), axes, "MinReduce");
}

Expr ProdReduce(Expr source, const std::vector<IterVar>& axes) {
  return MakeReduction(ReduceKind::kProd, std::move(source), axes, "ProdReduce");
}

}  // namespace tirtune::te
