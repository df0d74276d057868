// LowerCrossThreadReduction (block form, GPU): a reduction block whose reduction runs across the
// threads of a GPU block (a loop feeding a reduction iterator is bound to threadIdx) becomes
// per-thread partial results combined across the threads, written once.
//
// Each thread first reduces its own share into a one-element local accumulator (the serial
// reduction loops between the thread loops and the block), starting from the reducer's identity.
// Then the threads combine their accumulators, every thread ending with the total:
//  - warp shuffles when the reduction is over threadIdx.x alone, with a power-of-two extent n
//    and a float or 32/64-bit integer type: a butterfly of warp_shuffle_xor over min(n, 32)
//    lanes; for n > 32, lane 0 of each warp puts its warp's total into a shared slot and every
//    thread combines its group's n/32 slots;
//  - otherwise through shared memory: each thread stores its partial result into its own slot,
//    and every thread combines the slots of its group.
// InsertBarriers later puts a sync_threads() between the slots' stores and loads (and before
// they are stored again in a later iteration). Finally the result meets C: C[I] = total on the
// first step of the reduction (the reduction loops outside the thread loops at their start),
// C[I] = op(C[I], total) after it; written by the thread whose reduction thread indices are 0,
// or by every thread when C is a local buffer (one copy per thread).
//
//   for tx in thread_binding(64, "threadIdx.x"):        for tx in thread_binding(64, "threadIdx.x"):
//     for k1 in range(4):                                  acc[0] = 0
//       with block("B"):                                   for k1 in range(4):
//         vi = axis.spatial(16, bx)                          acc[0] = acc[0] + A[bx, tx * 4 + k1]
//         vk = axis.reduce(256, tx * 4 + k1)               acc[0] = acc[0] + warp_shuffle_xor(acc[0], 16)
//         with init(): B[vi] = 0.0                         ... 8, 4, 2, 1
//         B[vi] = B[vi] + A[vi, vk]                        if tx % 32 == 0: red[tx / 32] = acc[0]
//                                                          acc[0] = red[0] + red[1]
//                                                          if tx == 0: B[bx] = acc[0]
//
// Preconditions (UserError naming the block otherwise):
//  1. the block is a reduction C[I] = op(C[I], rhs) with op in +, *, min, max and an init storing
//     op's identity, allocates nothing and holds no other block;
//  2. the threadIdx loops directly around it (then serial loops, then the block) include every
//     threadIdx loop feeding a reduction iterator, each axis once; no threadIdx loop feeds both a
//     spatial and a reduction iterator, and no serial loop between them and the block feeds a
//     spatial one;
//  3. every reduction iterator's binding grows by a constant >= 0 with each of those loops (so
//     they all start the reduction together at index 0);
//  4. the block's predicate uses none of those loops;
//  5. no threadIdx loop encloses those loops from further out (shared slots are per block).
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/reduction.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

constexpr int64_t kWarp = 32;

bool IsThreadLoop(const ForNode* loop) {
  return loop->for_kind == ForKind::kThreadBinding && loop->thread_tag.rfind("threadIdx.", 0) == 0;
}

bool UsesAnyOf(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  return UsesVar(e, [&](const VarNode* v) { return vars.count(v) > 0; });
}

class Lowerer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    if (IsThreadLoop(op)) {
      // The threadIdx loops directly nested from here, then serial loops, then maybe the block.
      std::vector<const ForNode*> threads, serial;
      Stmt inner = GetStmtRef(op);
      while (const auto* f = inner.as<ForNode>()) {
        if (!IsThreadLoop(f)) break;
        threads.push_back(f);
        inner = f->body;
      }
      while (const auto* f = inner.as<ForNode>()) {
        if (f->for_kind == ForKind::kThreadBinding) break;
        serial.push_back(f);
        inner = f->body;
      }
      const auto* realize = inner.as<BlockRealizeNode>();
      if (realize != nullptr && ReducesAcross(realize, threads)) {
        return Rewrite(threads, serial, realize);
      }
    }
    loops_.push_back(op);
    Stmt out = StmtMutator::VisitStmt_(op);
    loops_.pop_back();
    return out;
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    // Reached without a rewrite: no threadIdx loop around may feed its reduction (rule 2).
    std::vector<const ForNode*> threads;
    for (const ForNode* loop : loops_) {
      if (IsThreadLoop(loop)) threads.push_back(loop);
    }
    if (ReducesAcross(op, threads)) {
      TT_USER_ERROR(
          "block '{}' reduces across GPU threads, but its threadIdx-bound reduction loops do not "
          "directly enclose it (with only serial reduction loops between them and the block); "
          "bind the loops so, or rfactor the reduction first",
          op->block->name);
    }
    return StmtMutator::VisitStmt_(op);
  }

 private:
  // Whether a loop of `threads` feeds a reduction iterator of the block.
  static bool ReducesAcross(const BlockRealizeNode* realize,
                            const std::vector<const ForNode*>& threads) {
    std::unordered_set<const VarNode*> vars;
    for (const ForNode* t : threads) vars.insert(t->loop_var.get());
    const auto& iters = realize->block->iter_vars;
    for (size_t i = 0; i < iters.size(); ++i) {
      if (iters[i].kind == IterKind::kReduce && UsesAnyOf(realize->iter_values[i], vars)) {
        return true;
      }
    }
    return false;
  }

  Stmt Rewrite(const std::vector<const ForNode*>& threads,
               const std::vector<const ForNode*>& serial, const BlockRealizeNode* realize) {
    const BlockNode* block = realize->block.get();
    auto fail = [&](const std::string& why) {
      TT_USER_ERROR("block '{}' reduces across GPU threads, but {}", block->name, why);
    };
    // Rule 1.
    ReductionMismatch kind;
    std::string why;
    std::optional<BlockReduction> r = MatchBlockReduction(block, &kind, &why);
    if (!r) fail(why);
    if (!block->alloc_buffers.empty()) fail("it allocates buffers");
    // Rule 5.
    for (const ForNode* loop : loops_) {
      if (IsThreadLoop(loop)) {
        fail(fmt::format("loop '{}' bound to {} encloses its thread loops from further out",
                         loop->loop_var->name, loop->thread_tag));
      }
    }
    // Rule 2.
    VarMap bindings;
    std::vector<Expr> reduce_bindings;
    std::unordered_set<const VarNode*> spatial_uses;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      bindings[iv.var.get()] = realize->iter_values[i];
      if (iv.kind == IterKind::kReduce) {
        reduce_bindings.push_back(realize->iter_values[i]);
      } else {
        PostOrderVisit(realize->iter_values[i], [&](const Object* n) {
          if (const auto* v = n->as<VarNode>()) spatial_uses.insert(v);
        });
      }
    }
    std::vector<const ForNode*> reducing;  // the threadIdx loops feeding the reduction
    std::unordered_set<std::string> tags;
    for (const ForNode* t : threads) {
      if (!tags.insert(t->thread_tag).second) {
        fail(fmt::format("two of the loops around it are bound to {}", t->thread_tag));
      }
      bool feeds = false;
      for (const Expr& b : reduce_bindings) feeds |= UsesAnyOf(b, {t->loop_var.get()});
      if (feeds && spatial_uses.count(t->loop_var.get())) {
        fail(fmt::format("loop '{}' ({}) feeds both a spatial and a reduction iterator",
                         t->loop_var->name, t->thread_tag));
      }
      if (feeds) reducing.push_back(t);
    }
    for (const ForNode* s : serial) {
      if (spatial_uses.count(s->loop_var.get())) {
        fail(fmt::format("loop '{}' between its thread loops and the block is not a reduction loop",
                         s->loop_var->name));
      }
    }
    // Rules 3 and 4: the first step of the reduction is where these loops are all at 0 (their
    // start), and the predicate is the same for all of them.
    arith::Analyzer analyzer;
    std::unordered_set<const VarNode*> inner;
    VarMap at_start;
    for (const ForNode* f : reducing) inner.insert(f->loop_var.get());
    for (const ForNode* f : serial) inner.insert(f->loop_var.get());
    for (const ForNode* f : threads) at_start[f->loop_var.get()] = f->min;
    for (const ForNode* f : serial) at_start[f->loop_var.get()] = f->min;
    for (const ForNode* f : threads) analyzer.Bind(f->loop_var, Range{f->min, f->extent});
    for (const ForNode* f : serial) analyzer.Bind(f->loop_var, Range{f->min, f->extent});
    for (const Expr& b : reduce_bindings) {
      for (const VarNode* v : inner) {
        Expr step = analyzer.Simplify(Substitute(b, VarMap{{v, GetRef(v) + 1}}) - b);
        const int64_t* s = AsConstInt(step);
        if (s == nullptr || *s < 0) {
          fail(fmt::format("its reduction binding {} does not grow by a constant with loop '{}'",
                           ToString(b), v->name));
        }
      }
    }
    if (UsesAnyOf(realize->predicate, inner)) {
      fail("its predicate depends on the loops of the reduction");
    }
    // The statements. acc: this thread's partial result, then the total.
    DataType t = r->identity.dtype();
    Buffer acc(block->name + "_red_local", t, {IntImm(DataType::Index(), 1)},
               StorageScope::kLocal);
    Expr zero = IntImm(DataType::Index(), 0);
    auto load = [&] { return MakeBufferLoad(acc, {zero}); };
    auto store = [&](Expr v) { return MakeBufferStore(acc, std::move(v), {zero}); };
    Expr rhs = Substitute(r->rhs, bindings);
    Stmt partial = store(r->Combine(load(), rhs));
    for (auto it = serial.rbegin(); it != serial.rend(); ++it) partial = WithBody(*it, partial);
    std::vector<Stmt> steps = {store(r->identity), partial};
    Buffer slots;
    Allreduce(*r, reducing, threads, acc, block->name + "_red_shared", &steps, &slots);
    // The result meets C.
    std::vector<Expr> indices;
    for (const Expr& e : r->indices) indices.push_back(Substitute(e, bindings));
    Expr first;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      if (iv.kind != IterKind::kReduce) continue;
      Expr c = analyzer.Simplify(
          Eq(Substitute(realize->iter_values[i], at_start), iv.dom.min));
      first = first.defined() ? (first && c) : c;
    }
    first = analyzer.Simplify(first);
    Stmt write = MakeBufferStore(r->buffer, load(), indices);
    if (!IsConstInt(first, 1)) {
      write = MakeIfThenElse(first, write,
                             MakeBufferStore(r->buffer,
                                             r->Combine(MakeBufferLoad(r->buffer, indices), load()),
                                             indices));
    }
    Expr guard = Substitute(realize->predicate, bindings);
    if (r->buffer->scope != StorageScope::kLocal) {
      for (const ForNode* f : reducing) guard = guard && Eq(f->loop_var, f->min);
    }
    guard = analyzer.Simplify(guard);
    if (!IsConstInt(guard, 1)) write = MakeIfThenElse(guard, write);
    steps.push_back(write);
    Stmt body = MakeAllocate(acc, MakeSeq(steps));
    for (auto it = threads.rbegin(); it != threads.rend(); ++it) body = WithBody(*it, body);
    return slots.defined() ? MakeAllocate(slots, body) : body;
  }

  // Appends to `steps` what combines `acc` across the `reducing` loops (a subset of `threads`,
  // the loops around), leaving the total in every thread's acc; `*slots` is the shared buffer
  // used, if any, named `slot_name`.
  static void Allreduce(const BlockReduction& r, const std::vector<const ForNode*>& reducing,
                        const std::vector<const ForNode*>& threads, const Buffer& acc,
                        const std::string& slot_name, std::vector<Stmt>* steps, Buffer* slots) {
    DataType t = acc->dtype;
    DataType index = DataType::Index();
    Expr zero = IntImm(index, 0);
    auto load = [&] { return MakeBufferLoad(acc, {zero}); };
    auto store = [&](Expr v) { return MakeBufferStore(acc, std::move(v), {zero}); };
    // Extents and the position of each thread in CUDA's order (x fastest).
    auto extent = [](const ForNode* f) { return *AsConstInt(f->extent); };
    std::vector<const ForNode*> ordered = threads;
    std::sort(ordered.begin(), ordered.end(), [](const ForNode* a, const ForNode* b) {
      return a->thread_tag < b->thread_tag;
    });
    for (const ForNode* f : ordered) {
      if (AsConstInt(f->extent) == nullptr || !IsConstInt(f->min, 0)) {
        TT_USER_ERROR("thread loop '{}' has no constant extent from 0", f->loop_var->name);
      }
    }
    // `linear` with the given loops' variables replaced (the others stay).
    auto linear = [&](const VarMap& replace) {
      Expr l = zero;
      int64_t scale = 1;
      for (const ForNode* f : ordered) {
        Expr v = replace.count(f->loop_var.get()) ? replace.at(f->loop_var.get()) : f->loop_var;
        l = l + v * IntImm(index, scale);
        scale *= extent(f);
      }
      return l;
    };
    int64_t block_threads = 1;
    for (const ForNode* f : ordered) block_threads *= extent(f);
    const ForNode* x = reducing.size() == 1 && reducing[0]->thread_tag == "threadIdx.x"
                           ? reducing[0]
                           : nullptr;
    int64_t n = x ? extent(x) : 0;
    bool shuffles = x != nullptr && n >= 2 && (n & (n - 1)) == 0 && t.bits() >= 32 &&
                    (t.is_float() || t.is_int());
    if (shuffles) {
      for (int64_t mask = std::min(n, kWarp) / 2; mask >= 1; mask /= 2) {
        steps->push_back(store(r.Combine(
            load(), MakeCall(Intrinsic::kWarpShuffleXor, {load(), IntImm(index, mask)}))));
      }
      if (n <= kWarp) return;
      // One slot per warp; a group of n threads (x from 0) holds n/32 consecutive warps.
      *slots = Buffer(slot_name, t,
                      {IntImm(index, block_threads / kWarp)}, StorageScope::kShared);
      Expr me = linear({});
      Stmt put = MakeBufferStore(*slots, load(), {FloorDiv(me, IntImm(index, kWarp))});
      steps->push_back(MakeIfThenElse(Eq(FloorMod(x->loop_var, IntImm(index, kWarp)), zero), put));
      Expr group = FloorDiv(linear({{x->loop_var.get(), zero}}), IntImm(index, kWarp));
      steps->push_back(store(MakeBufferLoad(*slots, {group})));
      Var w("w", index);
      steps->push_back(MakeFor(w, IntImm(index, 1), IntImm(index, n / kWarp - 1), ForKind::kSerial,
                               store(r.Combine(load(), MakeBufferLoad(*slots, {group + w})))));
      return;
    }
    // Shared memory: a slot per thread; each thread combines its group's slots.
    *slots = Buffer(slot_name, t,
                    {IntImm(index, block_threads)}, StorageScope::kShared);
    steps->push_back(MakeBufferStore(*slots, load(), {linear({})}));
    VarMap others;
    std::vector<Var> vars;
    for (const ForNode* f : reducing) {
      vars.emplace_back(f->loop_var->name + "_r", index);
      others[f->loop_var.get()] = vars.back();
    }
    Stmt gather = store(r.Combine(load(), MakeBufferLoad(*slots, {linear(others)})));
    for (size_t i = reducing.size(); i-- > 0;) {
      gather = MakeFor(vars[i], zero, reducing[i]->extent, ForKind::kSerial, gather);
    }
    steps->push_back(store(r.identity));
    steps->push_back(gather);
  }

  std::vector<const ForNode*> loops_;  // the loops around the statement visited
};

}  // namespace

PrimFunc LowerCrossThreadReduction(const PrimFunc& func) {
  return func.WithBody(Lowerer().VisitStmt(func->body));
}

}  // namespace tirtune
