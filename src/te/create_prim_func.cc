// CreatePrimFunc: orders the computes of a tensor-expression graph and lowers each to a loop nest
// around one block, all inside the root block that allocates the intermediates.
#include "tirtune/te/create_prim_func.h"

#include <fmt/format.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "access_regions.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"

namespace tirtune::te {
namespace {

// Replaces variables by expressions (the compute's axes by the block's iterators).
class VarSubstituter : public ExprMutator {
 public:
  explicit VarSubstituter(std::unordered_map<const VarNode*, Expr> map) : map_(std::move(map)) {}
  using ExprMutator::VisitExpr_;
  Expr VisitExpr_(const VarNode* op) override {
    auto it = map_.find(op);
    return it == map_.end() ? GetRef(op) : it->second;
  }

 private:
  std::unordered_map<const VarNode*, Expr> map_;
};

// Post-order over inputs: every compute comes after the computes it reads.
void TopologicalOrder(const Tensor& t, std::unordered_set<const TensorNode*>* visited,
                      std::vector<Tensor>* order) {
  if (!visited->insert(t.get()).second) return;
  for (const Tensor& input : t->inputs) TopologicalOrder(input, visited, order);
  order->push_back(t);
}

// How a reduction folds `value` into the accumulated element `acc`.
Expr Combine(ReduceKind kind, Expr acc, Expr value) {
  switch (kind) {
    case ReduceKind::kSum:
      return acc + value;
    case ReduceKind::kMax:
      return Max(acc, value);
    case ReduceKind::kMin:
      return Min(acc, value);
    case ReduceKind::kProd:
      return acc * value;
    case ReduceKind::kNone:
      break;
  }
  TT_UNREACHABLE("not a reduction");
}

// The loop nest and block of one compute (see the doc comment of CreatePrimFunc).
Stmt LowerCompute(const Tensor& tensor, const std::string& block_name) {
  const TensorNode* op = tensor.get();
  std::vector<IterVar> all_axes = op->axes;
  all_axes.insert(all_axes.end(), op->reduce_axes.begin(), op->reduce_axes.end());

  // Step 1. One loop variable and one block iterator per axis.
  std::vector<Var> loop_vars;
  std::vector<IterVar> block_iters;
  std::unordered_map<const VarNode*, Expr> to_block_var;
  for (const IterVar& axis : all_axes) {
    Var loop_var(axis.var->name);
    Var block_var("v" + axis.var->name);
    loop_vars.push_back(loop_var);
    block_iters.push_back(IterVar{block_var, axis.dom, axis.kind});
    to_block_var[axis.var.get()] = block_var;
  }

  // Step 2. The body in terms of the block iterators.
  std::vector<Expr> indices;
  for (size_t i = 0; i < op->axes.size(); ++i) indices.push_back(block_iters[i].var);
  Expr value = VarSubstituter(to_block_var).VisitExpr(op->value);
  Stmt init;
  Stmt body;
  if (op->reduce_kind == ReduceKind::kNone) {
    body = MakeBufferStore(op->buffer, value, indices);
  } else {
    init = MakeBufferStore(op->buffer, op->identity, indices);
    Expr acc = MakeBufferLoad(op->buffer, indices);
    body = MakeBufferStore(op->buffer, Combine(op->reduce_kind, acc, value), indices);
  }

  // Step 3. The block, its realization and the loops around it, innermost last.
  Block block = MakeBlock(block_name, block_iters, InferReadRegions(value, op->buffer),
                          {BufferRegion::Point(op->buffer, indices)}, body, init,
                          /*alloc_buffers=*/{}, op->attrs);
  std::vector<Expr> bindings(loop_vars.begin(), loop_vars.end());
  Stmt nest = MakeBlockRealize(bindings, Bool(true), block);
  for (size_t i = all_axes.size(); i-- > 0;) {
    nest = MakeFor(loop_vars[i], Expr(0), all_axes[i].dom.extent, ForKind::kSerial, nest);
  }
  return nest;
}

}  // namespace

PrimFunc CreatePrimFunc(const std::vector<Tensor>& args, std::string name) {
  // Step 1. Arguments are distinct; every compute reachable from them, in dependency order.
  std::unordered_set<const TensorNode*> is_arg;
  for (const Tensor& t : args) {
    TT_ICHECK(t.defined(), "CreatePrimFunc {}: undefined argument", name);
    if (!is_arg.insert(t.get()).second) {
      TT_USER_ERROR("CreatePrimFunc {}: tensor {} is passed twice", name, t.name());
    }
  }
  std::unordered_set<const TensorNode*> visited;
  std::vector<Tensor> order;
  for (const Tensor& t : args) TopologicalOrder(t, &visited, &order);

  // Step 2. One loop nest per compute; the computes that are not arguments are intermediates.
  std::vector<Stmt> nests;
  std::vector<Buffer> intermediates;
  std::set<std::string> block_names;
  for (const Tensor& t : order) {
    if (t->is_placeholder()) {
      if (!is_arg.count(t.get())) {
        TT_USER_ERROR("CreatePrimFunc {}: placeholder {} is read but is not an argument", name,
                      t.name());
      }
      continue;
    }
    if (!is_arg.count(t.get())) intermediates.push_back(t.buffer());
    std::string block_name = t.name();
    for (int suffix = 1; block_names.count(block_name); ++suffix) {
      block_name = fmt::format("{}_{}", t.name(), suffix);
    }
    block_names.insert(block_name);
    nests.push_back(LowerCompute(t, block_name));
  }
  if (nests.empty()) TT_USER_ERROR("CreatePrimFunc {}: no compute to lower", name);

  // Step 3. The root block.
  Block root = MakeBlock("root", {}, {}, {}, MakeSeq(std::move(nests)), Stmt(), intermediates);
  std::vector<Buffer> params;
  for (const Tensor& t : args) params.push_back(t.buffer());
  return PrimFunc(std::move(name), std::move(params), MakeBlockRealize({}, Bool(true), root));
}

}  // namespace tirtune::te
