// VerifyWellFormed: a scoped walk that tracks which variables and buffers are visible and which
// block encloses each use, recording every rule of ir/verify.h that a function breaks.
#include "tirtune/ir/verify.h"

#include <fmt/format.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

class WellFormedChecker : public StmtVisitor {
 public:
  std::vector<std::string> errors;

  void Run(const PrimFunc& func) {
    for (const Buffer& b : func->params) DefineBuffer(b, "parameter");
    VisitStmt(func->body);
  }

  using StmtVisitor::VisitExpr_;
  using StmtVisitor::VisitStmt_;

  void VisitExpr_(const VarNode* op) override {
    auto it = var_depth_.find(op);
    if (it == var_depth_.end()) {
      Error("variable '{}' is used but not defined in scope", op->name);
    } else if (it->second < block_depth_) {
      // Defined outside the innermost enclosing block: rule 3.
      Error("block '{}' uses outer variable '{}' directly; bind it through an iterator",
            block_names_.back(), op->name);
    }
  }

  void VisitExpr_(const LetNode* op) override {
    VisitExpr(op->value);
    DefineVar(op->var);
    VisitExpr(op->body);
    UndefineVar(op->var);
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    CheckBufferAccess(op->buffer, /*is_write=*/false);
    StmtVisitor::VisitExpr_(op);
  }

  void VisitStmt_(const BufferStoreNode* op) override {
    CheckBufferAccess(op->buffer, /*is_write=*/true);
    StmtVisitor::VisitStmt_(op);
  }

  void VisitStmt_(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    if (const int64_t* e = AsConstInt(op->extent); e && *e <= 0) {
      Error("loop '{}' has non-positive extent {}", op->loop_var->name, *e);
    }
    DefineVar(op->loop_var);
    VisitStmt(op->body);
    UndefineVar(op->loop_var);
  }

  void VisitStmt_(const LetStmtNode* op) override {
    VisitExpr(op->value);
    DefineVar(op->var);
    VisitStmt(op->body);
    UndefineVar(op->var);
  }

  void VisitStmt_(const AllocateNode* op) override {
    DefineBuffer(op->buffer, "allocate");
    VisitStmt(op->body);
    UndefineBuffer(op->buffer);
  }

  void VisitStmt_(const BlockRealizeNode* op) override {
    for (const Expr& v : op->iter_values) VisitExpr(v);
    VisitExpr(op->predicate);
    const BlockNode* block = op->block.get();
    if (!block_names_seen_.insert(block->name).second) {
      Error("block name '{}' is used twice", block->name);
    }
    ++block_depth_;
    block_names_.push_back(block->name);
    for (const IterVar& iv : block->iter_vars) {
      VisitExpr(iv.dom.min);
      VisitExpr(iv.dom.extent);
      DefineVar(iv.var);
    }
    for (const Buffer& b : block->alloc_buffers) DefineBuffer(b, "alloc_buffer");
    BlockAccess access;
    for (const BufferRegion& r : block->reads) {
      CheckRegionBuffer(r, block->name);
      access.readable.insert(r.buffer.get());
    }
    for (const BufferRegion& r : block->writes) {
      CheckRegionBuffer(r, block->name);
      access.readable.insert(r.buffer.get());
      access.writable.insert(r.buffer.get());
    }
    for (const Buffer& b : block->alloc_buffers) {
      access.readable.insert(b.get());
      access.writable.insert(b.get());
    }
    accesses_.push_back(std::move(access));
    if (block->init.defined()) VisitStmt(block->init);
    VisitStmt(block->body);
    accesses_.pop_back();
    for (const Buffer& b : block->alloc_buffers) UndefineBuffer(b);
    for (const IterVar& iv : block->iter_vars) UndefineVar(iv.var);
    block_names_.pop_back();
    --block_depth_;
  }

  void VisitStmt_(const BlockNode* op) override {
    Error("block '{}' appears without a block realize", op->name);
  }

 private:
  struct BlockAccess {
    std::unordered_set<const Object*> readable, writable;
  };

  template <typename... Args>
  void Error(fmt::format_string<Args...> f, Args&&... args) {
    errors.push_back(fmt::format(f, std::forward<Args>(args)...));
  }

  void DefineVar(const Var& v) {
    if (!var_depth_.emplace(v.get(), block_depth_).second) {
      Error("variable '{}' is defined twice", v->name);
    }
  }
  void UndefineVar(const Var& v) { var_depth_.erase(v.get()); }

  void DefineBuffer(const Buffer& b, const char* how) {
    if (!buffers_.insert(b.get()).second) {
      Error("buffer '{}' is defined twice (again as {})", b->name, how);
    }
    for (const Expr& e : b->shape) VisitExpr(e);
  }
  void UndefineBuffer(const Buffer& b) { buffers_.erase(b.get()); }

  void CheckRegionBuffer(const BufferRegion& r, const std::string& block) {
    if (!buffers_.count(r.buffer.get())) {
      Error("block '{}' declares a region of buffer '{}', which is not in scope", block,
            r.buffer->name);
    }
    if (static_cast<int>(r.region.size()) != r.buffer->ndim()) {
      Error("block '{}' declares a {}-dimensional region of {}-dimensional buffer '{}'", block,
            r.region.size(), r.buffer->ndim(), r.buffer->name);
    }
    for (const Range& range : r.region) {
      VisitExpr(range.min);
      VisitExpr(range.extent);
    }
  }

  void CheckBufferAccess(const Buffer& b, bool is_write) {
    if (!buffers_.count(b.get())) {
      Error("buffer '{}' is used but not defined in scope", b->name);
      return;
    }
    if (accesses_.empty()) return;
    const BlockAccess& access = accesses_.back();
    if (is_write && !access.writable.count(b.get())) {
      Error("block '{}' writes buffer '{}' without declaring it in writes()", block_names_.back(),
            b->name);
    } else if (!is_write && !access.readable.count(b.get())) {
      Error("block '{}' reads buffer '{}' without declaring it in reads()", block_names_.back(),
            b->name);
    }
  }

  std::unordered_map<const Object*, int> var_depth_;
  std::unordered_set<const Object*> buffers_;
  std::vector<BlockAccess> accesses_;
  std::vector<std::string> block_names_;
  std::set<std::string> block_names_seen_;
  int block_depth_ = 0;
};

}  // namespace

std::vector<std::string> VerifyWellFormed(const PrimFunc& func) {
  WellFormedChecker checker;
  checker.Run(func);
  return std::move(checker.errors);
}

}  // namespace tirtune
