// rfactor: splits a reduction in two. The new block `<name>_rf` computes partial results into a
// new buffer `<buf>_rf` that has one more dimension (at `factor_axis`), indexed by the loop: the
// loop's iterations become independent (its iterator is spatial there, so it can be
// parallelized or vectorized). The original block then reduces over that dimension.
//
// Preconditions:
//  1. exactly one block is under the loop, and it is a reduction: it has an init, reduction
//     iterators, one write buffer whose indices use spatial iterators only, an init storing the
//     reducer's identity and an update `C[I] = op(C[I], rhs)` (or `op(rhs, C[I])`) with op one
//     of +, *, min, max and no other load of C;
//  2. the loop is used by the bindings of reduction iterators and of no spatial iterator, and no
//     loop is used by both kinds;
//  3. the block is the only block under the outermost of its loops (the partial-result nest
//     and the final reduction become two nests there);
//  4. the block's predicate does not use loops of the reduction (a partial result some loop
//     value never initializes would be added in);
//  5. -(ndim + 1) <= factor_axis <= ndim, for the ndim of the written buffer (a negative axis
//     counts from the end).
// Loops that reduction iterators use are dropped around the final reduction, except the
// factored loop; the others are copied with fresh variables.
//
// Before:                                   After RFactor(k1, factor_axis=0):
//   for i, k0, k1 in (16, 2, 4):              for i, k0, k1 in (16, 2, 4):
//     with block("C"):                          with block("C_rf"):
//       vi = axis.spatial(16, i)                  vk1 = axis.spatial(4, k1)
//       vk = axis.reduce(8, k0 * 4 + k1)          vi = axis.spatial(16, i)
//       with init(): C[vi] = 0.0                  vk0 = axis.reduce(2, k0)
//       C[vi] = C[vi] + A[vi, vk]                 with init(): C_rf[vk1, vi] = 0.0
//                                                 C_rf[vk1, vi] = C_rf[vk1, vi] + A[vi, vk0*4+vk1]
//                                             for i_1, k1_1 in (16, 4):
//                                               with block("C"):
//                                                 vk1 = axis.reduce(4, k1_1)
//                                                 vi = axis.spatial(16, i_1)
//                                                 with init(): C[vi] = 0.0
//                                                 C[vi] = C[vi] + C_rf[vk1, vi]
#include <fmt/format.h>

#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "block_checks.h"
#include "read_regions.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/reduction.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

using Reduction = BlockReduction;

// Step 1: the block's reduction, or NotReductionBlockError / UnsupportedReducerError.
Reduction MatchReduction(const BlockRealizeNode* realize) {
  const BlockNode* block = realize->block.get();
  ReductionMismatch kind;
  std::string why;
  std::optional<Reduction> r = MatchBlockReduction(block, &kind, &why);
  if (r) return *r;
  if (kind == ReductionMismatch::kNotReduction) {
    throw SimpleScheduleError(
        "NotReductionBlockError",
        fmt::format("rfactor of block '{}', which is not a reduction: {}", block->name, why),
        {realize}, "rfactor applies to a block `C[I] = op(C[I], rhs)` with an init");
  }
  throw SimpleScheduleError(
      "UnsupportedReducerError", fmt::format("rfactor of block '{}': {}", block->name, why),
      {realize},
      "supported reducers are sum (init 0), product (init 1), min (init the "
      "largest value) and max (init the smallest value)");
}

bool UsesAny(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  return UsesVar(e, [&](const VarNode* v) { return vars.count(v) > 0; });
}

// `indices` with `index` inserted at `axis`.
std::vector<Expr> InsertAt(std::vector<Expr> indices, int axis, Expr index) {
  indices.insert(indices.begin() + axis, std::move(index));
  return indices;
}

// The block's loops split by what the bindings use them for.
struct LoopUse {
  std::unordered_set<const VarNode*> spatial;  // loops used by spatial iterators
  std::unordered_set<const VarNode*> reduce;   // loops used by reduction iterators
};

// Step 2: preconditions 2-4.
LoopUse CheckLoops(const ScheduleState& state, const ForNode* rf_loop,
                   const BlockRealizeNode* realize, const std::vector<const ForNode*>& loops) {
  const BlockNode* block = realize->block.get();
  LoopUse use;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    auto& set = block->iter_vars[i].kind == IterKind::kReduce ? use.reduce : use.spatial;
    for (const ForNode* loop : loops) {
      const VarNode* v = loop->loop_var.get();
      if (UsesVar(realize->iter_values[i], [v](const VarNode* u) { return u == v; })) {
        set.insert(v);
      }
    }
  }
  const std::string& name = rf_loop->loop_var->name;
  if (use.spatial.count(rf_loop->loop_var.get()) > 0) {
    throw SimpleScheduleError(
        "SpatialIterUsesRFactorLoopError",
        fmt::format("rfactor of loop '{}': block '{}' binds a spatial iterator to it", name,
                    block->name),
        {rf_loop, realize}, "factor a loop that only reduction iterators use");
  }
  if (use.reduce.count(rf_loop->loop_var.get()) == 0) {
    throw SimpleScheduleError(
        "NotReductionLoopError",
        fmt::format("rfactor of loop '{}': no reduction iterator of block '{}' "
                    "uses it",
                    name, block->name),
        {rf_loop, realize});
  }
  for (const ForNode* loop : loops) {
    const VarNode* v = loop->loop_var.get();
    if (use.spatial.count(v) > 0 && use.reduce.count(v) > 0) {
      throw SimpleScheduleError(
          "LoopTouchedByBothIterKindsError",
          fmt::format("rfactor of loop '{}': loop '{}' is used by both spatial and reduction "
                      "iterators of block '{}'",
                      name, v->name, block->name),
          {loop, realize}, "split or reorder so that every loop serves one kind of iterator");
    }
  }
  std::vector<const BlockRealizeNode*> others = state.ChildBlocks(loops.front());
  if (others.size() != 1) {
    const BlockRealizeNode* other = others[0] == realize ? others[1] : others[0];
    throw SimpleScheduleError(
        "NotOnlyBlockInLoopNestError",
        fmt::format("rfactor of loop '{}': block '{}' shares its outermost loop '{}' with block "
                    "'{}'",
                    name, block->name, loops.front()->loop_var->name, other->block->name),
        {loops.front(), other},
        "rfactor before compute_at or reverse_compute_at brings other blocks in");
  }
  if (!IsConstInt(realize->predicate, 1) && UsesAny(realize->predicate, use.reduce)) {
    throw SimpleScheduleError(
        "ReductionPredicateError",
        fmt::format("rfactor of loop '{}': the predicate of block '{}' uses a "
                    "reduction loop",
                    name, block->name),
        {realize}, "split the reduction loop by factors that divide its extent");
  }
  return use;
}

// A new iterator named after `loop` ("v" + its name) ranging over it.
IterVar IterFromLoop(const ForNode* loop, IterKind kind) {
  Var v("v" + loop->loop_var->name, loop->loop_var.dtype());
  return IterVar{v, Range::FromMinExtent(loop->min, loop->extent), kind};
}

// The index of the factored dimension for iterator `v` of a loop starting at `min`.
Expr FactorIndex(const Var& v, const Expr& min) { return IsConstInt(min, 0) ? Expr(v) : v - min; }

struct RFactorPlan {
  const ForNode* rf_loop;
  const BlockRealizeNode* realize;
  std::vector<const ForNode*> loops;
  LoopUse use;
  Reduction reduction;
  int axis;
  Buffer rf_buffer;
  std::string rf_name;
};

// Step 3: the block computing partial results, in place of the original block.
Stmt MakeRFactorBlock(const RFactorPlan& p) {
  const BlockNode* block = p.realize->block.get();
  std::vector<IterVar> iters;
  std::vector<Expr> values;
  VarMap loop_to_iter;  // loop variables to the rf block's iterators
  VarMap vmap;          // the original iterators to their expressions in the rf block
  IterVar factor_iter = IterFromLoop(p.rf_loop, IterKind::kSpatial);
  iters.push_back(factor_iter);
  values.push_back(p.rf_loop->loop_var);
  loop_to_iter[p.rf_loop->loop_var.get()] = factor_iter.var;
  std::unordered_map<const VarNode*, const ForNode*> loop_of;
  for (const ForNode* loop : p.loops) loop_of[loop->loop_var.get()] = loop;

  // The reduction iterators to rewrite: those bound to the factored loop, and, transitively, those
  // sharing a loop with one of them (after fuse and split, `vrh = (f0 * 9 + f1) // 3` and
  // `vrw = f1 % 3` both go, or `vrw` would become a second, independent reduction over f1).
  std::unordered_set<const VarNode*> rewritten_loops{p.rf_loop->loop_var.get()};
  auto uses_rewritten = [&](const Expr& binding) {
    return UsesVar(binding, [&](const VarNode* v) { return rewritten_loops.count(v) > 0; });
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const Expr& binding = p.realize->iter_values[i];
      if (block->iter_vars[i].kind != IterKind::kReduce || !uses_rewritten(binding)) continue;
      for (const auto& [var, loop] : loop_of) {
        if (UsesVar(binding, [v = var](const VarNode* u) { return u == v; })) {
          grew |= rewritten_loops.insert(var).second;
        }
      }
    }
  }
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& old = block->iter_vars[i];
    const Expr& binding = p.realize->iter_values[i];
    if (old.kind == IterKind::kReduce && uses_rewritten(binding)) {
      // One reduction iterator per loop of the binding; the old iterator becomes the binding
      // rewritten over them.
      PostOrderVisit(binding, [&](const Object* node) {
        if (node->kind() != NodeKind::kVar) return;
        const auto* v = static_cast<const VarNode*>(node);
        auto it = loop_of.find(v);
        if (it == loop_of.end() || loop_to_iter.count(v) > 0) return;
        IterVar iv = IterFromLoop(it->second, IterKind::kReduce);
        iters.push_back(iv);
        values.push_back(it->second->loop_var);
        loop_to_iter[v] = iv.var;
      });
      vmap[old.var.get()] = Substitute(binding, loop_to_iter);
      continue;
    }
    IterVar iv{old.var.Copy(), old.dom, old.kind};
    iters.push_back(iv);
    values.push_back(binding);
    vmap[old.var.get()] = iv.var;
  }

  const Reduction& r = p.reduction;
  std::vector<Expr> indices;
  for (const Expr& e : r.indices) indices.push_back(Substitute(e, vmap));
  indices = InsertAt(indices, p.axis, FactorIndex(factor_iter.var, p.rf_loop->min));
  Expr acc = MakeBufferLoad(p.rf_buffer, indices);
  Stmt body = MakeBufferStore(p.rf_buffer, r.Combine(acc, Substitute(r.rhs, vmap)), indices);
  Stmt init = MakeBufferStore(p.rf_buffer, r.identity, indices);
  std::vector<BufferRegion> reads;
  for (const BufferRegion& region : SubstituteRegions(block->reads, vmap)) {
    // A listed read of the accumulator becomes a read of the partial result.
    reads.push_back(region.buffer.same_as(r.buffer) ? BufferRegion::Point(p.rf_buffer, indices)
                                                    : region);
  }
  Block rf = MakeBlock(p.rf_name, iters, reads, {BufferRegion::Point(p.rf_buffer, indices)}, body,
                       init, block->alloc_buffers, block->annotations);
  return MakeBlockRealize(values, p.realize->predicate, rf);
}

// Step 4: the original block, now reducing the partial results, in a nest of fresh copies of the
// loops that reduction iterators do not use (plus the factored loop).
Stmt MakeWriteBackNest(const ScheduleState& state, const RFactorPlan& p) {
  const BlockNode* block = p.realize->block.get();
  VarMap loop_map;  // kept loops to their copies
  std::vector<const ForNode*> kept;
  for (const ForNode* loop : p.loops) {
    if (loop != p.rf_loop && p.use.reduce.count(loop->loop_var.get()) > 0) continue;
    kept.push_back(loop);
    loop_map[loop->loop_var.get()] =
        state.FreshLoopVar(loop->loop_var->name, loop->loop_var.dtype());
  }

  std::vector<IterVar> iters;
  std::vector<Expr> values;
  VarMap vmap;
  IterVar factor_iter = IterFromLoop(p.rf_loop, IterKind::kReduce);
  iters.push_back(factor_iter);
  values.push_back(loop_map.at(p.rf_loop->loop_var.get()));
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& old = block->iter_vars[i];
    if (old.kind != IterKind::kSpatial) continue;
    IterVar iv{old.var.Copy(), old.dom, old.kind};
    iters.push_back(iv);
    values.push_back(Substitute(p.realize->iter_values[i], loop_map));
    vmap[old.var.get()] = iv.var;
  }

  const Reduction& r = p.reduction;
  std::vector<Expr> indices;
  for (const Expr& e : r.indices) indices.push_back(Substitute(e, vmap));
  std::vector<Expr> rf_indices =
      InsertAt(indices, p.axis, FactorIndex(factor_iter.var, p.rf_loop->min));
  Expr partial = MakeBufferLoad(p.rf_buffer, rf_indices);
  Stmt body =
      MakeBufferStore(r.buffer, r.Combine(MakeBufferLoad(r.buffer, indices), partial), indices);
  Stmt init = MakeBufferStore(r.buffer, r.identity, indices);
  Block wb = MakeBlock(block->name, iters, {BufferRegion::Point(p.rf_buffer, rf_indices)},
                       SubstituteRegions(block->writes, vmap), body, init, {}, block->annotations);
  Expr predicate = Substitute(p.realize->predicate, loop_map);
  Stmt nest = MakeBlockRealize(values, predicate, wb);
  for (size_t k = kept.size(); k-- > 0;) {
    const ForNode* loop = kept[k];
    const auto* var = loop_map.at(loop->loop_var.get()).as<VarNode>();
    nest = MakeFor(Var(ObjectPtr<const VarNode>(var)), Substitute(loop->min, loop_map),
                   Substitute(loop->extent, loop_map), loop->for_kind, nest, loop->thread_tag,
                   loop->annotations);
  }
  return nest;
}

}  // namespace

BlockRV Schedule::RFactor(LoopRV loop_rv, int factor_axis) {
  RFactorPlan p;
  p.rf_loop = Get(loop_rv);
  // Step 1. The single block under the loop, and its reduction.
  std::vector<const BlockRealizeNode*> blocks = state_.ChildBlocks(p.rf_loop);
  if (blocks.size() != 1) {
    throw SimpleScheduleError(
        "NotSingleChildBlockError",
        fmt::format("rfactor of loop '{}', which has {} blocks under it; it needs "
                    "exactly one",
                    p.rf_loop->loop_var->name, blocks.size()),
        {p.rf_loop});
  }
  p.realize = blocks[0];
  p.reduction = MatchReduction(p.realize);
  // Step 2. The loops.
  p.loops = state_.LoopsAbove(p.realize);
  p.use = CheckLoops(state_, p.rf_loop, p.realize, p.loops);
  int ndim = p.reduction.buffer->ndim();
  if (factor_axis < -(ndim + 1) || factor_axis > ndim) {
    throw SimpleScheduleError(
        "FactorAxisOutOfRangeError",
        fmt::format("rfactor with factor_axis {}: buffer '{}' has {} dimension(s), so the new "
                    "dimension goes at an axis in [{}, {}]",
                    factor_axis, p.reduction.buffer->name, ndim, -(ndim + 1), ndim),
        {p.rf_loop});
  }
  p.axis = factor_axis < 0 ? factor_axis + ndim + 1 : factor_axis;
  if (check_only_) return BlockRV{kPlaceholderRVId};

  // Step 3-4. The new buffer and the two blocks.
  const Buffer& c = p.reduction.buffer;
  std::vector<Expr> shape = c->shape;
  shape.insert(shape.begin() + p.axis, p.rf_loop->extent);
  p.rf_buffer = Buffer(c->name + "_rf", c->dtype, shape, c->scope);
  p.rf_name = state_.FreshBlockName(p.realize->block->name + "_rf");
  Stmt rf_block = MakeRFactorBlock(p);
  Stmt write_back = MakeWriteBackNest(state_, p);

  // Step 5. Replace the block, put the final reduction after the outermost loop, allocate.
  const VarNode* outer_var = p.loops.front()->loop_var.get();
  const std::string scope_name = state_.ScopeBlock(p.realize)->block->name;
  state_.Replace(p.realize, rf_block);
  const ForNode* outer = state_.FindLoop(outer_var);
  state_.Replace(outer, MakeSeq({GetStmtRef(outer), write_back}));
  const BlockRealizeNode* scope = state_.FindBlock(scope_name);
  const BlockNode* s = scope->block.get();
  std::vector<Buffer> allocs = s->alloc_buffers;
  allocs.push_back(p.rf_buffer);
  Block new_scope = MakeBlock(s->name, s->iter_vars, s->reads, s->writes, s->body, s->init,
                              std::move(allocs), s->annotations);
  state_.Replace(scope, MakeBlockRealize(scope->iter_values, scope->predicate, new_scope));

  BlockRV out = NewBlockRV(p.rf_name);
  Record("RFactor", {loop_rv.ref()}, {{"factor_axis", factor_axis}}, {out.ref()});
  return out;
}

}  // namespace tirtune
