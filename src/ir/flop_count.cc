// EstimateFlops: a walk that multiplies loop trip counts down to each float store and counts the
// arithmetic in its value.
#include "tirtune/ir/flop_count.h"

#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

class OpCounter : public ExprVisitor {
 public:
  double ops = 0;
  using ExprVisitor::VisitExpr_;
  void VisitExpr_(const AddNode* op) override { Count(op), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const SubNode* op) override { Count(op), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const MulNode* op) override { Count(op), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const DivNode* op) override { Count(op), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const MinNode* op) override { Count(op), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const MaxNode* op) override { Count(op), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const CallNode* op) override { Count(op), ExprVisitor::VisitExpr_(op); }
  // Index arithmetic inside a load is not floating-point work.
  void VisitExpr_(const BufferLoadNode*) override {}

 private:
  void Count(const ExprNode* op) {
    if (op->dtype.is_float()) ops += op->dtype.lanes();
  }
};

class FlopWalker : public StmtVisitor {
 public:
  double flops = 0;
  using StmtVisitor::VisitStmt_;

  void VisitStmt_(const ForNode* op) override { Scaled(AsConstInt(op->extent), op->body); }
  void VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    // Iterators bound to loops add nothing; an unbound block (iterating on its own domains,
    // e.g. the root) runs once per binding, so only the loops count.
    if (block->init.defined()) VisitStmt(block->init);
    VisitStmt(block->body);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    if (!op->value.dtype().is_float()) return;
    OpCounter counter;
    counter.VisitExpr(op->value);
    flops += counter.ops * scale_;
  }
  void VisitExpr(const Expr&) override {}

 private:
  void Scaled(const int64_t* extent, const Stmt& body) {
    double saved = scale_;
    if (extent != nullptr) scale_ *= static_cast<double>(*extent);
    VisitStmt(body);
    scale_ = saved;
  }
  double scale_ = 1;
};

}  // namespace

double EstimateFlops(const PrimFunc& func) {
  FlopWalker walker;
  walker.VisitStmt(func->body);
  return walker.flops;
}

}  // namespace tirtune
