#include "tirtune/ir/reduction.h"

#include <fmt/format.h>

#include <cmath>
#include <unordered_set>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/substitute.h"

namespace tirtune {
namespace {

bool SameElement(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d) {
    if (!StructuralEqual(a[d], b[d])) return false;
  }
  return true;
}

bool Reads(const Expr& e, const Buffer& buffer) {
  bool found = false;
  PostOrderVisit(e, [&](const Object* node) {
    const auto* load = node->as<BufferLoadNode>();
    found |= load != nullptr && load->buffer.same_as(buffer);
  });
  return found;
}

}  // namespace

Expr BlockReduction::Combine(Expr acc, Expr value) const {
  return lhs_first ? MakeBinary(op, std::move(acc), std::move(value))
                   : MakeBinary(op, std::move(value), std::move(acc));
}

bool IsReducerIdentity(NodeKind op, const Expr& value) {
  DataType t = value.dtype();
  const auto* f = value.as<FloatImmNode>();
  switch (op) {
    case NodeKind::kAdd:
      return StructuralEqual(value, MakeConst(t, 0));
    case NodeKind::kMul:
      return StructuralEqual(value, MakeConst(t, 1));
    case NodeKind::kMin:
      return StructuralEqual(value, MaxValue(t)) ||
             (f != nullptr && std::isinf(f->value) && f->value > 0);
    case NodeKind::kMax:
      return StructuralEqual(value, MinValue(t)) ||
             (f != nullptr && std::isinf(f->value) && f->value < 0);
    default:
      return false;
  }
}

std::optional<BlockReduction> MatchBlockReduction(const BlockNode* block, ReductionMismatch* kind,
                                                  std::string* why) {
  auto fail = [&](ReductionMismatch k, std::string text) {
    *kind = k;
    *why = std::move(text);
    return std::nullopt;
  };
  const auto not_reduction = ReductionMismatch::kNotReduction;
  std::unordered_set<const VarNode*> reduce_vars;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kReduce) reduce_vars.insert(iv.var.get());
  }
  if (reduce_vars.empty()) return fail(not_reduction, "it has no reduction iterator");
  if (!block->init.defined()) return fail(not_reduction, "it has no init");
  if (block->writes.size() != 1) {
    return fail(not_reduction, fmt::format("it writes {} buffers", block->writes.size()));
  }
  const auto* init = block->init.as<BufferStoreNode>();
  const auto* update = block->body.as<BufferStoreNode>();
  BlockReduction r;
  r.buffer = block->writes[0].buffer;
  if (init == nullptr || update == nullptr || !init->buffer.same_as(r.buffer) ||
      !update->buffer.same_as(r.buffer) || !SameElement(init->indices, update->indices)) {
    return fail(not_reduction, "its init and body are not single stores to the same element");
  }
  r.indices = update->indices;
  for (const Expr& index : r.indices) {
    if (UsesVar(index, [&](const VarNode* v) { return reduce_vars.count(v) > 0; })) {
      return fail(not_reduction, "the written element depends on a reduction iterator");
    }
  }
  const auto unsupported = ReductionMismatch::kUnsupportedReducer;
  NodeKind op = update->value->kind();
  if (op != NodeKind::kAdd && op != NodeKind::kMul && op != NodeKind::kMin &&
      op != NodeKind::kMax) {
    return fail(unsupported, "the update is not a sum, product, min or max");
  }
  const auto* bin = static_cast<const BinaryNode*>(update->value.get());
  auto is_self = [&](const Expr& e) {
    const auto* load = e.as<BufferLoadNode>();
    return load != nullptr && load->buffer.same_as(r.buffer) &&
           SameElement(load->indices, r.indices);
  };
  if (is_self(bin->a) && !Reads(bin->b, r.buffer)) {
    r.rhs = bin->b;
  } else if (is_self(bin->b) && !Reads(bin->a, r.buffer)) {
    r.rhs = bin->a;
    r.lhs_first = false;
  } else {
    return fail(unsupported,
                fmt::format("the update does not combine '{}' with a value that leaves it out",
                            r.buffer->name));
  }
  r.op = op;
  r.identity = init->value;
  if (!IsReducerIdentity(op, r.identity)) {
    return fail(unsupported, "the init value is not the identity of the reducer");
  }
  return r;
}

}  // namespace tirtune
