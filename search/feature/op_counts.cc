// CountOps: the arithmetic of an expression by class (op_counts.h).
#include "op_counts.h"

namespace tirtune::feature {

void CountOps(const Expr& e, double weight, OpCounts* counts) {
  const ExprNode* n = e.get();
  const int lanes = n->dtype.lanes();
  switch (n->kind()) {
    case NodeKind::kAdd:
    case NodeKind::kSub: {
      const Expr& a = BinaryA(n);
      const Expr& b = BinaryB(n);
      const Expr* product = b->kind() == NodeKind::kMul   ? &b
                            : a->kind() == NodeKind::kMul ? &a
                                                          : nullptr;
      if (product != nullptr) {
        counts->Add(kMad, n->dtype, lanes, weight);
        CountOps(BinaryA(product->get()), weight, counts);
        CountOps(BinaryB(product->get()), weight, counts);
        CountOps(product == &b ? a : b, weight, counts);
        return;
      }
      counts->Add(kAddSub, n->dtype, lanes, weight);
      break;
    }
    case NodeKind::kMul:
      counts->Add(kMul, n->dtype, lanes, weight);
      break;
    case NodeKind::kDiv:
    case NodeKind::kFloorDiv:
    case NodeKind::kFloorMod:
      counts->Add(kDivMod, n->dtype, lanes, weight);
      break;
    case NodeKind::kMin:
    case NodeKind::kMax:
    case NodeKind::kEQ:
    case NodeKind::kNE:
    case NodeKind::kLT:
    case NodeKind::kLE:
    case NodeKind::kGT:
    case NodeKind::kGE:
      counts->Add(kCmp, BinaryA(n).dtype(), lanes, weight);
      break;
    case NodeKind::kAnd:
    case NodeKind::kOr:
      counts->bool_op += weight * lanes;
      break;
    case NodeKind::kNot:
      counts->bool_op += weight * lanes;
      CountOps(static_cast<const NotNode*>(n)->a, weight, counts);
      return;
    case NodeKind::kSelect: {
      const auto* select = static_cast<const SelectNode*>(n);
      counts->select += weight * lanes;
      CountOps(select->cond, weight, counts);
      CountOps(select->t, weight, counts);
      CountOps(select->f, weight, counts);
      return;
    }
    case NodeKind::kCast: {
      const auto* cast = static_cast<const CastNode*>(n);
      counts->Add(kOtherFunc, n->dtype, lanes, weight);
      CountOps(cast->value, weight, counts);
      return;
    }
    case NodeKind::kCall: {
      const auto* call = static_cast<const CallNode*>(n);
      counts->Add(call->op == Intrinsic::kFma ? kMad : kMathFunc, n->dtype, lanes, weight);
      for (const Expr& arg : call->args) CountOps(arg, weight, counts);
      return;
    }
    case NodeKind::kBufferLoad:
      for (const Expr& index : static_cast<const BufferLoadNode*>(n)->indices) {
        CountOps(index, weight, counts);
      }
      return;
    case NodeKind::kRamp: {
      const auto* ramp = static_cast<const RampNode*>(n);
      CountOps(ramp->base, weight, counts);
      CountOps(ramp->stride, weight, counts);
      return;
    }
    case NodeKind::kBroadcast:
      CountOps(static_cast<const BroadcastNode*>(n)->value, weight, counts);
      return;
    case NodeKind::kLet: {
      const auto* let = static_cast<const LetNode*>(n);
      CountOps(let->value, weight, counts);
      CountOps(let->body, weight, counts);
      return;
    }
    default:
      return;
  }
  CountOps(BinaryA(n), weight, counts);
  CountOps(BinaryB(n), weight, counts);
}

}  // namespace tirtune::feature
