// KernelFitsInt32: a visitor that bounds every int64 subexpression of a kernel.
#include "int32_check.h"

#include <climits>

#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

class Int32Check : public StmtVisitor {
 public:
  using StmtVisitor::VisitExpr_;
  using StmtVisitor::VisitStmt_;

  bool Fits(const GpuKernel& k) {
    for (int axis = 0; axis < 3; ++axis) {
      analyzer_.Bind(k.block_idx[axis], Range{0, k.grid[axis]});
      analyzer_.Bind(k.thread_idx[axis], Range{0, k.block[axis]});
    }
    VisitStmt(k.body);
    return fits_;
  }

  void VisitExpr(const Expr& e) override {
    if (!fits_) return;
    Expr checked = e;
    if (const auto* ramp = e.as<RampNode>()) {  // its last lane
      checked = MakeBinary(NodeKind::kAdd, ramp->base,
                           MakeBinary(NodeKind::kMul, ramp->stride,
                                      IntImm(ramp->stride.dtype(), ramp->lanes - 1)));
    }
    if (checked.dtype() == DataType::Int(64)) {
      arith::IntBound b = analyzer_.ConstIntBound(checked);
      if (!b.has_min() || !b.has_max() || b.min_value < INT32_MIN || b.max_value > INT32_MAX) {
        fits_ = false;
        return;
      }
    }
    StmtVisitor::VisitExpr(e);
  }
  void VisitStmt_(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    analyzer_.Bind(op->loop_var, Range{op->min, op->extent});
    VisitStmt(op->body);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    VisitExpr(op->value);
    if (op->var.dtype().is_int()) analyzer_.Bind(op->var, analyzer_.ConstIntBound(op->value));
    VisitStmt(op->body);
  }

 private:
  arith::Analyzer analyzer_;
  bool fits_ = true;
};

}  // namespace

bool KernelFitsInt32(const GpuKernel& kernel) { return Int32Check().Fits(kernel); }

}  // namespace tirtune
