// ScheduleState: the function being scheduled plus an index that finds blocks (by name) and
// loops (by loop variable) and their ancestors. Blocks and loops keep their identity across
// transformations: a block is its name (unique in the function), a loop is its loop variable,
// so a handle taken before a transformation still finds the rebuilt node after it.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tirtune/ir/function.h"

namespace tirtune {

class ScheduleState {
 public:
  explicit ScheduleState(PrimFunc func);

  const PrimFunc& func() const { return func_; }

  /// The realize of the block named `name`, or null.
  const BlockRealizeNode* FindBlock(const std::string& name) const;
  /// The loop whose variable is `loop_var`, or null.
  const ForNode* FindLoop(const VarNode* loop_var) const;
  /// The statement directly containing `node` (a For, BlockRealize's block body chain, Seq,
  /// IfThenElse, ...), or null for the function body.
  const StmtNode* Parent(const StmtNode* node) const;
  /// The loops and block realizes enclosing `node`, outermost first (not including `node`).
  std::vector<const StmtNode*> Ancestors(const StmtNode* node) const;
  /// The loops between `node` and its nearest enclosing block, outermost first.
  std::vector<const ForNode*> LoopsAbove(const StmtNode* node) const;
  /// The realize of the nearest block enclosing `node` (its scope block), or null at the root.
  const BlockRealizeNode* ScopeBlock(const StmtNode* node) const;
  /// Block realizes directly under `scope` (not nested inside another block), in program order.
  std::vector<const BlockRealizeNode*> ChildBlocks(const StmtNode* scope) const;
  /// Every block realize in program order.
  std::vector<const BlockRealizeNode*> AllBlocks() const;

  /// A new loop variable named `hint`, or `hint_1`, `hint_2`, ... when a loop of the function (or
  /// one created earlier by the same transformation) already has that name. Unique loop names
  /// keep printing readable and the simplifier's term order independent of object addresses.
  Var FreshLoopVar(const std::string& hint, DataType dtype) const;
  /// `hint` when no block of the function has that name, else the first free `hint_1`,
  /// `hint_2`, ... (unlike loop names, nothing is reserved: a block takes its name when it is
  /// added to the function).
  std::string FreshBlockName(const std::string& hint) const;

  /// Replaces the statements in `replacements` (keyed by node identity) and rebuilds their
  /// ancestors; every other node stays shared.
  void Replace(const std::unordered_map<const StmtNode*, Stmt>& replacements);
  void Replace(const StmtNode* old, Stmt replacement) { Replace({{old, std::move(replacement)}}); }
  /// Replaces the whole function (for primitives that rewrite buffers across the function).
  void SetFunc(PrimFunc func);

 private:
  void Reindex() const;

  PrimFunc func_;
  mutable bool indexed_ = false;
  mutable std::unordered_map<std::string, const BlockRealizeNode*> blocks_;
  mutable std::unordered_map<const VarNode*, const ForNode*> loops_;
  mutable std::unordered_map<const StmtNode*, const StmtNode*> parent_;
  mutable std::vector<const BlockRealizeNode*> block_order_;
  mutable std::unordered_set<std::string> loop_names_;  // of the indexed function and pending ones
};

}  // namespace tirtune
