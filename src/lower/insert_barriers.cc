// InsertBarriers: puts `sync_threads()` between code that writes a shared buffer and later code
// that reads it, and between code that reads one and later code that writes it, where different
// threads may be on either side. Statements are compared
// by the shared buffers they touch (conservatively: any two accesses of one buffer conflict
// unless one thread's sequential code makes both), and only where every thread of the block
// arrives: in sequences not under a condition or loop bound that depends on threadIdx. A loop
// whose body reads, at its end, what its beginning overwrites gets a barrier at the end of its
// body (the back edge of a k-loop that refills a shared tile).
//
//   for ko in range(16):                          for ko in range(16):
//     A_sh[threadIdx_x] = A[...]                    A_sh[threadIdx_x] = A[...]
//     for k in range(32):                           sync_threads()
//       C_l[0] = C_l[0] + A_sh[k] * ...             for k in range(32):
//                                                     C_l[0] = C_l[0] + A_sh[k] * ...
//                                                   sync_threads()
#include <set>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/lower_gpu.h"

namespace tirtune {
namespace {

// Shared buffers read and written.
struct AccessSet {
  std::set<const BufferNode*> reads, writes;
  void Add(const AccessSet& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  bool empty() const { return reads.empty() && writes.empty(); }
  // Whether `later`, running after this without a barrier, may read what this wrote or
  // overwrite what this read. Two writes are not separated (as in TVM): threads that write the
  // same element twice in one phase are a race the executor reports, not a missing barrier.
  bool ConflictsWith(const AccessSet& later) const {
    for (const BufferNode* b : writes) {
      if (later.reads.count(b)) return true;
    }
    for (const BufferNode* b : reads) {
      if (later.writes.count(b)) return true;
    }
    return false;
  }
};

// What a statement does to shared memory, seen from outside: the accesses before its first
// barrier (head) and after its last (tail); without a barrier both are all of them.
struct Summary {
  bool has_barrier = false;
  AccessSet head, tail;
};

class BarrierInserter {
 public:
  explicit BarrierInserter(const GpuKernel& kernel) {
    for (const Buffer& b : kernel.shared) shared_.insert(b.get());
    for (const Var& v : kernel.thread_idx) divergent_.insert(v.get());
  }

  Stmt Run(const Stmt& body) {
    Summary unused;
    return Plan(body, /*uniform=*/true, &unused);
  }

 private:
  // Rewrites `s` (inserting barriers where `uniform`) and summarizes it.
  Stmt Plan(const Stmt& s, bool uniform, Summary* out) {
    if (const auto* seq = s.as<SeqStmtNode>()) return PlanSeq(seq, uniform, out);
    if (const auto* loop = s.as<ForNode>()) {
      bool body_uniform = uniform && !Divergent(loop->min) && !Divergent(loop->extent);
      Summary body;
      Stmt new_body = Plan(loop->body, body_uniform, &body);
      const int64_t* extent = AsConstInt(loop->extent);
      bool repeats = extent == nullptr || *extent > 1;
      if (body_uniform && repeats && body.tail.ConflictsWith(body.head)) {
        new_body = MakeSeq({new_body, MakeBarrier()});
        body.has_barrier = true;
        body.tail = AccessSet();
      }
      *out = body;
      if (new_body.same_as(loop->body)) return s;
      return MakeFor(loop->loop_var, loop->min, loop->extent, loop->for_kind, new_body,
                     loop->thread_tag, loop->annotations);
    }
    if (const auto* branch = s.as<IfThenElseNode>()) {
      bool inner_uniform = uniform && !Divergent(branch->condition);
      Summary then_s, else_s;
      Stmt then_case = Plan(branch->then_case, inner_uniform, &then_s);
      Stmt else_case;
      if (branch->else_case.defined()) else_case = Plan(branch->else_case, inner_uniform, &else_s);
      out->has_barrier = then_s.has_barrier || else_s.has_barrier;
      out->head = then_s.head;
      out->head.Add(else_s.head);
      out->tail = then_s.tail;
      out->tail.Add(else_s.tail);
      AccessSet cond = Accesses(MakeEvaluate(branch->condition));
      out->head.Add(cond);
      if (!out->has_barrier) out->tail.Add(cond);
      if (then_case.same_as(branch->then_case) && else_case.same_as(branch->else_case)) return s;
      return MakeIfThenElse(branch->condition, then_case, else_case);
    }
    if (const auto* let = s.as<LetStmtNode>()) {
      if (Divergent(let->value)) divergent_.insert(let->var.get());
      Stmt body = Plan(let->body, uniform, out);
      return body.same_as(let->body) ? s : MakeLetStmt(let->var, let->value, body);
    }
    if (const auto* alloc = s.as<AllocateNode>()) {
      Stmt body = Plan(alloc->body, uniform, out);
      return body.same_as(alloc->body) ? s : MakeAllocate(alloc->buffer, body);
    }
    if (s.as<BarrierNode>() != nullptr) {
      *out = Summary{/*has_barrier=*/true, {}, {}};
      return s;
    }
    AccessSet all = Accesses(s);
    *out = Summary{/*has_barrier=*/false, all, all};
    return s;
  }

  Stmt PlanSeq(const SeqStmtNode* seq, bool uniform, Summary* out) {
    std::vector<Stmt> stmts;
    AccessSet pending;  // since the last barrier of this sequence
    AccessSet head;     // before its first barrier
    bool has_barrier = false, changed = false;
    for (const Stmt& child : seq->seq) {
      Summary c;
      Stmt new_child = Plan(child, uniform, &c);
      changed = changed || !new_child.same_as(child);
      if (uniform && pending.ConflictsWith(c.head)) {
        stmts.push_back(MakeBarrier());
        changed = true;
        has_barrier = true;
        pending = AccessSet();
      }
      if (!has_barrier) head.Add(c.head);
      if (c.has_barrier) {
        has_barrier = true;
        pending = c.tail;
      } else {
        pending.Add(c.tail);
      }
      stmts.push_back(new_child);
    }
    *out = Summary{has_barrier, head, pending};
    return changed ? MakeSeq(std::move(stmts)) : GetStmtRef(seq);
  }

  bool Divergent(const Expr& e) const {
    return UsesVar(e, [this](const VarNode* v) { return divergent_.count(v) > 0; });
  }

  AccessSet Accesses(const Stmt& s) const {
    AccessSet a;
    PreOrderVisit(s, [&](const Object* node) {
      if (const auto* load = node->as<BufferLoadNode>()) {
        if (shared_.count(load->buffer.get())) a.reads.insert(load->buffer.get());
      } else if (const auto* store = node->as<BufferStoreNode>()) {
        if (shared_.count(store->buffer.get())) a.writes.insert(store->buffer.get());
      }
      return true;
    });
    return a;
  }

  std::set<const BufferNode*> shared_;
  // threadIdx variables and the let variables computed from them.
  std::set<const VarNode*> divergent_;
};

}  // namespace

GpuKernel InsertBarriers(const GpuKernel& kernel) {
  GpuKernel out = kernel;
  out.body = BarrierInserter(kernel).Run(kernel.body);
  return out;
}

}  // namespace tirtune
