// Expressions of the loop-level IR. Nodes are immutable; `Expr` is the shared handle. Build
// expressions with the factories here (they check invariants) or with the operators in ir/op.h
// (they also fold constants).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/support/dtype.h"
#include "tirtune/support/object.h"

namespace tirtune {

/// Base of all expression nodes: every expression has a data type.
class ExprNode : public Object {
 public:
  DataType dtype;
  static bool IsKind(NodeKind k) { return k >= NodeKind::kIntImm && k <= NodeKind::kLet; }

 protected:
  ExprNode(NodeKind kind, DataType t) : Object(kind), dtype(t) {}
};

/// Handle to an expression. Integers convert implicitly to int64 immediates and floats to
/// float32 immediates, so `x + 1` and `y * 0.5f` read naturally.
class Expr : public ObjectRef {
 public:
  Expr() = default;
  explicit Expr(ObjectPtr<const ExprNode> p) : ObjectRef(std::move(p)) {}
  Expr(int value);      // NOLINT(google-explicit-constructor)
  Expr(int64_t value);  // NOLINT(google-explicit-constructor)
  Expr(float value);    // NOLINT(google-explicit-constructor)

  const ExprNode* get() const { return static_cast<const ExprNode*>(ObjectRef::get()); }
  const ExprNode* operator->() const { return get(); }
  DataType dtype() const { return get()->dtype; }
};

/// Returns a handle sharing the given node.
template <typename NodeT>
Expr GetRef(const NodeT* node) {
  return Expr(ObjectPtr<const ExprNode>(node));
}

#define TT_EXPR_KIND(Name)                             \
  static constexpr NodeKind kKind = NodeKind::k##Name; \
  static bool IsKind(NodeKind k) { return k == kKind; }

/// An integer (or bool) constant.
class IntImmNode : public ExprNode {
 public:
  int64_t value;
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  TT_EXPR_KIND(IntImm)
};

/// A floating-point constant.
class FloatImmNode : public ExprNode {
 public:
  double value;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  TT_EXPR_KIND(FloatImm)
};

/// A string constant; appears only as an annotation value or an intrinsic argument.
class StringImmNode : public ExprNode {
 public:
  std::string value;
  explicit StringImmNode(std::string v)
      : ExprNode(kKind, DataType::Handle()), value(std::move(v)) {}
  TT_EXPR_KIND(StringImm)
};

/// A variable. Identity is the node itself; `name` is only a hint for printing.
class VarNode : public ExprNode {
 public:
  std::string name;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
  TT_EXPR_KIND(Var)
};

/// Handle to a variable.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = DataType::Index());
  explicit Var(ObjectPtr<const VarNode> p) : Expr(ObjectPtr<const ExprNode>(p)) {}
  const VarNode* get() const { return static_cast<const VarNode*>(ObjectRef::get()); }
  const VarNode* operator->() const { return get(); }
  /// A fresh variable with the same name hint and type.
  Var Copy(const std::string& suffix = "") const { return Var(get()->name + suffix, dtype()); }
};

/// True for the kinds that are BinaryOpNode instances.
inline bool IsBinaryOpKind(NodeKind k) { return k >= NodeKind::kAdd && k <= NodeKind::kOr; }
/// True for comparisons (their result is bool).
inline bool IsCompareKind(NodeKind k) { return k >= NodeKind::kEQ && k <= NodeKind::kGE; }

/// The common base of two-operand nodes, so code can read the operands without knowing the kind.
class BinaryNode : public ExprNode {
 public:
  Expr a, b;
  static bool IsKind(NodeKind k) { return IsBinaryOpKind(k); }

 protected:
  BinaryNode(NodeKind k, DataType t, Expr a, Expr b)
      : ExprNode(k, t), a(std::move(a)), b(std::move(b)) {}
};

/// Each binary kind is its own type for the functors.
template <NodeKind K>
class BinaryOpNode : public BinaryNode {
 public:
  BinaryOpNode(DataType t, Expr a, Expr b) : BinaryNode(K, t, std::move(a), std::move(b)) {}
  static constexpr NodeKind kKind = K;
  static bool IsKind(NodeKind k) { return k == K; }
};

using AddNode = BinaryOpNode<NodeKind::kAdd>;
using SubNode = BinaryOpNode<NodeKind::kSub>;
using MulNode = BinaryOpNode<NodeKind::kMul>;
/// Division: true division on floats, truncating division on integers.
using DivNode = BinaryOpNode<NodeKind::kDiv>;
using FloorDivNode = BinaryOpNode<NodeKind::kFloorDiv>;
using FloorModNode = BinaryOpNode<NodeKind::kFloorMod>;
using MinNode = BinaryOpNode<NodeKind::kMin>;
using MaxNode = BinaryOpNode<NodeKind::kMax>;
using EQNode = BinaryOpNode<NodeKind::kEQ>;
using NENode = BinaryOpNode<NodeKind::kNE>;
using LTNode = BinaryOpNode<NodeKind::kLT>;
using LENode = BinaryOpNode<NodeKind::kLE>;
using GTNode = BinaryOpNode<NodeKind::kGT>;
using GENode = BinaryOpNode<NodeKind::kGE>;
using AndNode = BinaryOpNode<NodeKind::kAnd>;
using OrNode = BinaryOpNode<NodeKind::kOr>;

/// Fields of any binary node, without knowing its kind.
inline const Expr& BinaryA(const ExprNode* n) { return static_cast<const BinaryNode*>(n)->a; }
inline const Expr& BinaryB(const ExprNode* n) { return static_cast<const BinaryNode*>(n)->b; }

/// Logical negation.
class NotNode : public ExprNode {
 public:
  Expr a;
  explicit NotNode(Expr a) : ExprNode(kKind, a.dtype()), a(std::move(a)) {}
  TT_EXPR_KIND(Not)
};

/// `cond ? t : f`; both branches may be evaluated.
class SelectNode : public ExprNode {
 public:
  Expr cond, t, f;
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t.dtype()), cond(std::move(c)), t(std::move(t)), f(std::move(f)) {}
  TT_EXPR_KIND(Select)
};

/// Conversion of `value` to `dtype`.
class CastNode : public ExprNode {
 public:
  Expr value;
  CastNode(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  TT_EXPR_KIND(Cast)
};

/// Pure math intrinsics. The text name is the enumerator's name in lower case.
enum class Intrinsic : uint8_t {
  kExp,
  kExp2,
  kLog,
  kLog2,
  kSqrt,
  kRsqrt,
  kTanh,
  kSigmoid,
  kErf,
  kPow,
  kFabs,
  kFloor,
  kCeil,
  kRound,
  kTrunc,
  kSin,
  kCos,
  kFma,
  /// GPU kernels only (the lowered GPU form; no IR text names it): warp_shuffle_xor(v, m) is the
  /// value v of the thread whose lane in the warp is this thread's lane xor m (an integer
  /// immediate), CUDA's __shfl_xor_sync over the whole warp. Every thread of the warp must reach
  /// the same call.
  kWarpShuffleXor,
};
const char* IntrinsicName(Intrinsic op);
/// Number of arguments the intrinsic takes.
int IntrinsicArity(Intrinsic op);
/// Looks up an intrinsic by its text name; false when there is none.
bool IntrinsicFromName(const std::string& name, Intrinsic* out);

/// A call of an intrinsic: a pure math function of float arguments, or warp_shuffle_xor.
class CallNode : public ExprNode {
 public:
  Intrinsic op;
  std::vector<Expr> args;
  CallNode(DataType t, Intrinsic op, std::vector<Expr> args)
      : ExprNode(kKind, t), op(op), args(std::move(args)) {}
  TT_EXPR_KIND(Call)
};

/// The vector base, base + stride, ..., base + (lanes-1) * stride.
class RampNode : public ExprNode {
 public:
  Expr base, stride;
  int lanes;
  RampNode(Expr base, Expr stride, int lanes)
      : ExprNode(kKind, base.dtype().with_lanes(lanes)),
        base(std::move(base)),
        stride(std::move(stride)),
        lanes(lanes) {}
  TT_EXPR_KIND(Ramp)
};

/// A scalar repeated across `lanes` lanes.
class BroadcastNode : public ExprNode {
 public:
  Expr value;
  int lanes;
  BroadcastNode(Expr v, int lanes)
      : ExprNode(kKind, v.dtype().with_lanes(lanes)), value(std::move(v)), lanes(lanes) {}
  TT_EXPR_KIND(Broadcast)
};

/// `let var = value in body`.
class LetNode : public ExprNode {
 public:
  Var var;
  Expr value, body;
  LetNode(Var var, Expr value, Expr body)
      : ExprNode(kKind, body.dtype()),
        var(std::move(var)),
        value(std::move(value)),
        body(std::move(body)) {}
  TT_EXPR_KIND(Let)
};

// ---- Factories. They check operand types and throw InternalError on misuse. ----

Expr IntImm(DataType t, int64_t value);
Expr FloatImm(DataType t, double value);
Expr StringImm(std::string value);
Expr Bool(bool value);
/// A binary node of kind `k` without any folding; operand types must agree.
Expr MakeBinary(NodeKind k, Expr a, Expr b);
Expr MakeNot(Expr a);
Expr MakeSelect(Expr cond, Expr t, Expr f);
Expr MakeCast(DataType t, Expr value);
Expr MakeCall(Intrinsic op, std::vector<Expr> args);
Expr MakeRamp(Expr base, Expr stride, int lanes);
Expr MakeBroadcast(Expr value, int lanes);
Expr MakeLet(Var var, Expr value, Expr body);

/// Value of an integer immediate, or nullptr when `e` is not one.
const int64_t* AsConstInt(const Expr& e);
/// True when `e` is an integer immediate equal to `value`.
bool IsConstInt(const Expr& e, int64_t value);
/// True when `e` is an integer or float immediate equal to zero.
bool IsConstZero(const Expr& e);
/// Appends the conjuncts of `cond` (the operands of nested `and`s, left to right) to `out`.
void SplitConjuncts(const Expr& cond, std::vector<Expr>* out);

}  // namespace tirtune
