// reorder: permutes loops of one single-child chain of nested loops.
//
// Preconditions:
//  1. the loops are distinct;
//  2. they lie on one chain in which, from the outermost to the innermost of them, each loop's
//     body is exactly the next loop;
//  3. no loop's min or extent uses the variable of another loop of the chain;
//  4. no loop that changes position drives both a spatial and a reduction iterator of a block
//     under it (a fused spatial-and-reduction loop): reordering it could visit a later element of
//     the reduction before the first one, where the init runs.
// Loops of the chain that are not listed keep their positions; the listed loops take the listed
// order in the positions they occupied.
//
// Before:                  After Reorder([k, i]):
//   for i in range(4):       for k in range(16):
//     for j in range(8):       for j in range(8):
//       for k in range(16):      for i in range(4):
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "loop_checks.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

// Throws when `loop` drives both a spatial and a reduction iterator of a block under it.
void CheckNotMixedIterType(const ForNode* loop) {
  const VarNode* var = loop->loop_var.get();
  auto is_var = [var](const VarNode* v) { return v == var; };
  PreOrderVisit(loop->body, [&](const Object* node) {
    const auto* realize = node->as<BlockRealizeNode>();
    if (realize == nullptr) return node->kind() >= NodeKind::kFor;
    bool spatial = false, reduce = false;
    const BlockNode* block = realize->block.get();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (!UsesVar(realize->iter_values[i], is_var)) continue;
      (block->iter_vars[i].kind == IterKind::kReduce ? reduce : spatial) = true;
    }
    if (spatial && reduce) {
      throw SimpleScheduleError(
          "MixedIterTypeLoopError",
          fmt::format("reorder cannot move loop '{}': it drives both spatial and reduction "
                      "iterators of block '{}', so a new order could accumulate before the init",
                      loop->loop_var->name, block->name),
          {loop, realize});
    }
    return false;
  });
}

}  // namespace

void Schedule::Reorder(const std::vector<LoopRV>& order) {
  std::vector<const ForNode*> loops;
  std::unordered_set<const ForNode*> wanted;
  for (LoopRV rv : order) {
    loops.push_back(Get(rv));
    if (!wanted.insert(loops.back()).second) {
      throw SimpleScheduleError(
          "DuplicateLoopError",
          fmt::format("reorder lists loop '{}' twice", loops.back()->loop_var->name),
          {loops.back()});
    }
  }
  if (loops.empty()) return;

  // Step 1: the outermost listed loop is the one none of the others encloses.
  const ForNode* outer = nullptr;
  for (const ForNode* l : loops) {
    bool enclosed = false;
    for (const StmtNode* a : state_.Ancestors(l)) {
      // Blocks are among the ancestors: only loops are looked up (a cast of a block to a loop,
      // even unused, is undefined behaviour; the trace fuzzer found it).
      if (const auto* loop = a->as<ForNode>()) enclosed |= wanted.count(loop) > 0;
    }
    if (!enclosed) {
      if (outer != nullptr) {
        throw SimpleScheduleError("LoopsNotInOneChainError",
                                  fmt::format("reorder needs loops nested in one chain; loops "
                                              "'{}' and '{}' are on different branches",
                                              outer->loop_var->name, l->loop_var->name),
                                  {outer, l});
      }
      outer = l;
    }
  }
  // Step 2: walk down the single-child chain until every listed loop is seen.
  std::vector<const ForNode*> chain;
  size_t seen = 0;
  for (const ForNode* l = outer; l != nullptr; l = OnlyChildLoop(l)) {
    chain.push_back(l);
    seen += wanted.count(l);
    if (seen == wanted.size()) break;
  }
  if (seen != wanted.size()) {
    throw SimpleScheduleError(
        "NotOnlyChildError",
        fmt::format("reorder needs a chain in which each loop is the only child of the previous "
                    "one; below loop '{}' the chain branches or ends before reaching every "
                    "listed loop",
                    chain.back()->loop_var->name),
        {chain.back()});
  }
  // Step 3: extents and mins must not depend on other chain loops.
  std::unordered_set<const VarNode*> chain_vars;
  for (const ForNode* l : chain) chain_vars.insert(l->loop_var.get());
  auto in_chain = [&](const VarNode* v) { return chain_vars.count(v) > 0; };
  for (const ForNode* l : chain) {
    if (UsesVar(l->min, in_chain) || UsesVar(l->extent, in_chain)) {
      throw SimpleScheduleError(
          "DependentLoopError",
          fmt::format("loop '{}' has a range that depends on another loop of the chain",
                      l->loop_var->name),
          {l});
    }
  }
  // Step 4: the listed loops in the listed order; a loop that moves must not be mixed.
  std::vector<const ForNode*> placed = chain;
  size_t next = 0;
  for (const ForNode*& slot : placed) {
    if (wanted.count(slot)) slot = loops[next++];
  }
  for (size_t k = 0; k < chain.size(); ++k) {
    if (placed[k] != chain[k]) CheckNotMixedIterType(chain[k]);
  }
  if (check_only_) return;

  // Step 5: rebuild the chain innermost first.
  Stmt body = chain.back()->body;
  for (size_t k = placed.size(); k-- > 0;) body = WithBody(placed[k], body);
  state_.Replace(chain.front(), body);

  std::vector<InstInput> inputs;
  for (LoopRV rv : order) inputs.emplace_back(rv.ref());
  Record("Reorder", std::move(inputs), nlohmann::json::object(), {});
}

}  // namespace tirtune
