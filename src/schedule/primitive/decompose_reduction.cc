// decompose_reduction: moves a reduction block's init into a block of its own, `<name>_init`,
// placed just before a given loop above the block; the block keeps only its update.
//
// Preconditions:
//  1. the block has an init and at least one reduction iterator;
//  2. the loop is one of the loops between the block and its scope block;
//  3. no loop above the given loop drives a reduction iterator: otherwise the separate init would
//     run again on every iteration of that loop, resetting partial sums.
// The init block has the block's spatial iterators (fresh variables, same domains and bindings).
// It sits under copies `<loop>_init` of the loops, from the given loop down, that those bindings
// use; loops they do not use are dropped, and so are the predicate's conjuncts over them.
//
// Before:                                   After DecomposeReduction(C, i):
//   for i in range(16):                       for i_init in range(16):
//     for j in range(12):                       for j_init in range(12):
//       for k in range(8):                        with block("C_init"):
//         with block("C"):                          vi = axis.spatial(16, i_init)
//           vi, vj = spatial; vk = reduce           vj = axis.spatial(12, j_init)
//           with init():                            C[vi, vj] = 0.0
//             C[vi, vj] = 0.0                 for i in range(16):
//           C[vi, vj] = C[vi, vj] + ...         for j in range(12):
//                                                 for k in range(8):
//                                                   with block("C"):   # no init
//                                                     C[vi, vj] = C[vi, vj] + ...
#include <fmt/format.h>

#include <algorithm>

#include "block_checks.h"
#include "read_regions.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

constexpr const char* kPrimitive = "decompose_reduction";

class LoopAboveReductionError : public ScheduleError {
 public:
  LoopAboveReductionError(const ForNode* loop, const ForNode* outer, const BlockRealizeNode* block,
                          std::string iter)
      : loop_(loop), outer_(outer), block_(block), iter_(std::move(iter)) {}
  const char* Kind() const override { return "LoopAboveReductionError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot put the init of block '{}' before loop '{}': loop '{}' above it drives reduction "
        "iterator '{}', so the init would run again on each of its iterations; pick loop '{}' or "
        "a loop above it",
        block_->block->name, loop_->loop_var->name, outer_->loop_var->name, iter_,
        outer_->loop_var->name);
  }
  std::vector<const Object*> Locations() const override { return {loop_, outer_, block_}; }

 private:
  HeldNode<ForNode> loop_;
  HeldNode<ForNode> outer_;
  HeldNode<BlockRealizeNode> block_;
  std::string iter_;
};

bool UsesAny(const Expr& e, const std::vector<const VarNode*>& vars) {
  return UsesVar(
      e, [&](const VarNode* v) { return std::find(vars.begin(), vars.end(), v) != vars.end(); });
}

// Drops the init of one block.
class InitRemover : public StmtMutator {
 public:
  explicit InitRemover(const BlockRealizeNode* target) : target_(target) {}
  Expr VisitExpr(const Expr& e) override { return e; }
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    if (op != target_) return StmtMutator::VisitStmt_(op);
    const BlockNode* b = op->block.get();
    return MakeBlockRealize(op->iter_values, op->predicate,
                            MakeBlock(b->name, b->iter_vars, b->reads, b->writes, b->body, Stmt(),
                                      b->alloc_buffers, b->annotations));
  }

 private:
  HeldNode<BlockRealizeNode> target_;
};

}  // namespace

BlockRV Schedule::DecomposeReduction(BlockRV block_rv, LoopRV loop_rv) {
  const BlockRealizeNode* realize = Get(block_rv);
  const ForNode* loop = Get(loop_rv);
  const BlockNode* block = realize->block.get();

  // Step 1. A reduction block with an init, and a loop above it.
  if (!block->init.defined() || !HasReductionIter(block)) {
    throw SimpleScheduleError(
        "NotReductionBlockError",
        fmt::format("{} needs a reduction block with an init; block '{}' has {}", kPrimitive,
                    block->name, block->init.defined() ? "no reduction iterator" : "no init"),
        {realize});
  }
  std::vector<const ForNode*> loops = state_.LoopsAbove(realize);
  auto at = std::find(loops.begin(), loops.end(), loop);
  if (at == loops.end()) {
    throw SimpleScheduleError(
        "LoopNotAboveBlockError",
        fmt::format("{} needs a loop above block '{}' within its scope; loop '{}' is not one",
                    kPrimitive, block->name, loop->loop_var->name),
        {loop, realize});
  }

  // Step 2. No loop above `loop` drives a reduction iterator.
  for (auto outer = loops.begin(); outer != at; ++outer) {
    const VarNode* var = (*outer)->loop_var.get();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i].kind != IterKind::kReduce) continue;
      if (UsesVar(realize->iter_values[i], [var](const VarNode* v) { return v == var; })) {
        throw LoopAboveReductionError(loop, *outer, realize, block->iter_vars[i].var->name);
      }
    }
  }
  if (check_only_) return BlockRV{kPlaceholderRVId};

  // Step 3. Spatial iterators of the init block: fresh variables with the same bindings.
  std::vector<IterVar> iters;
  std::vector<Expr> bindings;
  VarMap iter_map;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind != IterKind::kSpatial) continue;
    Var fresh = iv.var.Copy();
    iters.push_back(IterVar{fresh, iv.dom, iv.kind});
    bindings.push_back(realize->iter_values[i]);
    iter_map[iv.var.get()] = fresh;
  }

  // Step 4. From the innermost loop up to `loop`, keep the loops the bindings use.
  std::vector<std::pair<const ForNode*, Var>> chosen;  // innermost first, with the copy's var
  std::vector<const VarNode*> discarded;
  VarMap loop_map;
  for (auto it = loops.end(); it != at;) {
    const ForNode* l = *--it;
    const VarNode* var = l->loop_var.get();
    bool used = std::any_of(bindings.begin(), bindings.end(), [var](const Expr& e) {
      return UsesVar(e, [var](const VarNode* v) { return v == var; });
    });
    if (used) {
      chosen.emplace_back(l, state_.FreshLoopVar(l->loop_var->name + "_init", l->loop_var.dtype()));
      loop_map[var] = chosen.back().second;
    } else {
      discarded.push_back(var);
    }
  }
  for (Expr& b : bindings) b = Substitute(b, loop_map);
  std::vector<Expr> conjuncts;
  SplitConjuncts(realize->predicate, &conjuncts);
  Expr predicate = Bool(true);
  for (const Expr& c : conjuncts) {
    if (IsConstInt(c, 1) || UsesAny(c, discarded)) continue;
    Expr kept = Substitute(c, loop_map);
    predicate = IsConstInt(predicate, 1) ? kept : MakeBinary(NodeKind::kAnd, predicate, kept);
  }

  // Step 5. The init block under its loops, then the update block without init.
  Stmt init_body = Substitute(block->init, iter_map);
  std::vector<BufferRegion> writes = SubstituteRegions(block->writes, iter_map);
  std::string name = state_.FreshBlockName(block->name + "_init");
  Block init_block =
      MakeBlock(name, iters, LoadedRegions(init_body, [](const BufferNode*) { return true; }),
                writes, init_body, Stmt(), {}, block->annotations);
  Stmt nest = MakeBlockRealize(bindings, predicate, init_block);
  for (const auto& [l, var] : chosen) {
    nest = MakeFor(var, Substitute(l->min, loop_map), Substitute(l->extent, loop_map), l->for_kind,
                   nest, l->thread_tag, l->annotations);
  }
  InitRemover remover(realize);
  state_.Replace(loop, MakeSeq({nest, remover.VisitStmt(GetStmtRef(loop))}));

  BlockRV init_rv = NewBlockRV(name);
  Record("DecomposeReduction", {block_rv.ref(), loop_rv.ref()}, nlohmann::json::object(),
         {init_rv.ref()});
  return init_rv;
}

}  // namespace tirtune
