// The index of ScheduleState (rebuilt lazily after each replacement) and copy-on-write Replace.
#include "tirtune/schedule/state.h"

#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

// Records every statement's parent, every loop and every block realize.
class Indexer : public StmtVisitor {
 public:
  std::unordered_map<std::string, const BlockRealizeNode*>* blocks;
  std::unordered_map<const VarNode*, const ForNode*>* loops;
  std::unordered_map<const StmtNode*, const StmtNode*>* parent;
  std::vector<const BlockRealizeNode*>* order;

  void VisitStmt(const Stmt& s) override {
    (*parent)[s.get()] = stack_.empty() ? nullptr : stack_.back();
    stack_.push_back(s.get());
    StmtVisitor::VisitStmt(s);
    stack_.pop_back();
  }
  // Expressions hold no statements: skip them.
  void VisitExpr(const Expr&) override {}
  void VisitStmt_(const ForNode* op) override {
    (*loops)[op->loop_var.get()] = op;
    VisitStmt(op->body);
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    (*blocks)[op->block->name] = op;
    order->push_back(op);
    // The Block node is transparent: children of the block have the realize as parent.
    const BlockNode* b = op->block.get();
    if (b->init.defined()) VisitStmt(b->init);
    VisitStmt(b->body);
  }

 private:
  std::vector<const StmtNode*> stack_;
};

class Replacer : public StmtMutator {
 public:
  explicit Replacer(const std::unordered_map<const StmtNode*, Stmt>& r) : r_(r) {}
  Stmt VisitStmt(const Stmt& s) override {
    auto it = r_.find(s.get());
    if (it != r_.end()) return it->second;
    return StmtMutator::VisitStmt(s);
  }
  // Statements never hide inside expressions, so expressions need no walk.
  Expr VisitExpr(const Expr& e) override { return e; }

 private:
  const std::unordered_map<const StmtNode*, Stmt>& r_;
};

}  // namespace

ScheduleState::ScheduleState(PrimFunc func) : func_(std::move(func)) {}

void ScheduleState::Reindex() const {
  if (indexed_) return;
  blocks_.clear();
  loops_.clear();
  parent_.clear();
  block_order_.clear();
  loop_names_.clear();
  Indexer indexer;
  indexer.blocks = &blocks_;
  indexer.loops = &loops_;
  indexer.parent = &parent_;
  indexer.order = &block_order_;
  indexer.VisitStmt(func_->body);
  for (const auto& [var, loop] : loops_) loop_names_.insert(var->name);
  indexed_ = true;
}

Var ScheduleState::FreshLoopVar(const std::string& hint, DataType dtype) const {
  Reindex();
  std::string name = hint;
  for (int k = 1; loop_names_.count(name); ++k) name = hint + "_" + std::to_string(k);
  loop_names_.insert(name);
  return Var(name, dtype);
}

std::string ScheduleState::FreshBlockName(const std::string& hint) const {
  std::string name = hint;
  for (int k = 1; FindBlock(name) != nullptr; ++k) name = hint + "_" + std::to_string(k);
  return name;
}

const BlockRealizeNode* ScheduleState::FindBlock(const std::string& name) const {
  Reindex();
  auto it = blocks_.find(name);
  return it == blocks_.end() ? nullptr : it->second;
}

const ForNode* ScheduleState::FindLoop(const VarNode* loop_var) const {
  Reindex();
  auto it = loops_.find(loop_var);
  return it == loops_.end() ? nullptr : it->second;
}

const StmtNode* ScheduleState::Parent(const StmtNode* node) const {
  Reindex();
  auto it = parent_.find(node);
  return it == parent_.end() ? nullptr : it->second;
}

std::vector<const StmtNode*> ScheduleState::Ancestors(const StmtNode* node) const {
  std::vector<const StmtNode*> out;
  for (const StmtNode* p = Parent(node); p != nullptr; p = Parent(p)) {
    if (p->kind() == NodeKind::kFor || p->kind() == NodeKind::kBlockRealize) out.push_back(p);
  }
  return {out.rbegin(), out.rend()};
}

std::vector<const ForNode*> ScheduleState::LoopsAbove(const StmtNode* node) const {
  std::vector<const ForNode*> out;
  for (const StmtNode* p = Parent(node); p != nullptr; p = Parent(p)) {
    if (p->kind() == NodeKind::kBlockRealize) break;
    if (p->kind() == NodeKind::kFor) out.push_back(static_cast<const ForNode*>(p));
  }
  return {out.rbegin(), out.rend()};
}

const BlockRealizeNode* ScheduleState::ScopeBlock(const StmtNode* node) const {
  for (const StmtNode* p = Parent(node); p != nullptr; p = Parent(p)) {
    if (p->kind() == NodeKind::kBlockRealize) return static_cast<const BlockRealizeNode*>(p);
  }
  return nullptr;
}

std::vector<const BlockRealizeNode*> ScheduleState::ChildBlocks(const StmtNode* scope) const {
  Reindex();
  std::vector<const BlockRealizeNode*> out;
  for (const BlockRealizeNode* b : block_order_) {
    if (b == scope) continue;
    // The nearest block above b must be `scope` (or, for a loop scope, b must sit under the loop
    // with no block in between).
    for (const StmtNode* p = Parent(b); p != nullptr; p = Parent(p)) {
      if (p == scope) {
        out.push_back(b);
        break;
      }
      if (p->kind() == NodeKind::kBlockRealize) break;
    }
  }
  return out;
}

std::vector<const BlockRealizeNode*> ScheduleState::AllBlocks() const {
  Reindex();
  return block_order_;
}

void ScheduleState::Replace(const std::unordered_map<const StmtNode*, Stmt>& replacements) {
  Replacer replacer(replacements);
  func_ = func_.WithBody(replacer.VisitStmt(func_->body));
  indexed_ = false;
}

void ScheduleState::SetFunc(PrimFunc func) {
  func_ = std::move(func);
  indexed_ = false;
}

}  // namespace tirtune
