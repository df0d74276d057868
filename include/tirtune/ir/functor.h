// Visitors and mutators over the IR, dispatched on the node kind (no RTTI). Derive from
// ExprVisitor/StmtVisitor to walk, from ExprMutator/StmtMutator to rewrite; override the
// VisitExpr_/VisitStmt_ overloads you care about. A mutator returns the original node when no
// child changed, so untouched subtrees stay shared.
#pragma once

#include <functional>
#include <vector>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/expr.h"
#include "tirtune/ir/stmt.h"
#include "tirtune/support/error.h"

namespace tirtune {

/// Dispatches an expression to one overload per kind.
template <typename R>
class ExprFunctor {
 public:
  virtual ~ExprFunctor() = default;
  virtual R VisitExpr(const Expr& e) {
    switch (e->kind()) {
#define TT_DISPATCH_Expr(Name) \
  case NodeKind::k##Name:      \
    return VisitExpr_(static_cast<const Name##Node*>(e.get()));
#define TT_DISPATCH_Stmt(Name)
#define TT_DISPATCH_Object(Name)
#define TT_NODE(Name, Base) TT_DISPATCH_##Base(Name)
#include "tirtune/ir/node_kinds.def"
#undef TT_NODE
#undef TT_DISPATCH_Expr
#undef TT_DISPATCH_Stmt
#undef TT_DISPATCH_Object
      default:
        TT_UNREACHABLE("not an expression kind");
    }
  }
#define TT_NODE(Name, Base) TT_DECLARE_##Base(Name)
#define TT_DECLARE_Expr(Name) virtual R VisitExpr_(const Name##Node* op) = 0;
#define TT_DECLARE_Stmt(Name)
#define TT_DECLARE_Object(Name)
#include "tirtune/ir/node_kinds.def"
#undef TT_DECLARE_Expr
#undef TT_DECLARE_Stmt
#undef TT_DECLARE_Object
#undef TT_NODE
};

/// Dispatches a statement to one overload per kind.
template <typename R>
class StmtFunctor {
 public:
  virtual ~StmtFunctor() = default;
  virtual R VisitStmt(const Stmt& s) {
    switch (s->kind()) {
#define TT_DISPATCH_Stmt(Name) \
  case NodeKind::k##Name:      \
    return VisitStmt_(static_cast<const Name##Node*>(s.get()));
#define TT_DISPATCH_Expr(Name)
#define TT_DISPATCH_Object(Name)
#define TT_NODE(Name, Base) TT_DISPATCH_##Base(Name)
#include "tirtune/ir/node_kinds.def"
#undef TT_NODE
#undef TT_DISPATCH_Expr
#undef TT_DISPATCH_Stmt
#undef TT_DISPATCH_Object
      default:
        TT_UNREACHABLE("not a statement kind");
    }
  }
#define TT_NODE(Name, Base) TT_DECLARE_##Base(Name)
#define TT_DECLARE_Stmt(Name) virtual R VisitStmt_(const Name##Node* op) = 0;
#define TT_DECLARE_Expr(Name)
#define TT_DECLARE_Object(Name)
#include "tirtune/ir/node_kinds.def"
#undef TT_DECLARE_Expr
#undef TT_DECLARE_Stmt
#undef TT_DECLARE_Object
#undef TT_NODE
};

#define TT_EXPR_OVERRIDES(R)                       \
  R VisitExpr_(const IntImmNode* op) override;     \
  R VisitExpr_(const FloatImmNode* op) override;   \
  R VisitExpr_(const StringImmNode* op) override;  \
  R VisitExpr_(const VarNode* op) override;        \
  R VisitExpr_(const AddNode* op) override;        \
  R VisitExpr_(const SubNode* op) override;        \
  R VisitExpr_(const MulNode* op) override;        \
  R VisitExpr_(const DivNode* op) override;        \
  R VisitExpr_(const FloorDivNode* op) override;   \
  R VisitExpr_(const FloorModNode* op) override;   \
  R VisitExpr_(const MinNode* op) override;        \
  R VisitExpr_(const MaxNode* op) override;        \
  R VisitExpr_(const EQNode* op) override;         \
  R VisitExpr_(const NENode* op) override;         \
  R VisitExpr_(const LTNode* op) override;         \
  R VisitExpr_(const LENode* op) override;         \
  R VisitExpr_(const GTNode* op) override;         \
  R VisitExpr_(const GENode* op) override;         \
  R VisitExpr_(const AndNode* op) override;        \
  R VisitExpr_(const OrNode* op) override;         \
  R VisitExpr_(const NotNode* op) override;        \
  R VisitExpr_(const SelectNode* op) override;     \
  R VisitExpr_(const CastNode* op) override;       \
  R VisitExpr_(const CallNode* op) override;       \
  R VisitExpr_(const BufferLoadNode* op) override; \
  R VisitExpr_(const RampNode* op) override;       \
  R VisitExpr_(const BroadcastNode* op) override;  \
  R VisitExpr_(const LetNode* op) override;

#define TT_STMT_OVERRIDES(R)                         \
  R VisitStmt_(const ForNode* op) override;          \
  R VisitStmt_(const BlockNode* op) override;        \
  R VisitStmt_(const BlockRealizeNode* op) override; \
  R VisitStmt_(const BufferStoreNode* op) override;  \
  R VisitStmt_(const SeqStmtNode* op) override;      \
  R VisitStmt_(const IfThenElseNode* op) override;   \
  R VisitStmt_(const EvaluateNode* op) override;     \
  R VisitStmt_(const LetStmtNode* op) override;      \
  R VisitStmt_(const AllocateNode* op) override;     \
  R VisitStmt_(const BarrierNode* op) override;

/// Walks every sub-expression.
class ExprVisitor : public ExprFunctor<void> {
 public:
  using ExprFunctor<void>::VisitExpr;
  TT_EXPR_OVERRIDES(void)
  /// Called for every buffer referenced by a load (and by stores/regions in StmtVisitor).
  virtual void VisitBuffer(const Buffer& /*buffer*/) {}
};

/// Rebuilds expressions bottom-up; returns the same node when nothing changed.
class ExprMutator : public ExprFunctor<Expr> {
 public:
  using ExprFunctor<Expr>::VisitExpr;
  TT_EXPR_OVERRIDES(Expr)
  /// Maps a buffer referenced by a load or store; identity by default.
  virtual Buffer VisitBuffer(const Buffer& buffer) { return buffer; }

 protected:
  std::vector<Expr> VisitExprs(const std::vector<Expr>& exprs, bool* changed);
  Range VisitRange(const Range& r, bool* changed);
};

/// Walks every statement and expression.
class StmtVisitor : public ExprVisitor, public StmtFunctor<void> {
 public:
  using ExprVisitor::VisitExpr;
  using ExprVisitor::VisitExpr_;
  using StmtFunctor<void>::VisitStmt;
  TT_STMT_OVERRIDES(void)
  void VisitBufferRegion(const BufferRegion& region);
};

/// Rebuilds statements bottom-up; returns the same node when nothing changed.
class StmtMutator : public ExprMutator, public StmtFunctor<Stmt> {
 public:
  using ExprMutator::VisitExpr;
  using ExprMutator::VisitExpr_;
  using StmtFunctor<Stmt>::VisitStmt;
  TT_STMT_OVERRIDES(Stmt)

 protected:
  BufferRegion VisitBufferRegion(const BufferRegion& region, bool* changed);
};

/// Calls `fvisit` on every expression and statement node below `root` (pre-order).
void PreOrderVisit(const Stmt& root, const std::function<bool(const Object*)>& fvisit);
/// Calls `fvisit` on every node below `root` after its children (post-order).
void PostOrderVisit(const Stmt& root, const std::function<void(const Object*)>& fvisit);
void PostOrderVisit(const Expr& root, const std::function<void(const Object*)>& fvisit);

/// True when `e` loads from any buffer.
bool LoadsFromBuffer(const Expr& e);

}  // namespace tirtune
