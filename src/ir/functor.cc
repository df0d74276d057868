// Default traversals of ExprVisitor/ExprMutator/StmtVisitor/StmtMutator: visit every child; the
// mutators rebuild a node only when a child changed.
#include "tirtune/ir/functor.h"

namespace tirtune {

// ---------------------------------------------------------------- ExprVisitor

void ExprVisitor::VisitExpr_(const IntImmNode*) {}
void ExprVisitor::VisitExpr_(const FloatImmNode*) {}
void ExprVisitor::VisitExpr_(const StringImmNode*) {}
void ExprVisitor::VisitExpr_(const VarNode*) {}

#define TT_VISIT_BINARY(Name)                          \
  void ExprVisitor::VisitExpr_(const Name##Node* op) { \
    VisitExpr(op->a);                                  \
    VisitExpr(op->b);                                  \
  }
TT_VISIT_BINARY(Add)
TT_VISIT_BINARY(Sub) TT_VISIT_BINARY(Mul) TT_VISIT_BINARY(Div) TT_VISIT_BINARY(FloorDiv)
    TT_VISIT_BINARY(FloorMod) TT_VISIT_BINARY(Min) TT_VISIT_BINARY(Max) TT_VISIT_BINARY(EQ)
        TT_VISIT_BINARY(NE) TT_VISIT_BINARY(LT) TT_VISIT_BINARY(LE) TT_VISIT_BINARY(GT)
            TT_VISIT_BINARY(GE) TT_VISIT_BINARY(And) TT_VISIT_BINARY(Or)
#undef TT_VISIT_BINARY

                void ExprVisitor::VisitExpr_(const NotNode* op) {
  VisitExpr(op->a);
}
void ExprVisitor::VisitExpr_(const SelectNode* op) {
  VisitExpr(op->cond);
  VisitExpr(op->t);
  VisitExpr(op->f);
}
void ExprVisitor::VisitExpr_(const CastNode* op) { VisitExpr(op->value); }
void ExprVisitor::VisitExpr_(const CallNode* op) {
  for (const Expr& a : op->args) VisitExpr(a);
}
void ExprVisitor::VisitExpr_(const BufferLoadNode* op) {
  VisitBuffer(op->buffer);
  for (const Expr& i : op->indices) VisitExpr(i);
}
void ExprVisitor::VisitExpr_(const RampNode* op) {
  VisitExpr(op->base);
  VisitExpr(op->stride);
}
void ExprVisitor::VisitExpr_(const BroadcastNode* op) { VisitExpr(op->value); }
void ExprVisitor::VisitExpr_(const LetNode* op) {
  VisitExpr(op->var);
  VisitExpr(op->value);
  VisitExpr(op->body);
}

// ---------------------------------------------------------------- ExprMutator

std::vector<Expr> ExprMutator::VisitExprs(const std::vector<Expr>& exprs, bool* changed) {
  std::vector<Expr> out;
  out.reserve(exprs.size());
  for (const Expr& e : exprs) {
    out.push_back(VisitExpr(e));
    if (!out.back().same_as(e)) *changed = true;
  }
  return out;
}

Range ExprMutator::VisitRange(const Range& r, bool* changed) {
  Range out{VisitExpr(r.min), VisitExpr(r.extent)};
  if (!out.min.same_as(r.min) || !out.extent.same_as(r.extent)) *changed = true;
  return out;
}

Expr ExprMutator::VisitExpr_(const IntImmNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const FloatImmNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const StringImmNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const VarNode* op) { return GetRef(op); }

#define TT_MUTATE_BINARY(Name)                                        \
  Expr ExprMutator::VisitExpr_(const Name##Node* op) {                \
    Expr a = VisitExpr(op->a);                                        \
    Expr b = VisitExpr(op->b);                                        \
    if (a.same_as(op->a) && b.same_as(op->b)) return GetRef(op);      \
    return MakeBinary(NodeKind::k##Name, std::move(a), std::move(b)); \
  }
TT_MUTATE_BINARY(Add)
TT_MUTATE_BINARY(Sub) TT_MUTATE_BINARY(Mul) TT_MUTATE_BINARY(Div) TT_MUTATE_BINARY(FloorDiv)
    TT_MUTATE_BINARY(FloorMod) TT_MUTATE_BINARY(Min) TT_MUTATE_BINARY(Max) TT_MUTATE_BINARY(EQ)
        TT_MUTATE_BINARY(NE) TT_MUTATE_BINARY(LT) TT_MUTATE_BINARY(LE) TT_MUTATE_BINARY(GT)
            TT_MUTATE_BINARY(GE) TT_MUTATE_BINARY(And) TT_MUTATE_BINARY(Or)
#undef TT_MUTATE_BINARY

                Expr ExprMutator::VisitExpr_(const NotNode* op) {
  Expr a = VisitExpr(op->a);
  return a.same_as(op->a) ? GetRef(op) : MakeNot(std::move(a));
}
Expr ExprMutator::VisitExpr_(const SelectNode* op) {
  Expr c = VisitExpr(op->cond), t = VisitExpr(op->t), f = VisitExpr(op->f);
  if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return GetRef(op);
  return MakeSelect(std::move(c), std::move(t), std::move(f));
}
Expr ExprMutator::VisitExpr_(const CastNode* op) {
  Expr v = VisitExpr(op->value);
  return v.same_as(op->value) ? GetRef(op) : MakeCast(op->dtype, std::move(v));
}
Expr ExprMutator::VisitExpr_(const CallNode* op) {
  bool changed = false;
  std::vector<Expr> args = VisitExprs(op->args, &changed);
  return changed ? MakeCall(op->op, std::move(args)) : GetRef(op);
}
Expr ExprMutator::VisitExpr_(const BufferLoadNode* op) {
  bool changed = false;
  Buffer buffer = VisitBuffer(op->buffer);
  std::vector<Expr> indices = VisitExprs(op->indices, &changed);
  if (!changed && buffer.same_as(op->buffer)) return GetRef(op);
  return MakeBufferLoad(std::move(buffer), std::move(indices));
}
Expr ExprMutator::VisitExpr_(const RampNode* op) {
  Expr base = VisitExpr(op->base), stride = VisitExpr(op->stride);
  if (base.same_as(op->base) && stride.same_as(op->stride)) return GetRef(op);
  return MakeRamp(std::move(base), std::move(stride), op->lanes);
}
Expr ExprMutator::VisitExpr_(const BroadcastNode* op) {
  Expr v = VisitExpr(op->value);
  return v.same_as(op->value) ? GetRef(op) : MakeBroadcast(std::move(v), op->lanes);
}
Expr ExprMutator::VisitExpr_(const LetNode* op) {
  Expr value = VisitExpr(op->value), body = VisitExpr(op->body);
  if (value.same_as(op->value) && body.same_as(op->body)) return GetRef(op);
  return MakeLet(op->var, std::move(value), std::move(body));
}

// ---------------------------------------------------------------- StmtVisitor

void StmtVisitor::VisitBufferRegion(const BufferRegion& region) {
  VisitBuffer(region.buffer);
  for (const Range& r : region.region) {
    VisitExpr(r.min);
    VisitExpr(r.extent);
  }
}

void StmtVisitor::VisitStmt_(const ForNode* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const BlockNode* op) {
  for (const IterVar& iv : op->iter_vars) {
    VisitExpr(iv.dom.min);
    VisitExpr(iv.dom.extent);
  }
  for (const BufferRegion& r : op->reads) VisitBufferRegion(r);
  for (const BufferRegion& r : op->writes) VisitBufferRegion(r);
  for (const Buffer& b : op->alloc_buffers) VisitBuffer(b);
  if (op->init.defined()) VisitStmt(op->init);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const BlockRealizeNode* op) {
  for (const Expr& v : op->iter_values) VisitExpr(v);
  VisitExpr(op->predicate);
  VisitStmt(op->block);
}
void StmtVisitor::VisitStmt_(const BufferStoreNode* op) {
  VisitBuffer(op->buffer);
  VisitExpr(op->value);
  for (const Expr& i : op->indices) VisitExpr(i);
}
void StmtVisitor::VisitStmt_(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) VisitStmt(s);
}
void StmtVisitor::VisitStmt_(const IfThenElseNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  if (op->else_case.defined()) VisitStmt(op->else_case);
}
void StmtVisitor::VisitStmt_(const EvaluateNode* op) { VisitExpr(op->value); }
void StmtVisitor::VisitStmt_(const LetStmtNode* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const BarrierNode* /*op*/) {}
void StmtVisitor::VisitStmt_(const AllocateNode* op) {
  VisitBuffer(op->buffer);
  VisitStmt(op->body);
}

// ---------------------------------------------------------------- StmtMutator

BufferRegion StmtMutator::VisitBufferRegion(const BufferRegion& region, bool* changed) {
  BufferRegion out{VisitBuffer(region.buffer), {}};
  if (!out.buffer.same_as(region.buffer)) *changed = true;
  for (const Range& r : region.region) out.region.push_back(VisitRange(r, changed));
  return out;
}

Stmt StmtMutator::VisitStmt_(const ForNode* op) {
  Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
  Stmt body = VisitStmt(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) {
    return GetStmtRef(op);
  }
  return MakeFor(op->loop_var, std::move(min), std::move(extent), op->for_kind, std::move(body),
                 op->thread_tag, op->annotations);
}

Stmt StmtMutator::VisitStmt_(const BlockNode* op) {
  bool changed = false;
  std::vector<IterVar> iter_vars;
  for (const IterVar& iv : op->iter_vars) {
    iter_vars.push_back(IterVar{iv.var, VisitRange(iv.dom, &changed), iv.kind});
  }
  std::vector<BufferRegion> reads, writes;
  for (const BufferRegion& r : op->reads) reads.push_back(VisitBufferRegion(r, &changed));
  for (const BufferRegion& r : op->writes) writes.push_back(VisitBufferRegion(r, &changed));
  std::vector<Buffer> allocs;
  for (const Buffer& b : op->alloc_buffers) {
    allocs.push_back(VisitBuffer(b));
    if (!allocs.back().same_as(b)) changed = true;
  }
  Stmt init = op->init.defined() ? VisitStmt(op->init) : Stmt();
  Stmt body = VisitStmt(op->body);
  if (!changed && init.same_as(op->init) && body.same_as(op->body)) return GetStmtRef(op);
  return MakeBlock(op->name, std::move(iter_vars), std::move(reads), std::move(writes),
                   std::move(body), std::move(init), std::move(allocs), op->annotations);
}

Stmt StmtMutator::VisitStmt_(const BlockRealizeNode* op) {
  bool changed = false;
  std::vector<Expr> values = VisitExprs(op->iter_values, &changed);
  Expr pred = VisitExpr(op->predicate);
  Stmt block = VisitStmt(op->block);
  if (!changed && pred.same_as(op->predicate) && block.same_as(op->block)) return GetStmtRef(op);
  const auto* b = block.as<BlockNode>();
  TT_ICHECK(b != nullptr, "a block realize's block was rewritten into a non-block");
  return MakeBlockRealize(std::move(values), std::move(pred), Block(ObjectPtr<const BlockNode>(b)));
}

Stmt StmtMutator::VisitStmt_(const BufferStoreNode* op) {
  bool changed = false;
  Buffer buffer = VisitBuffer(op->buffer);
  Expr value = VisitExpr(op->value);
  std::vector<Expr> indices = VisitExprs(op->indices, &changed);
  if (!changed && buffer.same_as(op->buffer) && value.same_as(op->value)) return GetStmtRef(op);
  return MakeBufferStore(std::move(buffer), std::move(value), std::move(indices));
}

Stmt StmtMutator::VisitStmt_(const SeqStmtNode* op) {
  bool changed = false;
  std::vector<Stmt> seq;
  for (const Stmt& s : op->seq) {
    seq.push_back(VisitStmt(s));
    if (!seq.back().same_as(s)) changed = true;
  }
  return changed ? MakeSeq(std::move(seq)) : GetStmtRef(op);
}

Stmt StmtMutator::VisitStmt_(const IfThenElseNode* op) {
  Expr c = VisitExpr(op->condition);
  Stmt t = VisitStmt(op->then_case);
  Stmt e = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) {
    return GetStmtRef(op);
  }
  return MakeIfThenElse(std::move(c), std::move(t), std::move(e));
}

Stmt StmtMutator::VisitStmt_(const EvaluateNode* op) {
  Expr v = VisitExpr(op->value);
  return v.same_as(op->value) ? GetStmtRef(op) : MakeEvaluate(std::move(v));
}

Stmt StmtMutator::VisitStmt_(const LetStmtNode* op) {
  Expr v = VisitExpr(op->value);
  Stmt body = VisitStmt(op->body);
  if (v.same_as(op->value) && body.same_as(op->body)) return GetStmtRef(op);
  return MakeLetStmt(op->var, std::move(v), std::move(body));
}

Stmt StmtMutator::VisitStmt_(const BarrierNode* op) { return GetStmtRef(op); }

Stmt StmtMutator::VisitStmt_(const AllocateNode* op) {
  Buffer b = VisitBuffer(op->buffer);
  Stmt body = VisitStmt(op->body);
  if (b.same_as(op->buffer) && body.same_as(op->body)) return GetStmtRef(op);
  return MakeAllocate(std::move(b), std::move(body));
}

// ---------------------------------------------------------------- generic walks

namespace {
class PreOrderWalker : public StmtVisitor {
 public:
  explicit PreOrderWalker(const std::function<bool(const Object*)>& f) : f_(f) {}
  void VisitExpr(const Expr& e) override {
    if (f_(e.get())) StmtVisitor::VisitExpr(e);
  }
  void VisitStmt(const Stmt& s) override {
    if (f_(s.get())) StmtVisitor::VisitStmt(s);
  }

 private:
  const std::function<bool(const Object*)>& f_;
};

class PostOrderWalker : public StmtVisitor {
 public:
  explicit PostOrderWalker(const std::function<void(const Object*)>& f) : f_(f) {}
  void VisitExpr(const Expr& e) override {
    StmtVisitor::VisitExpr(e);
    f_(e.get());
  }
  void VisitStmt(const Stmt& s) override {
    StmtVisitor::VisitStmt(s);
    f_(s.get());
  }

 private:
  const std::function<void(const Object*)>& f_;
};
}  // namespace

void PreOrderVisit(const Stmt& root, const std::function<bool(const Object*)>& fvisit) {
  PreOrderWalker(fvisit).VisitStmt(root);
}
void PostOrderVisit(const Stmt& root, const std::function<void(const Object*)>& fvisit) {
  PostOrderWalker(fvisit).VisitStmt(root);
}
void PostOrderVisit(const Expr& root, const std::function<void(const Object*)>& fvisit) {
  PostOrderWalker(fvisit).VisitExpr(root);
}

bool LoadsFromBuffer(const Expr& e) {
  bool found = false;
  PostOrderVisit(
      e, [&](const Object* node) { found = found || node->kind() == NodeKind::kBufferLoad; });
  return found;
}

}  // namespace tirtune
