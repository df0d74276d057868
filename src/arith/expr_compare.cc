// CompareExpr: kind first, then type, then the fields of the node in declaration order.
#include "expr_compare.h"

#include <functional>

#include "tirtune/ir/buffer.h"
#include "tirtune/support/error.h"

namespace tirtune::arith {
namespace {

template <typename T>
int Cmp3(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareType(DataType a, DataType b) {
  if (int c = Cmp3(static_cast<int>(a.code()), static_cast<int>(b.code()))) return c;
  if (int c = Cmp3(a.bits(), b.bits())) return c;
  return Cmp3(a.lanes(), b.lanes());
}

// Names first so that the order does not depend on allocation; addresses only break ties
// between distinct objects that share a name.
int CompareNamed(const std::string& na, const void* pa, const std::string& nb, const void* pb) {
  if (pa == pb) return 0;
  if (int c = na.compare(nb)) return c < 0 ? -1 : 1;
  return std::less<const void*>()(pa, pb) ? -1 : 1;
}

int CompareVar(const Var& a, const Var& b) {
  return CompareNamed(a->name, a.get(), b->name, b.get());
}

int CompareExprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (int c = Cmp3(a.size(), b.size())) return c;
  for (size_t i = 0; i < a.size(); ++i) {
    if (int c = CompareExpr(a[i], b[i])) return c;
  }
  return 0;
}

}  // namespace

int CompareExpr(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return 0;
  if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
  if (int c = Cmp3(static_cast<int>(a->kind()), static_cast<int>(b->kind()))) return c;
  if (int c = CompareType(a.dtype(), b.dtype())) return c;
  NodeKind k = a->kind();
  if (IsBinaryOpKind(k)) {
    if (int c = CompareExpr(BinaryA(a.get()), BinaryA(b.get()))) return c;
    return CompareExpr(BinaryB(a.get()), BinaryB(b.get()));
  }
  switch (k) {
    case NodeKind::kIntImm:
      return Cmp3(a.as<IntImmNode>()->value, b.as<IntImmNode>()->value);
    case NodeKind::kFloatImm:
      return Cmp3(a.as<FloatImmNode>()->value, b.as<FloatImmNode>()->value);
    case NodeKind::kStringImm:
      return Cmp3(a.as<StringImmNode>()->value, b.as<StringImmNode>()->value);
    case NodeKind::kVar:
      return CompareNamed(a.as<VarNode>()->name, a.get(), b.as<VarNode>()->name, b.get());
    case NodeKind::kNot:
      return CompareExpr(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case NodeKind::kSelect: {
      const auto* x = a.as<SelectNode>();
      const auto* y = b.as<SelectNode>();
      if (int c = CompareExpr(x->cond, y->cond)) return c;
      if (int c = CompareExpr(x->t, y->t)) return c;
      return CompareExpr(x->f, y->f);
    }
    case NodeKind::kCast:
      return CompareExpr(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case NodeKind::kCall: {
      const auto* x = a.as<CallNode>();
      const auto* y = b.as<CallNode>();
      if (int c = Cmp3(static_cast<int>(x->op), static_cast<int>(y->op))) return c;
      return CompareExprs(x->args, y->args);
    }
    case NodeKind::kBufferLoad: {
      const auto* x = a.as<BufferLoadNode>();
      const auto* y = b.as<BufferLoadNode>();
      if (int c =
              CompareNamed(x->buffer->name, x->buffer.get(), y->buffer->name, y->buffer.get())) {
        return c;
      }
      return CompareExprs(x->indices, y->indices);
    }
    case NodeKind::kRamp: {
      const auto* x = a.as<RampNode>();
      const auto* y = b.as<RampNode>();
      if (int c = CompareExpr(x->base, y->base)) return c;
      if (int c = CompareExpr(x->stride, y->stride)) return c;
      return Cmp3(x->lanes, y->lanes);
    }
    case NodeKind::kBroadcast: {
      const auto* x = a.as<BroadcastNode>();
      const auto* y = b.as<BroadcastNode>();
      if (int c = CompareExpr(x->value, y->value)) return c;
      return Cmp3(x->lanes, y->lanes);
    }
    case NodeKind::kLet: {
      const auto* x = a.as<LetNode>();
      const auto* y = b.as<LetNode>();
      if (int c = CompareVar(x->var, y->var)) return c;
      if (int c = CompareExpr(x->value, y->value)) return c;
      return CompareExpr(x->body, y->body);
    }
    default:
      TT_UNREACHABLE("CompareExpr on a non-expression kind {}", static_cast<int>(k));
  }
}

}  // namespace tirtune::arith
