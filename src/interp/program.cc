// Translation of a PrimFunc into interpreter code. This is the pre-pass that numbers variables:
// each definition (loop, let, block iterator, symbolic parameter extent) gets its own value slot,
// each use is resolved to the slot of the definition in scope, and each buffer to the BufferSlot
// of its parameter or allocation, so that running needs no lookups.
#include "program.h"

#include <fmt/format.h>

#include <unordered_map>

#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/functor.h"

namespace tirtune::interp {

class Compiler : public ExprFunctor<const ExprCode*>, public StmtFunctor<const StmtCode*> {
 public:
  explicit Compiler(Program* program) : p_(program) {}

  void CompileFunction(const PrimFunc& func) {
    // Extents may use variables that only a later parameter defines, so all parameters define
    // their variables before any extent is compiled.
    for (const Buffer& param : func->params) p_->params_.push_back(DefineParam(param));
    for (size_t i = 0; i < func->params.size(); ++i) {
      const Buffer& param = func->params[i];
      ParamBinding& binding = p_->params_[i];
      for (const Expr& e : param->shape) binding.shape.push_back(VisitExpr(e));
      for (const Expr& e : param->strides) binding.strides.push_back(VisitExpr(e));
    }
    if (!func->body.defined()) {
      throw InterpError(fmt::format("function {} has no body", func->name));
    }
    p_->body_ = VisitStmt(func->body);
  }

  using ExprFunctor<const ExprCode*>::VisitExpr;
  using StmtFunctor<const StmtCode*>::VisitStmt;

 private:
  // ---- Scopes. ----

  Scalar* DefineVar(const Var& v) {
    NumClassOf(v.dtype());
    Scalar* slot = p_->arena_.Allocate(v.dtype().lanes());
    auto [it, inserted] = vars_.try_emplace(v.get(), slot);
    shadowed_vars_.push_back(inserted ? nullptr : it->second);
    it->second = slot;
    return slot;
  }

  void UndefineVar(const Var& v) {
    Scalar* outer = shadowed_vars_.back();
    shadowed_vars_.pop_back();
    if (outer == nullptr) {
      vars_.erase(v.get());
    } else {
      vars_[v.get()] = outer;
    }
  }

  // Buffers allocated inside the function are scoped like variables.
  BufferSlot* DefineBuffer(const Buffer& b) {
    BufferSlot* slot = NewSlot(b);
    auto [it, inserted] = buffers_.try_emplace(b.get(), slot);
    if (!inserted) {
      throw InterpError(fmt::format(
          "buffer {} is allocated while it is a parameter or already allocated", b->name));
    }
    return slot;
  }

  void UndefineBuffer(const Buffer& b) { buffers_.erase(b.get()); }

  BufferSlot* LookupBuffer(const Buffer& b) {
    auto it = buffers_.find(b.get());
    if (it == buffers_.end()) {
      throw InterpError(fmt::format(
          "buffer {} is used but is neither a parameter nor allocated in an enclosing scope",
          b->name));
    }
    return it->second;
  }

  BufferSlot* NewSlot(const Buffer& b) {
    auto slot = std::make_unique<BufferSlot>();
    slot->ir = b.get();
    slot->kind = ElemKindOf(b->dtype);
    if (!b->strides.empty() && b->strides.size() != b->shape.size()) {
      throw InterpError(fmt::format("buffer {} has {} strides for {} dimensions", b->name,
                                    b->strides.size(), b->shape.size()));
    }
    slot->shape.assign(b->shape.size(), 0);
    slot->strides.assign(b->shape.size(), 0);
    p_->buffers_.push_back(std::move(slot));
    return p_->buffers_.back().get();
  }

  // A parameter: its lone-variable extents define those variables for the whole body.
  ParamBinding DefineParam(const Buffer& b) {
    ParamBinding binding;
    binding.slot = NewSlot(b);
    buffers_.emplace(b.get(), binding.slot);
    for (const Expr& e : b->shape) {
      Scalar* var_slot = nullptr;
      if (const auto* v = e.as<VarNode>(); v != nullptr && !vars_.count(v)) {
        var_slot = p_->arena_.Allocate(1);
        vars_.emplace(v, var_slot);
      }
      binding.dim_vars.push_back(var_slot);
    }
    return binding;
  }

  // An allocated buffer's layout: folded now when constant, else evaluated per allocation.
  BufferSlot* DefineAllocated(const Buffer& b) {
    std::vector<const ExprCode*> shape, strides;
    bool constant = true;
    for (const Expr& e : b->shape) {
      shape.push_back(VisitExpr(e));
      constant = constant && e.as<IntImmNode>() != nullptr;
    }
    for (const Expr& e : b->strides) {
      strides.push_back(VisitExpr(e));
      constant = constant && e.as<IntImmNode>() != nullptr;
    }
    BufferSlot* slot = DefineBuffer(b);
    slot->shape_code = std::move(shape);
    slot->stride_code = std::move(strides);
    slot->constant_layout = constant;
    if (constant) {
      for (size_t d = 0; d < b->shape.size(); ++d) {
        slot->shape[d] = *AsConstInt(b->shape[d]);
        if (slot->shape[d] < 0) {
          throw InterpError(
              fmt::format("buffer {} has negative extent {}", b->name, slot->shape[d]));
        }
      }
      if (b->strides.empty()) {
        slot->strides = CompactStrides(slot->shape);
      } else {
        for (size_t d = 0; d < b->strides.size(); ++d)
          slot->strides[d] = *AsConstInt(b->strides[d]);
      }
      slot->capacity = RequiredCapacity(slot->shape, slot->strides);
    }
    return slot;
  }

  const ExprCode* Keep(ExprCodePtr code) {
    p_->exprs_.push_back(std::move(code));
    return p_->exprs_.back().get();
  }

  const StmtCode* Keep(StmtCodePtr code) {
    p_->stmts_.push_back(std::move(code));
    return p_->stmts_.back().get();
  }

  std::vector<const ExprCode*> VisitExprs(const std::vector<Expr>& exprs) {
    std::vector<const ExprCode*> out;
    out.reserve(exprs.size());
    for (const Expr& e : exprs) out.push_back(VisitExpr(e));
    return out;
  }

  ScalarArena* arena() { return &p_->arena_; }

  // ---- Expressions. ----

  const ExprCode* VisitExpr_(const IntImmNode* op) override {
    NumClassOf(op->dtype);
    Scalar* where = arena()->Allocate(1);
    *where = FromInt(op->value, op->dtype);
    return Keep(MakeInPlaceCode(op->dtype, where));
  }

  const ExprCode* VisitExpr_(const FloatImmNode* op) override {
    NumClassOf(op->dtype);
    Scalar* where = arena()->Allocate(1);
    where->f = RoundToFloatType(op->value, op->dtype);
    return Keep(MakeInPlaceCode(op->dtype, where));
  }

  const ExprCode* VisitExpr_(const StringImmNode* op) override {
    throw InterpError(
        fmt::format("the string \"{}\" is not a value the interpreter can compute", op->value));
  }

  const ExprCode* VisitExpr_(const VarNode* op) override {
    auto it = vars_.find(op);
    if (it == vars_.end()) {
      throw InterpError(
          fmt::format("variable {} is used outside the scope that defines it", op->name));
    }
    return Keep(MakeInPlaceCode(op->dtype, it->second));
  }

  const ExprCode* Binary(const ExprNode* op) {
    const ExprCode* a = VisitExpr(BinaryA(op));
    const ExprCode* b = VisitExpr(BinaryB(op));
    return Keep(MakeBinaryCode(op->kind(), op->dtype, a, b, arena()));
  }
  const ExprCode* VisitExpr_(const AddNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const SubNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const MulNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const DivNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const FloorDivNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const FloorModNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const MinNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const MaxNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const EQNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const NENode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const LTNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const LENode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const GTNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const GENode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const AndNode* op) override { return Binary(op); }
  const ExprCode* VisitExpr_(const OrNode* op) override { return Binary(op); }

  const ExprCode* VisitExpr_(const NotNode* op) override {
    return Keep(MakeNotCode(VisitExpr(op->a), arena()));
  }

  const ExprCode* VisitExpr_(const SelectNode* op) override {
    const ExprCode* cond = VisitExpr(op->cond);
    const ExprCode* t = VisitExpr(op->t);
    const ExprCode* f = VisitExpr(op->f);
    return Keep(MakeSelectCode(cond, t, f, arena()));
  }

  const ExprCode* VisitExpr_(const CastNode* op) override {
    return Keep(MakeCastCode(op->dtype, VisitExpr(op->value), arena()));
  }

  const ExprCode* VisitExpr_(const CallNode* op) override {
    if (op->op == Intrinsic::kWarpShuffleXor) {
      return Keep(MakeShuffleCode(shuffles_++, VisitExpr(op->args[0]),
                                  *AsConstInt(op->args[1]), arena()));
    }
    return Keep(MakeCallCode(op->op, op->dtype, VisitExprs(op->args), arena()));
  }

  const ExprCode* VisitExpr_(const BufferLoadNode* op) override {
    BufferSlot* slot = LookupBuffer(op->buffer);
    return Keep(MakeLoadCode(op->dtype, slot, VisitExprs(op->indices), arena()));
  }

  const ExprCode* VisitExpr_(const RampNode* op) override {
    const ExprCode* base = VisitExpr(op->base);
    const ExprCode* stride = VisitExpr(op->stride);
    return Keep(MakeRampCode(base, stride, op->lanes, arena()));
  }

  const ExprCode* VisitExpr_(const BroadcastNode* op) override {
    return Keep(MakeBroadcastCode(VisitExpr(op->value), op->lanes, arena()));
  }

  const ExprCode* VisitExpr_(const LetNode* op) override {
    const ExprCode* value = VisitExpr(op->value);
    Scalar* slot = DefineVar(op->var);
    const ExprCode* body = VisitExpr(op->body);
    UndefineVar(op->var);
    return Keep(MakeLetCode(slot, value, body));
  }

  // ---- Statements. ----

  const StmtCode* VisitStmt_(const ForNode* op) override {
    const ExprCode* min = VisitExpr(op->min);
    const ExprCode* extent = VisitExpr(op->extent);
    Scalar* slot = DefineVar(op->loop_var);
    const StmtCode* body = VisitStmt(op->body);
    UndefineVar(op->loop_var);
    return Keep(MakeForCode(slot, min, extent, body));
  }

  const StmtCode* VisitStmt_(const BlockNode* op) override {
    if (!op->iter_vars.empty()) {
      throw InterpError(
          fmt::format("block \"{}\" has iterators but no BlockRealize to bind them", op->name));
    }
    return CompileBlock(op, {}, nullptr);
  }

  const StmtCode* VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    std::vector<IterCode> iters;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      IterCode it;
      it.var = iv.var.get();
      it.binding = VisitExpr(op->iter_values[i]);
      it.dom_min = VisitExpr(iv.dom.min);
      it.dom_extent = VisitExpr(iv.dom.extent);
      it.is_reduce = iv.kind == IterKind::kReduce;
      const int64_t* lo = AsConstInt(iv.dom.min);
      const int64_t* extent = AsConstInt(iv.dom.extent);
      if (lo != nullptr && extent != nullptr) {
        it.constant_domain = true;
        it.dom_lo = *lo;
        it.dom_size = *extent;
      }
      if (!iv.var.dtype().is_int() || !iv.var.dtype().is_scalar()) {
        throw InterpError(fmt::format("block \"{}\": iterator {} has type {}, not an integer",
                                      block->name, iv.var->name, iv.var.dtype().str()));
      }
      iters.push_back(it);
    }
    const ExprCode* predicate = IsConstInt(op->predicate, 1) ? nullptr : VisitExpr(op->predicate);
    return CompileBlock(block, std::move(iters), predicate);
  }

  // The block's own scope: iterators, then allocated buffers, then init and body.
  const StmtCode* CompileBlock(const BlockNode* block, std::vector<IterCode> iters,
                               const ExprCode* predicate) {
    BlockRealizeParts parts;
    parts.name = &block->name;
    parts.predicate = predicate;
    for (size_t i = 0; i < iters.size(); ++i) iters[i].slot = DefineVar(block->iter_vars[i].var);
    parts.iters = std::move(iters);
    for (const Buffer& b : block->alloc_buffers) parts.alloc_buffers.push_back(DefineAllocated(b));
    if (block->init.defined()) parts.init = VisitStmt(block->init);
    parts.body = VisitStmt(block->body);
    for (auto it = block->alloc_buffers.rbegin(); it != block->alloc_buffers.rend(); ++it) {
      UndefineBuffer(*it);
    }
    for (auto it = block->iter_vars.rbegin(); it != block->iter_vars.rend(); ++it) {
      UndefineVar(it->var);
    }
    return Keep(MakeBlockRealizeCode(std::move(parts)));
  }

  const StmtCode* VisitStmt_(const BufferStoreNode* op) override {
    BufferSlot* slot = LookupBuffer(op->buffer);
    const ExprCode* value = VisitExpr(op->value);
    return Keep(MakeStoreCode(slot, value, VisitExprs(op->indices)));
  }

  const StmtCode* VisitStmt_(const SeqStmtNode* op) override {
    std::vector<const StmtCode*> seq;
    for (const Stmt& s : op->seq) seq.push_back(VisitStmt(s));
    return Keep(MakeSeqCode(std::move(seq)));
  }

  const StmtCode* VisitStmt_(const IfThenElseNode* op) override {
    const ExprCode* cond = VisitExpr(op->condition);
    const StmtCode* then_case = VisitStmt(op->then_case);
    const StmtCode* else_case = op->else_case.defined() ? VisitStmt(op->else_case) : nullptr;
    return Keep(MakeIfCode(cond, then_case, else_case));
  }

  const StmtCode* VisitStmt_(const EvaluateNode* op) override {
    if (!op->value.defined() || op->value.as<StringImmNode>() != nullptr) {
      return Keep(MakeSeqCode({}));
    }
    return Keep(MakeEvaluateCode(VisitExpr(op->value)));
  }

  const StmtCode* VisitStmt_(const BarrierNode* /*op*/) override {
    return Keep(MakeBarrierCode(barriers_++));
  }

  const StmtCode* VisitStmt_(const LetStmtNode* op) override {
    const ExprCode* value = VisitExpr(op->value);
    Scalar* slot = DefineVar(op->var);
    const StmtCode* body = VisitStmt(op->body);
    UndefineVar(op->var);
    return Keep(MakeLetStmtCode(slot, value, body));
  }

  const StmtCode* VisitStmt_(const AllocateNode* op) override {
    BufferSlot* slot = DefineAllocated(op->buffer);
    const StmtCode* body = VisitStmt(op->body);
    UndefineBuffer(op->buffer);
    return Keep(MakeAllocateCode(slot, body));
  }

  Program* p_;
  std::unordered_map<const VarNode*, Scalar*> vars_;
  std::vector<Scalar*> shadowed_vars_;  // per live definition: the outer slot, or null
  int barriers_ = 0;                    // barriers translated so far: the next one's number
  int shuffles_ = 0;                    // and warp shuffles
  std::unordered_map<const BufferNode*, BufferSlot*> buffers_;
};

Program::Program(const PrimFunc& func) { Compiler(this).CompileFunction(func); }

}  // namespace tirtune::interp
