// CompactBufferAllocations: each Allocate moves down to the lowest statement that still contains
// every use of its buffer, and the buffer shrinks to the region accessed there, its indices offset
// by the region's start. A cache stage computed under tile loops thereby becomes a tile-sized
// buffer allocated inside those loops.
//
//   with allocate(C_local, (16, 12), float32):    for i0 in range(4):
//     for i0 in range(4):                             with allocate(C_local, (4, 12), float32):
//       for i1 in range(4):                               for i1 in range(4):
//         for j in range(12):                                 for j in range(12):
//           C_local[i0 * 4 + i1, j] = ...                         C_local[i1, j] = ...
//       for ax0 in range(4):                              for ax0 in range(4):
//         for ax1 in range(12):                               for ax1 in range(12):
//           C[i0 * 4 + ax0, ax1] =                                C[i0 * 4 + ax0, ax1] =
//               C_local[i0 * 4 + ax0, ax1]                            C_local[ax0, ax1]
//
// Moving an allocation into a loop gives every iteration its own buffer, which is only right when
// no value flows from one iteration to another. The pass proves that by finding a dimension in
// which each iteration touches its own window [a*v + c, a*v + c + |a|) of the loop variable v;
// otherwise (an accumulator indexed the same way in every iteration of a reduction loop) the
// allocation stays above the loop. A parallel loop is the exception: its iterations must not
// depend on each other anyway, and an allocation shared by them would be a data race, so the
// allocation always moves into it. It never moves into unrolled or vectorized loops, which later
// passes expand. Thread-bound loops keep every allocation above them on the CPU; for a GPU
// (AllocationPlacement::kGpu), where their iterations are threads, shared and local buffers move
// into blockIdx loops (one copy per block), local buffers into threadIdx and vthread loops (one
// per thread) and shared buffers stay above those (one per block, whichever thread touches it),
// compacted to the region where they would go further down (a loop under the threads whose
// iterations use their own part), with the threadIdx and vthread loops relaxed: a GEMM's A tile
// fetched per slice of K under the thread loops is the block's tile of that slice. A
// dimension keeps its full extent when the accessed extent is not bounded by a constant smaller
// than it. Strides are padded as storage_align requested (storage_align.cc) for the compacted
// shape; a buffer declared with explicit strides keeps them.
#include <algorithm>
#include <optional>
#include <unordered_set>

#include "storage_align.h"
#include "tirtune/arith/analyzer.h"
#include "tirtune/arith/int_set.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

bool UsesBuffer(const Stmt& s, const BufferNode* buffer) {
  bool found = false;
  PreOrderVisit(s, [&](const Object* node) {
    if (found) return false;
    if (const auto* load = node->as<BufferLoadNode>()) found = load->buffer.get() == buffer;
    if (const auto* store = node->as<BufferStoreNode>()) found = store->buffer.get() == buffer;
    return !found;
  });
  return found;
}

bool UsesBuffer(const Expr& e, const BufferNode* buffer) {
  return UsesBuffer(MakeEvaluate(e), buffer);
}

// The region of `buffer` accessed under a statement, one interval per dimension, with the loops
// inside the statement relaxed over their ranges. An interval is Everything() where it depends
// on a variable defined inside the statement that could not be relaxed.
class RegionCollector : public StmtVisitor {
 public:
  RegionCollector(const BufferNode* buffer, arith::Analyzer* analyzer)
      : buffer_(buffer), analyzer_(analyzer) {}
  using StmtVisitor::VisitExpr_;
  using StmtVisitor::VisitStmt_;

  /// Nullopt when the statement does not access the buffer.
  std::optional<std::vector<arith::IntSet>> Collect(const Stmt& s) {
    VisitStmt(s);
    for (const std::vector<Expr>& indices : accesses_) {
      std::vector<arith::IntSet> sets;
      for (const Expr& index : indices) {
        arith::IntSet set = arith::EvalSet(index, dom_, analyzer_);
        bool inner = (set.HasLowerBound() && UsesInnerVar(set.min())) ||
                     (set.HasUpperBound() && UsesInnerVar(set.max()));
        sets.push_back(inner ? arith::IntSet::Everything() : set);
      }
      if (!region_) {
        region_ = std::move(sets);
      } else {
        for (size_t d = 0; d < sets.size(); ++d) {
          (*region_)[d] = arith::Union((*region_)[d], sets[d], analyzer_);
        }
      }
    }
    return region_;
  }

  /// Relaxes `var` over `range` as if it were a loop inside the statement (a GPU thread index
  /// for a shared buffer, whose one copy serves every thread).
  void Relax(const Var& var, const Range& range) { dom_[var] = range; }

  /// The indices of every access of the buffer that Collect saw.
  const std::vector<std::vector<Expr>>& accesses() const { return accesses_; }

  void VisitStmt_(const ForNode* op) override {
    dom_[op->loop_var] = Range{op->min, op->extent};
    inner_vars_.insert(op->loop_var.get());
    StmtVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    inner_vars_.insert(op->var.get());
    StmtVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const LetNode* op) override {
    inner_vars_.insert(op->var.get());
    StmtVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) accesses_.push_back(op->indices);
    StmtVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    if (op->buffer.get() == buffer_) accesses_.push_back(op->indices);
    StmtVisitor::VisitStmt_(op);
  }

 private:
  bool UsesInnerVar(const Expr& e) const {
    return UsesVar(e, [&](const VarNode* v) { return inner_vars_.count(v) > 0; });
  }

  const BufferNode* buffer_;
  arith::Analyzer* analyzer_;
  arith::VarRangeMap dom_;
  std::unordered_set<const VarNode*> inner_vars_;
  std::vector<std::vector<Expr>> accesses_;
  std::optional<std::vector<arith::IntSet>> region_;
};

// Rewrites the accesses of one buffer to a compacted buffer: index[d] - offset[d].
class AccessOffsetter : public StmtMutator {
 public:
  AccessOffsetter(const BufferNode* from, Buffer to, std::vector<Expr> offsets)
      : from_(from), to_(std::move(to)), offsets_(std::move(offsets)) {}
  using StmtMutator::VisitExpr_;
  using StmtMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr visited = StmtMutator::VisitExpr_(op);
    const auto* load = visited.as<BufferLoadNode>();
    if (load->buffer.get() != from_) return visited;
    return MakeBufferLoad(to_, Offset(load->indices));
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt visited = StmtMutator::VisitStmt_(op);
    const auto* store = visited.as<BufferStoreNode>();
    if (store->buffer.get() != from_) return visited;
    return MakeBufferStore(to_, store->value, Offset(store->indices));
  }

 private:
  std::vector<Expr> Offset(const std::vector<Expr>& indices) const {
    std::vector<Expr> out;
    for (size_t d = 0; d < indices.size(); ++d) {
      out.push_back(IsConstInt(offsets_[d], 0)
                        ? indices[d]
                        : analyzer_.Simplify(indices[d] - Cast(indices[d].dtype(), offsets_[d])));
    }
    return out;
  }

  const BufferNode* from_;
  Buffer to_;
  std::vector<Expr> offsets_;
  mutable arith::Analyzer analyzer_;
};

// Rewrites the accesses of a local buffer compacted per thread (AllocatePerThread): index[d]
// becomes (index[d] - offset[d]) / stride[d], the offsets' canonical thread variables replaced by
// the enclosing threadIdx or vthread loop of their tag, after one leading index per vthread axis
// (that loop's variable). Not ok() when an access's offset needs a thread index no enclosing
// loop defines.
class ThreadAccessRewriter : public StmtMutator {
 public:
  ThreadAccessRewriter(const BufferNode* from, Buffer to, std::vector<Expr> offsets,
                       std::vector<int64_t> strides,
                       const std::unordered_map<std::string, Var>& canonical,
                       std::vector<const VarNode*> leading)
      : from_(from), to_(std::move(to)), offsets_(std::move(offsets)),
        strides_(std::move(strides)), canonical_(canonical), leading_(std::move(leading)) {}
  using StmtMutator::VisitExpr_;
  using StmtMutator::VisitStmt_;

  bool ok() const { return ok_; }

  Stmt VisitStmt_(const ForNode* op) override {
    bool thread = op->for_kind == ForKind::kThreadBinding && canonical_.count(op->thread_tag);
    std::optional<Expr> saved;
    if (thread) {
      auto found = current_.find(canonical_.at(op->thread_tag).get());
      if (found != current_.end()) saved = found->second;
      current_[canonical_.at(op->thread_tag).get()] = op->loop_var;
    }
    Stmt visited = StmtMutator::VisitStmt_(op);
    if (thread) {
      if (saved) {
        current_[canonical_.at(op->thread_tag).get()] = *saved;
      } else {
        current_.erase(canonical_.at(op->thread_tag).get());
      }
    }
    return visited;
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr visited = StmtMutator::VisitExpr_(op);
    const auto* load = visited.as<BufferLoadNode>();
    if (load->buffer.get() != from_) return visited;
    return MakeBufferLoad(to_, Rewrite(load->indices));
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt visited = StmtMutator::VisitStmt_(op);
    const auto* store = visited.as<BufferStoreNode>();
    if (store->buffer.get() != from_) return visited;
    return MakeBufferStore(to_, store->value, Rewrite(store->indices));
  }

 private:
  std::vector<Expr> Rewrite(const std::vector<Expr>& indices) {
    std::vector<Expr> out;
    for (const VarNode* v : leading_) {
      auto found = current_.find(v);
      if (found == current_.end()) {
        ok_ = false;  // an access outside the vthread loop
        out.push_back(IntImm(DataType::Index(), 0));
      } else {
        out.push_back(Cast(DataType::Index(), found->second));
      }
    }
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr offset = Substitute(offsets_[d], [&](const VarNode* v) -> Expr {
        auto found = current_.find(v);
        if (found != current_.end()) return found->second;
        for (const auto& [tag, var] : canonical_) {
          if (var.get() == v) ok_ = false;  // a thread index no enclosing loop defines
        }
        return Expr();
      });
      Expr rel = indices[d] - Cast(indices[d].dtype(), offset);
      if (strides_[d] != 1) rel = FloorDiv(rel, IntImm(indices[d].dtype(), strides_[d]));
      out.push_back(analyzer_.Simplify(rel));
    }
    return out;
  }

  const BufferNode* from_;
  Buffer to_;
  std::vector<Expr> offsets_;
  std::vector<int64_t> strides_;
  const std::unordered_map<std::string, Var>& canonical_;
  // The canonical variables of the vthread axes, whose loops index the leading dimensions.
  std::vector<const VarNode*> leading_;
  std::unordered_map<const VarNode*, Expr> current_;
  bool ok_ = true;
  arith::Analyzer analyzer_;
};

class AllocationCompactor : public StmtMutator {
 public:
  AllocationCompactor(const StorageAlignRequests& align, AllocationPlacement placement)
      : align_(align), placement_(placement) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    enclosing_.push_back(op);
    Stmt body = VisitStmt(op->body);
    enclosing_.pop_back();
    return WithBody(op, body);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    // Inner allocations first; this one then sinks through what they became.
    return Sink(op->buffer, VisitStmt(op->body));
  }

 private:
  // Places the allocation of `buffer` as deep inside `s` as its uses allow.
  Stmt Sink(const Buffer& buffer, const Stmt& s) {
    const BufferNode* b = buffer.get();
    if (const auto* seq = s.as<SeqStmtNode>()) {
      int user = -1, users = 0;
      for (size_t i = 0; i < seq->seq.size(); ++i) {
        if (UsesBuffer(seq->seq[i], b)) {
          user = static_cast<int>(i);
          ++users;
        }
      }
      if (users == 0) return s;  // nobody uses the buffer: no allocation at all
      if (users > 1) return AllocateHere(buffer, s);
      std::vector<Stmt> children = seq->seq;
      children[user] = Sink(buffer, children[user]);
      return MakeSeq(std::move(children));
    }
    if (const auto* loop = s.as<ForNode>()) {
      // A parallel loop whose iterations shared elements of the buffer would race, unless
      // no value flows between them; then each iteration may as well have its own copy.
      bool movable = loop->for_kind == ForKind::kParallel ||
                     (loop->for_kind == ForKind::kSerial && IterationPrivate(buffer, loop)) ||
                     (loop->for_kind == ForKind::kThreadBinding && MovesIntoThreads(buffer, loop));
      if (!movable || UsesBuffer(loop->min, b) || UsesBuffer(loop->extent, b)) {
        return AllocateHere(buffer, s);
      }
      enclosing_.push_back(loop);
      Stmt body = Sink(buffer, loop->body);
      enclosing_.pop_back();
      Stmt out = WithBody(loop, body);
      // A shared buffer is one per GPU block: compacted below the thread loops (its region
      // relaxed over them), it is allocated above them.
      if (IsThreadLoop(loop) && buffer->scope == StorageScope::kShared) {
        auto placed = placed_.find(b);
        if (placed != placed_.end()) {
          out = MakeAllocate(placed->second, RemoveAllocation(out, placed->second.get()));
        }
      }
      return out;
    }
    if (const auto* branch = s.as<IfThenElseNode>()) {
      bool in_then = UsesBuffer(branch->then_case, b);
      bool in_else = branch->else_case.defined() && UsesBuffer(branch->else_case, b);
      if (UsesBuffer(branch->condition, b) || in_then == in_else) return AllocateHere(buffer, s);
      if (in_then)
        return MakeIfThenElse(branch->condition, Sink(buffer, branch->then_case),
                              branch->else_case);
      return MakeIfThenElse(branch->condition, branch->then_case, Sink(buffer, branch->else_case));
    }
    if (const auto* let = s.as<LetStmtNode>()) {
      if (UsesBuffer(let->value, b)) return AllocateHere(buffer, s);
      return MakeLetStmt(let->var, let->value, Sink(buffer, let->body));
    }
    if (const auto* alloc = s.as<AllocateNode>()) {
      return MakeAllocate(alloc->buffer, Sink(buffer, alloc->body));
    }
    return AllocateHere(buffer, s);
  }

  // Whether a GPU allocation moves into a thread-bound loop (see the file comment). A shared
  // buffer goes through threadIdx and vthread loops only to find where its region is compacted;
  // its Allocate ends above them (Sink).
  bool MovesIntoThreads(const Buffer& buffer, const ForNode* loop) const {
    if (placement_ != AllocationPlacement::kGpu) return false;
    switch (buffer->scope) {
      case StorageScope::kLocal:
      case StorageScope::kShared:
        return true;
      case StorageScope::kGlobal:
        return false;
    }
    return false;
  }

  static bool IsThreadLoop(const ForNode* loop) {
    return loop->for_kind == ForKind::kThreadBinding &&
           (loop->thread_tag.rfind("threadIdx.", 0) == 0 ||
            loop->thread_tag.rfind("vthread", 0) == 0);
  }

  // For a shared GPU buffer, the enclosing threadIdx and vthread loops are relaxed like loops
  // inside the statement: the region is what every thread of the block touches.
  void RelaxThreads(const Buffer& buffer, RegionCollector* collector) const {
    if (placement_ != AllocationPlacement::kGpu || buffer->scope != StorageScope::kShared) return;
    for (const ForNode* loop : enclosing_) {
      if (IsThreadLoop(loop)) collector->Relax(loop->loop_var, Range{loop->min, loop->extent});
    }
  }

  // `s` without the Allocate of `allocated`.
  static Stmt RemoveAllocation(const Stmt& s, const BufferNode* allocated) {
    class Remover : public StmtMutator {
     public:
      explicit Remover(const BufferNode* buffer) : buffer_(buffer) {}
      using StmtMutator::VisitStmt_;
      Stmt VisitStmt_(const AllocateNode* op) override {
        if (op->buffer.get() == buffer_) return VisitStmt(op->body);
        return StmtMutator::VisitStmt_(op);
      }

     private:
      const BufferNode* buffer_;
    };
    return Remover(allocated).VisitStmt(s);
  }

  // An analyzer that knows the ranges of the loops around the current position.
  arith::Analyzer EnclosingFacts() const {
    arith::Analyzer analyzer;
    for (const ForNode* loop : enclosing_) {
      analyzer.Bind(loop->loop_var, Range{loop->min, loop->extent});
    }
    return analyzer;
  }

  // True when the iterations of `loop` access disjoint parts of `buffer`: in some dimension the
  // region accessed by iteration v lies in [a*v + c, a*v + c + |a|).
  bool IterationPrivate(const Buffer& buffer, const ForNode* loop) {
    arith::Analyzer analyzer = EnclosingFacts();
    analyzer.Bind(loop->loop_var, Range{loop->min, loop->extent});
    RegionCollector collector(buffer.get(), &analyzer);
    RelaxThreads(buffer, &collector);
    auto region = collector.Collect(loop->body);
    if (!region) return true;
    const Var& v = loop->loop_var;
    VarMap next{{v.get(), v + 1}};
    for (const arith::IntSet& set : *region) {
      if (!set.HasLowerBound() || !set.HasUpperBound()) continue;
      Expr lo = set.min(), hi = set.max();
      Expr step_lo = analyzer.Simplify(Substitute(lo, next) - lo);
      Expr step_hi = analyzer.Simplify(Substitute(hi, next) - hi);
      Expr span_expr = analyzer.Simplify(hi - lo);
      const int64_t* a = AsConstInt(step_lo);
      const int64_t* a_hi = AsConstInt(step_hi);
      const int64_t* span = AsConstInt(span_expr);
      if (a == nullptr || a_hi == nullptr || span == nullptr || *a == 0 || *a != *a_hi) continue;
      if (*span >= 0 && *span < (*a > 0 ? *a : -*a)) return true;
    }
    return false;
  }

  // Allocates `buffer` around `s`, shrunk to the region `s` accesses.
  Stmt AllocateHere(const Buffer& buffer, const Stmt& s) {
    if (placement_ == AllocationPlacement::kGpu && buffer->scope == StorageScope::kLocal) {
      if (std::optional<Stmt> per_thread = AllocatePerThread(buffer, s)) return *per_thread;
    }
    arith::Analyzer analyzer = EnclosingFacts();
    RegionCollector collector(buffer.get(), &analyzer);
    RelaxThreads(buffer, &collector);
    auto region = collector.Collect(s);
    if (!region) return s;
    std::vector<Expr> shape, offsets;
    bool changed = false;
    for (int d = 0; d < buffer->ndim(); ++d) {
      const arith::IntSet& set = (*region)[d];
      const int64_t* full = AsConstInt(buffer->shape[d]);
      std::optional<int64_t> extent;
      if (full != nullptr && set.HasLowerBound() && set.HasUpperBound()) {
        arith::IntBound bound = analyzer.ConstIntBound(analyzer.Simplify(set.max() - set.min()));
        if (bound.has_max() && bound.max_value + 1 < *full) {
          extent = std::max<int64_t>(bound.max_value + 1, 1);
        }
      }
      if (!extent) {
        shape.push_back(buffer->shape[d]);
        offsets.push_back(IntImm(DataType::Index(), 0));
        continue;
      }
      changed = true;
      shape.push_back(IntImm(buffer->shape[d].dtype(), *extent));
      offsets.push_back(analyzer.Simplify(set.min()));
    }
    // Strides: padded as storage_align asks for the new shape, or the buffer's own explicit
    // strides (the compacted box keeps its layout within the original one).
    std::vector<Expr> strides = buffer->strides;
    auto requests = align_.find(buffer.get());
    if (requests != align_.end() && strides.empty()) {
      strides = lower::AlignedStrides(shape, requests->second);
    }
    if (!changed && strides.size() == buffer->strides.size()) {
      placed_[buffer.get()] = buffer;
      return MakeAllocate(buffer, s);
    }
    Buffer compact = buffer.WithShape(shape);
    if (!strides.empty()) compact = compact.WithStrides(strides);
    placed_[buffer.get()] = compact;
    return MakeAllocate(compact, AccessOffsetter(buffer.get(), compact, offsets).VisitStmt(s));
  }

  // A local GPU buffer allocated above threadIdx loops: every thread has its own copy, so the
  // copy need only hold the region one thread accesses, with the thread indices fixed (the loops
  // of one tag are the same thread index, whichever loop). A dimension a thread walks with a
  // stride (its elements `threads` apart, so that a warp's accesses are adjacent) is divided by
  // the stride. vthread loops count as threads too, with one copy per vthread (a leading
  // dimension): a thread's tiles of a GEMM that vthreads place far apart take no more registers
  // than the tiles themselves. Nullopt when `s` has no threadIdx or vthread loop or the
  // per-thread region is not a box of constant size.
  std::optional<Stmt> AllocatePerThread(const Buffer& buffer, const Stmt& s) {
    std::unordered_map<std::string, Var> canonical;
    std::unordered_map<std::string, Expr> thread_extent;
    VarMap to_canonical;
    bool consistent = true;
    PreOrderVisit(s, [&](const Object* node) {
      const auto* loop = node->as<ForNode>();
      if (loop == nullptr || loop->for_kind != ForKind::kThreadBinding ||
          (loop->thread_tag.rfind("threadIdx.", 0) != 0 &&
           loop->thread_tag.rfind("vthread", 0) != 0)) {
        return true;
      }
      auto [it, fresh] = canonical.try_emplace(loop->thread_tag,
                                               Var(loop->thread_tag, loop->loop_var.dtype()));
      if (fresh) {
        thread_extent[loop->thread_tag] = loop->extent;
      } else if (!IsConstInt(thread_extent[loop->thread_tag], *AsConstInt(loop->extent))) {
        consistent = false;
      }
      if (!IsConstInt(loop->min, 0) || AsConstInt(loop->extent) == nullptr) consistent = false;
      to_canonical[loop->loop_var.get()] = it->second;
      return true;
    });
    if (canonical.empty() || !consistent || align_.count(buffer.get())) return std::nullopt;
    arith::Analyzer analyzer = EnclosingFacts();
    for (const auto& [tag, var] : canonical) analyzer.Bind(var, Range{0, thread_extent[tag]});
    Stmt canonical_body = Substitute(s, to_canonical);
    RegionCollector collector(buffer.get(), &analyzer);
    auto region = collector.Collect(canonical_body);
    if (!region) return std::nullopt;
    std::vector<Expr> shape, offsets;
    std::vector<int64_t> strides;
    const std::vector<std::vector<Expr>>& accesses = collector.accesses();
    for (int d = 0; d < buffer->ndim(); ++d) {
      const arith::IntSet& set = (*region)[d];
      if (!set.HasLowerBound() || !set.HasUpperBound()) return std::nullopt;
      Expr span_expr = analyzer.Simplify(set.max() - set.min());
      const int64_t* span = AsConstInt(span_expr);
      if (span == nullptr) return std::nullopt;
      Expr min = analyzer.Simplify(set.min());
      // The largest stride every access's offset in this dimension is a multiple of (a divisor
      // of the span; a span past the buffer's extent is not worth compacting).
      const int64_t* full = AsConstInt(buffer->shape[d]);
      if (full == nullptr || *span < 0 || *span >= *full) return std::nullopt;
      int64_t stride = 1;
      for (int64_t c = *span; c > 1; --c) {
        if (*span % c != 0) continue;
        bool all = true;
        for (const std::vector<Expr>& index : accesses) {
          Expr rest = analyzer.Simplify(FloorMod(index[d] - Cast(index[d].dtype(), min),
                                                 IntImm(index[d].dtype(), c)));
          if (!IsConstInt(rest, 0)) {
            all = false;
            break;
          }
        }
        if (all) {
          stride = c;
          break;
        }
      }
      shape.push_back(IntImm(buffer->shape[d].dtype(), *span / stride + 1));
      offsets.push_back(min);
      strides.push_back(stride);
    }
    // A vthread is a serial loop of each thread: every one of its iterations keeps its own copy,
    // one leading dimension per vthread axis indexed by that loop's variable.
    std::vector<const VarNode*> leading;
    std::vector<std::string> tags;
    for (const auto& [tag, var] : canonical) tags.push_back(tag);
    std::sort(tags.begin(), tags.end());
    std::vector<Expr> full_shape;
    for (const std::string& tag : tags) {
      if (tag.rfind("vthread", 0) != 0) continue;
      leading.push_back(canonical.at(tag).get());
      full_shape.push_back(IntImm(DataType::Index(), *AsConstInt(thread_extent.at(tag))));
    }
    full_shape.insert(full_shape.end(), shape.begin(), shape.end());
    Buffer compact = buffer.WithShape(full_shape).WithStrides({});
    ThreadAccessRewriter rewriter(buffer.get(), compact, offsets, strides, canonical, leading);
    Stmt body = rewriter.VisitStmt(s);
    if (!rewriter.ok()) return std::nullopt;
    return MakeAllocate(compact, body);
  }

  const StorageAlignRequests& align_;
  AllocationPlacement placement_;
  std::vector<const ForNode*> enclosing_;
  // The Allocate each buffer got from AllocateHere (the buffer itself or its compacted box).
  std::unordered_map<const BufferNode*, Buffer> placed_;
};

}  // namespace

PrimFunc CompactBufferAllocations(const PrimFunc& func, const StorageAlignRequests& align,
                                  AllocationPlacement placement) {
  return func.WithBody(AllocationCompactor(align, placement).VisitStmt(func->body));
}

}  // namespace tirtune
