// compute_at / reverse_compute_at: move a producer block under a loop of its consumers (or a
// consumer under a loop of its producers), computing only the region needed (or produced) by
// one iteration of that loop.
//
// Preconditions (compute_at; reverse_compute_at mirrors producers and consumers):
//  1. the block and the loop are in the same scope, and the block is not already under the loop;
//  2. every consumer of the block in the scope (a block reading what it writes, or writing it
//     too, like a reduction update after its decomposed init) is under the loop, and the block
//     comes before the loop in program order;
//  3. no other block between the block's old place and the loop touches a buffer the block
//     writes or writes a buffer it reads;
//  4. a dependent that accumulates into the buffer (every producer, for reverse_compute_at)
//     completes its reduction within one iteration of the loop, so nothing reads partial results
//     and no init runs in the middle of an accumulation;
//  5. each dimension of the block's write region of a consumed buffer is a single block
//     iterator, so the needed region translates into iterator ranges;
//  6. the block is not the only statement left in its scope or branch, so it can be cut out;
//  7. reverse_compute_at: what the producers write in one iteration of the loop is a box, each
//     element of which they write (CheckProducedBox); compute_at may compute the hull.
// The block goes into the loop body after every statement holding a block it reads from and
// before every statement holding a block that reads (or, for compute_at, also writes) what it
// writes; `index` picks a position explicitly (-1: the first such place for compute_at, the last
// for reverse_compute_at).
// Iterators get the range covering what the consumers read in one iteration of the loop; the
// others keep their whole domain. For a block writing a shared buffer, the threadIdx and vthread
// loops around the loop (and the loop itself, when bound so) count as inside it: the region
// covers what all the GPU block's threads read, which the block's threads then fetch together
// once its copy loops are bound to threadIdx as well. A predicate keeps iterators inside their
// domains when that cannot be proven.
//
// Before:                                 After ComputeAt(B, i0):
//   for i in range(16):                     for i0 in range(4):
//     with block("B"): vi = ...i              for ax0 in range(4):
//       B[vi] = A[vi] * 2.0                     with block("B"): vi = axis.spatial(16, i0*4 + ax0)
//   for i0 in range(4):                           B[vi] = A[vi] * 2.0
//     for i1 in range(4):                     for i1 in range(4):
//       with block("C"): vi = i0*4 + i1         with block("C"): ...
//         C[vi] = B[vi] + 1.0
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "block_checks.h"
#include "compute_inline.h"
#include "leaf_block_removal.h"
#include "tirtune/arith/int_set.h"
#include "tirtune/arith/iter_map.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

using arith::Analyzer;
using arith::IntSet;
using arith::VarRangeMap;

bool IsUnder(const ScheduleState& state, const StmtNode* node, const ForNode* loop) {
  for (const StmtNode* a : state.Ancestors(node)) {
    if (a == loop) return true;
  }
  return false;
}

// The realize with its iterator variables replaced by their bindings in `e`.
Expr Bind(const BlockRealizeNode* realize, const Expr& e) {
  VarMap vmap;
  const BlockNode* block = realize->block.get();
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    vmap[block->iter_vars[i].var.get()] = realize->iter_values[i];
  }
  return Substitute(e, vmap);
}

// reverse_compute_at, step 4: what `producer` writes of `region` in one iteration of `loop` (its
// loops below it ranging over `inner`) must be a box, each point of which it writes: the consumer
// then runs over exactly that box. The hull of a region that is not one holds elements not yet
// produced, which the consumer would read, and the hulls of parallel iterations overlap and race:
// a pixel loop fused from the rows and columns of a 7 x 7 image and split by 6 writes pixels
// 6a..6a+5 in iteration a, the end of one row and the start of the next. Sufficient, not
// necessary: the indices are a bijective affine map of the loops below `loop` that they use
// (DetectIterMap, with the outer loops as symbols). It needs constant offsets inside a division,
// so a box it cannot show is refused too (half rows of a fused 8 x 8 loop split by 4). The
// producer's predicate is not looked at: a guarded split bounds one dimension, keeping a box a box.
void CheckProducedBox(const BlockRealizeNode* producer, const BufferRegion& region,
                      const VarRangeMap& inner, const ForNode* loop, const BlockNode* block,
                      Analyzer* analyzer) {
  auto refuse = [&](const std::string& why) {
    throw SimpleScheduleError(
        "NotExactRegionError",
        fmt::format("reverse_compute_at: what block '{}' writes of buffer '{}' in one iteration "
                    "of loop '{}' cannot be shown to be a box (its write indices: {}), so block "
                    "'{}' could read elements not yet produced",
                    producer->block->name, region.buffer->name, loop->loop_var->name, why,
                    block->name),
        {producer, loop});
  };
  std::vector<Expr> indices;
  for (const Range& range : region.region) indices.push_back(Bind(producer, range.min));
  // The loops below `loop` that the indices use.
  VarRangeMap used;
  std::unordered_set<const VarNode*> used_vars;
  for (const auto& [var, range] : inner) {
    auto is_var = [v = var.get()](const VarNode* u) { return u == v; };
    if (std::any_of(indices.begin(), indices.end(),
                    [&](const Expr& index) { return UsesVar(index, is_var); })) {
      used[var] = range;
      used_vars.insert(var.get());
    }
  }
  if (used.empty()) return;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!IsConstInt(region.region[d].extent, 1) &&
        UsesVar(indices[d], [&](const VarNode* v) { return used_vars.count(v) > 0; })) {
      refuse("a region of several elements per iteration");
    }
  }
  arith::IterMapResult map = arith::DetectIterMap(indices, used, analyzer);
  if (!map.ok()) {
    // DetectIterMap calls the indices "bindings" ("binding 0 (...)", "loop x is not used by any
    // binding"); here they are the write's indices.
    std::string why = map.error;
    for (size_t at = why.find("binding"); at != std::string::npos; at = why.find("binding", at)) {
      why.replace(at, 7, "index");
    }
    refuse(why);
  }
}

struct IterRange {
  Expr min;
  int64_t extent;  // loop extent (a constant upper bound of the needed extent)
  Expr guard;      // extra condition on the new loop variable, or undefined
};

}  // namespace

// Implemented below; shared by ComputeAt and ReverseComputeAt.
// In check-only mode it returns after the checks, before building anything.
static void ComputeAtImpl(ScheduleState* state, const BlockRealizeNode* realize,
                          const ForNode* loop, bool preserve_unit_loops, int index, bool reverse,
                          bool check_only);

void Schedule::ComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops, int index) {
  // At the inline location the block is inlined, but the step is recorded as a compute_at of the
  // sampled location, so that a replay with another location decision moves the block instead.
  if (LocationOf(loop) == -2) {
    InlineBlock(this, block);
  } else if (LocationOf(loop) == 0) {
    ComputeAtImpl(&state_, Get(block), Get(loop), preserve_unit_loops, index, /*reverse=*/false,
                  check_only_);
  }
  Record("ComputeAt", {block.ref(), loop.ref()},
         {{"preserve_unit_loops", preserve_unit_loops}, {"index", index}}, {});
}

void Schedule::ReverseComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops, int index) {
  if (LocationOf(loop) == -2) {
    ReverseComputeInline(block);
    return;
  }
  if (LocationOf(loop) == 0) {
    ComputeAtImpl(&state_, Get(block), Get(loop), preserve_unit_loops, index, /*reverse=*/true,
                  check_only_);
  }
  Record("ReverseComputeAt", {block.ref(), loop.ref()},
         {{"preserve_unit_loops", preserve_unit_loops}, {"index", index}}, {});
}

static void ComputeAtImpl(ScheduleState* state, const BlockRealizeNode* realize,
                          const ForNode* loop, bool preserve_unit_loops, int index, bool reverse,
                          bool check_only) {
  const char* primitive = reverse ? "reverse_compute_at" : "compute_at";
  const BlockNode* block = realize->block.get();
  // Step 1: same scope, not already under the loop.
  const BlockRealizeNode* scope = state->ScopeBlock(realize);
  if (state->ScopeBlock(loop) != scope) {
    throw SimpleScheduleError("NotInSameScopeError",
                              fmt::format("{}: block '{}' and loop '{}' are in different scopes",
                                          primitive, block->name, loop->loop_var->name),
                              {realize, loop});
  }
  if (IsUnder(*state, realize, loop)) {
    throw SimpleScheduleError("LoopPositionError",
                              fmt::format("{}: block '{}' is already under loop '{}'", primitive,
                                          block->name, loop->loop_var->name),
                              {realize, loop});
  }
  // Step 2: the dependent blocks (consumers, or producers when reversed) must all be under the
  // loop; the block must come before (after) the loop.
  std::vector<const BlockRealizeNode*> siblings = state->ChildBlocks(scope);
  size_t self_pos = std::find(siblings.begin(), siblings.end(), realize) - siblings.begin();
  // The block's regions through which it depends on the others: what it writes (compute_at), or
  // what it reads and writes (reverse_compute_at: a producer may also be an init of its output).
  std::vector<BufferRegion> own = block->writes;
  if (reverse) own.insert(own.begin(), block->reads.begin(), block->reads.end());
  std::vector<const BlockRealizeNode*> dependents;
  size_t first_under = siblings.size(), last_under = 0;
  for (size_t p = 0; p < siblings.size(); ++p) {
    const BlockRealizeNode* other = siblings[p];
    bool under = IsUnder(*state, other, loop);
    if (under) {
      first_under = std::min(first_under, p);
      last_under = std::max(last_under, p);
    }
    if (other == realize) continue;
    // compute_at: blocks reading or also writing (e.g. a reduction update after its decomposed
    // init) what the block writes; reverse: blocks writing what the block reads or writes.
    bool depends = false;
    for (const BufferRegion& r : block->writes) {
      depends |= WritesBuffer(other->block.get(), r.buffer) ||
                 (!reverse && ReadsBuffer(other->block.get(), r.buffer));
    }
    if (reverse) {
      for (const BufferRegion& r : block->reads) {
        depends |= WritesBuffer(other->block.get(), r.buffer);
      }
    }
    if (!depends) continue;
    if (!under) {
      throw SimpleScheduleError(
          "NotAllConsumersUnderLoopError",
          fmt::format("{}: block '{}' {} block '{}', which is not under loop '{}'", primitive,
                      block->name, reverse ? "consumes from" : "feeds", other->block->name,
                      loop->loop_var->name),
          {other, loop});
    }
    dependents.push_back(other);
  }
  if (first_under == siblings.size()) {
    throw SimpleScheduleError(
        "LoopPositionError",
        fmt::format("{}: loop '{}' contains no block", primitive, loop->loop_var->name), {loop});
  }
  bool order_ok = reverse ? self_pos > last_under : self_pos < first_under;
  if (!order_ok) {
    throw SimpleScheduleError(
        "LoopPositionError",
        fmt::format("{}: block '{}' must come {} loop '{}' in program order", primitive,
                    block->name, reverse ? "after" : "before", loop->loop_var->name),
        {realize, loop});
  }
  // Step 2b: a dependent that accumulates must run its whole reduction within one iteration of
  // the loop: reversed, the consumer would read partial results; forward, a producer writing the
  // same buffer (an init) would run again in the middle of the accumulation.
  {
    std::unordered_set<const VarNode*> outer{loop->loop_var.get()};
    for (const StmtNode* a : state->Ancestors(loop)) {
      if (a->kind() == NodeKind::kFor) {
        outer.insert(static_cast<const ForNode*>(a)->loop_var.get());
      }
    }
    auto is_outer = [&](const VarNode* v) { return outer.count(v) > 0; };
    for (const BlockRealizeNode* dep : dependents) {
      const BlockNode* b = dep->block.get();
      bool accumulates_into_ours = false;
      for (const BufferRegion& r : block->writes) {
        accumulates_into_ours |= WritesBuffer(b, r.buffer);
      }
      if (!reverse && !accumulates_into_ours) continue;
      for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        if (b->iter_vars[i].kind == IterKind::kReduce && UsesVar(dep->iter_values[i], is_outer)) {
          throw SimpleScheduleError(
              "ReductionNotCompleteError",
              fmt::format("{}: block '{}' does not finish its reduction over '{}' within one "
                          "iteration of loop '{}'; use a loop outside its reduction loops",
                          primitive, b->name, b->iter_vars[i].var->name, loop->loop_var->name),
              {dep, loop});
        }
      }
    }
  }
  // Step 3: blocks passed over must not conflict with the block's buffers.
  size_t lo = reverse ? last_under + 1 : self_pos + 1;
  size_t hi = reverse ? self_pos : first_under;
  for (size_t p = lo; p < hi; ++p) {
    const BlockNode* other = siblings[p]->block.get();
    bool conflict = false;
    for (const BufferRegion& r : block->writes) {
      conflict |= ReadsBuffer(other, r.buffer) || WritesBuffer(other, r.buffer);
    }
    for (const BufferRegion& r : block->reads) conflict |= WritesBuffer(other, r.buffer);
    if (conflict) {
      throw SimpleScheduleError("DependencyConflictError",
                                fmt::format("{}: block '{}' would move past block '{}', which "
                                            "touches the same buffers",
                                            primitive, block->name, other->name),
                                {realize, siblings[p]});
    }
  }

  // Step 4: the region of each buffer the dependents need (produce) in one loop iteration.
  Analyzer analyzer;
  for (const StmtNode* a : state->Ancestors(loop)) {
    if (a->kind() == NodeKind::kFor) {
      const auto* f = static_cast<const ForNode*>(a);
      analyzer.Bind(f->loop_var, Range{f->min, f->extent});
    }
  }
  analyzer.Bind(loop->loop_var, Range{loop->min, loop->extent});
  // A shared buffer is one per GPU block: computed under threadIdx (or vthread) loops, it must
  // hold what every thread of the block needs, so those loops around the target (and the target
  // itself) are relaxed like the loops inside it (compute_at only).
  VarRangeMap threads;
  if (!reverse) {
    std::vector<const ForNode*> around = {loop};
    for (const StmtNode* a : state->Ancestors(loop)) {
      if (a->kind() == NodeKind::kFor) around.push_back(static_cast<const ForNode*>(a));
    }
    for (const ForNode* f : around) {
      if (f->thread_tag.rfind("threadIdx.", 0) == 0 || f->thread_tag.rfind("vthread", 0) == 0) {
        threads[f->loop_var] = Range{f->min, f->extent};
      }
    }
  }
  std::unordered_map<const VarNode*, IntSet> iter_sets;
  for (const BufferRegion& mine : own) {
    std::vector<IntSet> needed(mine.region.size(), IntSet::Nothing());
    // reverse_compute_at: each producer region's box, to check that they are one box together.
    std::vector<std::pair<const BlockRealizeNode*, std::vector<IntSet>>> boxes;
    for (const BlockRealizeNode* dep : dependents) {
      VarRangeMap inner;
      if (mine.buffer->scope == StorageScope::kShared) inner = threads;
      bool below = false;
      for (const ForNode* f : state->LoopsAbove(dep)) {
        if (below) inner[f->loop_var] = Range{f->min, f->extent};
        below |= f == loop;
      }
      std::vector<BufferRegion> regions = dep->block->writes;
      if (!reverse) {
        regions.insert(regions.end(), dep->block->reads.begin(), dep->block->reads.end());
      }
      for (const BufferRegion& r : regions) {
        if (!r.buffer.same_as(mine.buffer)) continue;
        if (reverse) CheckProducedBox(dep, r, inner, loop, block, &analyzer);
        std::vector<IntSet> box;
        for (size_t d = 0; d < r.region.size(); ++d) {
          Expr first = Bind(dep, r.region[d].min);
          Expr last = Bind(dep, r.region[d].min + r.region[d].extent - 1);
          IntSet s = arith::Union(arith::EvalSet(first, inner, &analyzer),
                                  arith::EvalSet(last, inner, &analyzer), &analyzer);
          needed[d] = arith::Union(needed[d], s, &analyzer);
          box.push_back(s);
        }
        if (reverse) boxes.emplace_back(dep, std::move(box));
      }
    }
    // Boxes of several producers (or regions) must be the same box: B[i] and B[i + 4] are two,
    // and their hull holds elements neither writes. (An init and its update write one.)
    for (const auto& [dep, box] : boxes) {
      if (boxes.size() < 2) break;
      for (size_t d = 0; d < box.size(); ++d) {
        const IntSet& all = needed[d];
        if (box[d].min().defined() && all.min().defined() && box[d].max().defined() &&
            all.max().defined() && analyzer.CanProveEqual(box[d].min(), all.min()) &&
            analyzer.CanProveEqual(box[d].max(), all.max())) {
          continue;
        }
        throw SimpleScheduleError(
            "NotExactRegionError",
            fmt::format("reverse_compute_at: the producers of buffer '{}' under loop '{}' write "
                        "different regions of it in one iteration (block '{}' at dimension {}), "
                        "so block '{}' could read elements not yet produced",
                        mine.buffer->name, loop->loop_var->name, dep->block->name, d, block->name),
            {dep, loop});
      }
    }
    // Step 5: each dimension of the block's own region must be one iterator, where a dependent
    // touches the buffer.
    bool touched = false;
    for (const IntSet& n : needed) touched |= !n.IsNothing();
    for (size_t d = 0; touched && d < mine.region.size(); ++d) {
      const auto* v = mine.region[d].min.as<VarNode>();
      bool is_iter = false;
      for (const IterVar& iv : block->iter_vars) is_iter |= v != nullptr && iv.var.get() == v;
      if (!is_iter || !IsConstInt(mine.region[d].extent, 1)) {
        throw SimpleScheduleError(
            "NotSingleIteratorAccessError",
            fmt::format("{}: block '{}' accesses buffer '{}' at dimension {} with an index that "
                        "is not a single block iterator",
                        primitive, block->name, mine.buffer->name, d),
            {realize});
      }
      if (needed[d].IsNothing()) continue;
      auto it = iter_sets.find(v);
      iter_sets[v] =
          it == iter_sets.end() ? needed[d] : arith::Union(it->second, needed[d], &analyzer);
    }
  }

  // Step 6: the range of each iterator, with a constant bound on its extent.
  std::vector<IterRange> ranges;
  for (const IterVar& iv : block->iter_vars) {
    auto it = iter_sets.find(iv.var.get());
    Range r = iv.dom;
    if (it != iter_sets.end()) {
      std::optional<Range> cover = it->second.CoverRange(&analyzer);
      if (!cover) {
        throw SimpleScheduleError("UnboundedRegionError",
                                  fmt::format("{}: cannot bound the range of iterator '{}' of "
                                              "block '{}'",
                                              primitive, iv.var->name, block->name),
                                  {realize});
      }
      r = *cover;
    }
    Expr min = analyzer.Simplify(r.min);
    Expr extent = analyzer.Simplify(r.extent);
    IterRange ir{min, 0, Expr()};
    if (const int64_t* c = AsConstInt(extent)) {
      ir.extent = *c;
    } else {
      arith::IntBound b = analyzer.ConstIntBound(extent);
      if (!b.has_max()) {
        throw SimpleScheduleError("UnboundedRegionError",
                                  fmt::format("{}: the extent {} of iterator '{}' has no "
                                              "constant bound",
                                              primitive, ToString(extent), iv.var->name),
                                  {realize});
      }
      ir.extent = b.max_value;
      ir.guard = extent;  // ax < extent
    }
    ranges.push_back(ir);
  }

  // Step 7: the position among the loop body's statements: after every one holding a block the
  // moved block depends on, and before every one holding a block that depends on it.
  std::vector<Stmt> body;
  if (const auto* seq = loop->body.as<SeqStmtNode>()) {
    body = seq->seq;
  } else {
    body = {loop->body};
  }
  int lowest = 0, highest = static_cast<int>(body.size());
  for (int k = 0; k < static_cast<int>(body.size()); ++k) {
    bool before_us = false, after_us = false;
    PreOrderVisit(body[k], [&](const Object* node) {
      const auto* other = node->as<BlockRealizeNode>();
      if (other == nullptr) return node->kind() >= NodeKind::kFor;
      const BlockNode* b = other->block.get();
      for (const BufferRegion& r : block->reads) before_us |= WritesBuffer(b, r.buffer);
      for (const BufferRegion& r : block->writes) {
        // A block that only writes our output before us is an init (reverse) or a conflict.
        bool reads_ours = ReadsBuffer(b, r.buffer);
        bool writes_ours = WritesBuffer(b, r.buffer);
        if (reverse && writes_ours && !reads_ours) before_us = true;
        if (reads_ours || (!reverse && writes_ours)) after_us = true;
      }
      return true;
    });
    if (before_us) lowest = std::max(lowest, k + 1);
    if (after_us) highest = std::min(highest, k);
  }
  if (lowest > highest) {
    throw SimpleScheduleError("InsertionPointError",
                              fmt::format("{}: no place in the body of loop '{}' is after every "
                                          "block block '{}' reads from and before every block "
                                          "reading it",
                                          primitive, loop->loop_var->name, block->name),
                              {realize, loop});
  }
  int position = reverse ? highest : lowest;
  if (index >= 0) {
    if (index < lowest || index > highest) {
      throw SimpleScheduleError(
          "InsertionPointError",
          fmt::format("{}: index {} in the body of loop '{}' is not allowed; block '{}' must go "
                      "at a position from {} to {}",
                      primitive, index, loop->loop_var->name, block->name, lowest, highest),
          {realize, loop});
    }
    position = index;
  }
  // Step 8: the block can leave its old place.
  LeafBlockRemoval removal = PlanLeafBlockRemoval(*state, realize, primitive);
  if (check_only) return;

  // Step 9: new loops over the iterator ranges, around the block.
  std::vector<Expr> bindings;
  std::vector<std::pair<Var, int64_t>> loops;
  Expr predicate = Bool(true);
  for (size_t k = 0; k < ranges.size(); ++k) {
    const IterVar& iv = block->iter_vars[k];
    const IterRange& ir = ranges[k];
    Expr binding;
    if (ir.extent == 1 && !preserve_unit_loops && !ir.guard.defined()) {
      binding = ir.min;
    } else {
      Var ax = state->FreshLoopVar(fmt::format("ax{}", loops.size()), iv.var.dtype());
      loops.emplace_back(ax, ir.extent);
      analyzer.Bind(ax, Range{Expr(0), Expr(ir.extent)});
      binding = analyzer.Simplify(ir.min + ax);
      if (ir.guard.defined()) predicate = predicate && (ax < ir.guard);
    }
    // Keep the iterator inside its domain where the region may stick out.
    Expr dom_lo = iv.dom.min, dom_hi = iv.dom.min + iv.dom.extent;
    if (!analyzer.CanProve(binding >= dom_lo)) predicate = predicate && (binding >= dom_lo);
    if (!analyzer.CanProve(binding < dom_hi)) predicate = predicate && (binding < dom_hi);
    bindings.push_back(binding);
  }
  Stmt nest = MakeBlockRealize(bindings, predicate, realize->block);
  for (size_t k = loops.size(); k-- > 0;) {
    nest = MakeFor(loops[k].first, IntImm(loops[k].first.dtype(), 0),
                   IntImm(loops[k].first.dtype(), loops[k].second), ForKind::kSerial, nest);
  }

  // Step 10: cut the block from its old place (the loop is not in the cut: the block is not
  // under it), then insert the nest into the loop body.
  state->Replace(removal.old_stmt, removal.new_stmt);
  body.insert(body.begin() + position, nest);
  state->Replace(loop, WithBody(loop, MakeSeq(std::move(body))));
}

}  // namespace tirtune
