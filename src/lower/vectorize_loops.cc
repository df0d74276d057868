// VectorizeLoops: a vectorized loop with a constant extent becomes its body rewritten over vectors
// of that many lanes. Indices linear in the loop variable become ramps, loop-invariant values stay
// scalar and are broadcast where they meet vectors, arithmetic, casts, intrinsics and selects
// widen lane by lane, an `if` on an invariant condition stays a scalar `if`, and an `if` whose
// condition depends on the lane turns its stores into selects between the new and the old value.
//
//   for j in vectorized(4):                      C[ramp(i * 4, 1, 4)] =
//     C[i * 4 + j] = A[i * 4 + j] * B[i]              A[ramp(i * 4, 1, 4)] * broadcast(B[i], 4)
//
// When the rewrite could change what the loop computes, the loop becomes serial with the
// annotation "pragma_vectorize" = 1 instead (the code generator may still vectorize it):
//  1. the body holds a loop, an allocation, a let, or values that are vectors already;
//  2. an access's index is neither loop-invariant nor linear in the loop variable with a constant
//     stride, or a store's index is invariant while its value is not (C[i] = C[i] + x[j]);
//  3. two accesses of one buffer, at least one a store, could touch the same element from
//     different lanes (so the serial order of the lanes matters), e.g. A[j + 1] = A[j];
//  4. under a lane-dependent `if`, an access is not provably in bounds for every lane or a value
//     divides integers by something other than a constant: the masked lanes evaluate it too;
//  5. the extent is not a constant in [2, 64].
#include <algorithm>
#include <optional>

#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

constexpr int kMaxLanes = 64;

// One buffer access of the widened body: lanes elements base + stride * lane (stride 0: one
// element).
struct Access {
  const BufferNode* buffer;
  Expr base;
  int64_t stride;
  bool store;
};

// True when `s` holds a statement or expression the widening does not handle (rule 1).
bool HasUnwidenableNode(const Stmt& s) {
  bool found = false;
  PreOrderVisit(s, [&](const Object* node) {
    if (found) return false;
    switch (node->kind()) {
      case NodeKind::kFor:
      case NodeKind::kAllocate:
      case NodeKind::kLetStmt:
      case NodeKind::kLet:
      case NodeKind::kBlock:
      case NodeKind::kBlockRealize:
      case NodeKind::kRamp:
      case NodeKind::kBroadcast:
        found = true;
        break;
      default:
        if (const auto* e = node->as<ExprNode>()) found = e->dtype.is_vector();
    }
    return !found;
  });
  return found;
}

// Integer division whose divisor may be zero (rule 4).
bool HasUnsafeDivision(const Expr& e) {
  bool found = false;
  PostOrderVisit(e, [&](const Object* node) {
    NodeKind k = node->kind();
    if (k != NodeKind::kDiv && k != NodeKind::kFloorDiv && k != NodeKind::kFloorMod) return;
    const auto* op = static_cast<const BinaryNode*>(node);
    if (!op->dtype.is_integral()) return;
    const int64_t* d = AsConstInt(op->b);
    found = found || d == nullptr || *d == 0;
  });
  return found;
}

// Widens the body of one vectorized loop; `failed()` says whether it had to give up.
class LoopWidener {
 public:
  LoopWidener(const ForNode* loop, int lanes, arith::Analyzer* analyzer)
      : v_(loop->loop_var), min_(loop->min), lanes_(lanes), analyzer_(analyzer) {}

  bool failed() const { return failed_; }

  Stmt WidenStmt(const Stmt& s) {
    if (failed_) return s;
    if (const auto* store = s.as<BufferStoreNode>()) return WidenStore(store);
    if (const auto* seq = s.as<SeqStmtNode>()) {
      std::vector<Stmt> out;
      for (const Stmt& c : seq->seq) out.push_back(WidenStmt(c));
      return MakeSeq(std::move(out));
    }
    if (const auto* branch = s.as<IfThenElseNode>()) return WidenIf(branch);
    if (const auto* eval = s.as<EvaluateNode>()) {
      if (!UsesLoopVar(eval->value)) return s;
    }
    return Fail(s);
  }

  /// Rule 3: no two accesses of one buffer, one of them a store, meet across lanes.
  bool AccessesIndependent() {
    for (size_t i = 0; i < accesses_.size(); ++i) {
      for (size_t j = i + 1; j < accesses_.size(); ++j) {
        const Access& a = accesses_[i];
        const Access& b = accesses_[j];
        if (a.buffer != b.buffer || (!a.store && !b.store)) continue;
        if (!Independent(a, b)) return false;
      }
    }
    return true;
  }

 private:
  bool UsesLoopVar(const Expr& e) const {
    return UsesVar(e, [&](const VarNode* var) { return var == v_.get(); });
  }

  Stmt Fail(const Stmt& s) {
    failed_ = true;
    return s;
  }
  Expr Fail(const Expr& e) {
    failed_ = true;
    return e;
  }

  Expr Broadcast(const Expr& e) const {
    return e.dtype().is_scalar() ? MakeBroadcast(e, lanes_) : e;
  }

  // The constant stride of an integer expression linear in the loop variable, with its value at
  // the loop's min in `base`; nullopt when it is not linear.
  std::optional<int64_t> LinearStride(const Expr& e, Expr* base) {
    if (!e.dtype().is_scalar() || !e.dtype().is_int()) return std::nullopt;
    Expr at_min = analyzer_->Simplify(Substitute(e, VarMap{{v_.get(), min_}}));
    Expr step = analyzer_->Simplify(Substitute(e, VarMap{{v_.get(), v_ + 1}}) - e);
    const int64_t* s = AsConstInt(step);
    if (s == nullptr) return std::nullopt;
    Expr offset = Cast(e.dtype(), v_ - min_) * IntImm(e.dtype(), *s);
    if (!IsConstInt(analyzer_->Simplify(e - at_min - offset), 0)) return std::nullopt;
    *base = at_min;
    return *s;
  }

  // Records the scalar loads of an invariant expression.
  void RecordInvariantLoads(const Expr& e) {
    PostOrderVisit(e, [&](const Object* node) {
      if (const auto* load = node->as<BufferLoadNode>()) Record(load->buffer, load->indices, 0);
    });
  }

  void Record(const Buffer& buffer, const std::vector<Expr>& indices, int64_t stride,
              bool store = false) {
    if (indices.size() != 1) {
      failed_ = true;  // not flattened: cannot reason about overlaps
      return;
    }
    if (mask_.defined() && !InBounds(buffer, indices[0], stride)) failed_ = true;
    accesses_.push_back(Access{buffer.get(), indices[0], stride, store});
  }

  // Rule 4: base + stride * lane lies inside the buffer for every lane.
  bool InBounds(const Buffer& buffer, const Expr& base, int64_t stride) const {
    const int64_t* size = AsConstInt(buffer->shape[0]);
    arith::IntBound b = analyzer_->ConstIntBound(base);
    if (size == nullptr || !b.has_min() || !b.has_max()) return false;
    int64_t last = stride * (lanes_ - 1);
    return b.min_value + std::min<int64_t>(0, last) >= 0 &&
           b.max_value + std::max<int64_t>(0, last) < *size;
  }

  bool Independent(const Access& a, const Access& b) const {
    if (a.stride == b.stride && a.stride != 0) {
      Expr diff_expr = analyzer_->Simplify(b.base - a.base);
      if (const int64_t* d = AsConstInt(diff_expr)) {
        int64_t s = a.stride > 0 ? a.stride : -a.stride;
        int64_t dist = *d > 0 ? *d : -*d;
        // Same lane, same element (order kept); or lanes that never meet.
        if (*d == 0 || *d % s != 0 || dist >= s * lanes_) return true;
      }
    }
    // Otherwise the two sets of elements must be disjoint.
    auto lo = [&](const Access& x) {
      return x.base + std::min<int64_t>(0, x.stride * (lanes_ - 1));
    };
    auto hi = [&](const Access& x) {
      return x.base + std::max<int64_t>(0, x.stride * (lanes_ - 1));
    };
    return analyzer_->CanProve(hi(a) < lo(b)) || analyzer_->CanProve(hi(b) < lo(a));
  }

  Expr Widen(const Expr& e) {
    if (failed_) return e;
    if (!UsesLoopVar(e)) {
      RecordInvariantLoads(e);
      return e;
    }
    Expr base;
    if (std::optional<int64_t> stride = LinearStride(e, &base)) {
      RecordInvariantLoads(base);
      return *stride == 0 ? base : MakeRamp(base, IntImm(e.dtype(), *stride), lanes_);
    }
    if (const auto* bin = e.as<BinaryNode>()) {
      Expr a = Widen(bin->a), b = Widen(bin->b);
      if (failed_) return e;
      return MakeBinary(e->kind(), Broadcast(a), Broadcast(b));
    }
    switch (e->kind()) {
      case NodeKind::kNot:
        return MakeNot(Widen(e.as<NotNode>()->a));
      case NodeKind::kSelect: {
        const auto* op = e.as<SelectNode>();
        Expr c = Widen(op->cond), t = Widen(op->t), f = Widen(op->f);
        if (failed_) return e;
        return MakeSelect(Broadcast(c), Broadcast(t), Broadcast(f));
      }
      case NodeKind::kCast: {
        const auto* op = e.as<CastNode>();
        Expr value = Widen(op->value);
        if (failed_) return e;
        return MakeCast(op->dtype.with_lanes(lanes_), Broadcast(value));
      }
      case NodeKind::kCall: {
        const auto* op = e.as<CallNode>();
        std::vector<Expr> args;
        for (const Expr& a : op->args) args.push_back(Widen(a));
        if (failed_) return e;
        for (Expr& a : args) a = Broadcast(a);
        return MakeCall(op->op, std::move(args));
      }
      case NodeKind::kBufferLoad: {
        const auto* op = e.as<BufferLoadNode>();
        if (op->indices.size() != 1) return Fail(e);
        std::optional<int64_t> stride = LinearStride(op->indices[0], &base);
        if (!stride) return Fail(e);
        RecordInvariantLoads(base);
        Record(op->buffer, {base}, *stride);
        if (*stride == 0) return MakeBufferLoad(op->buffer, {base});
        return MakeBufferLoad(op->buffer, {MakeRamp(base, IntImm(base.dtype(), *stride), lanes_)});
      }
      default:
        return Fail(e);
    }
  }

  Stmt WidenStore(const BufferStoreNode* store) {
    if (store->indices.size() != 1) return Fail(GetStmtRef(store));
    Expr base;
    std::optional<int64_t> stride = LinearStride(store->indices[0], &base);
    if (!stride) return Fail(GetStmtRef(store));
    RecordInvariantLoads(base);
    if (*stride == 0) {
      // Every lane stores the same element: fine only when they all store the same value.
      if (UsesLoopVar(store->value) || mask_.defined()) return Fail(GetStmtRef(store));
      RecordInvariantLoads(store->value);
      Record(store->buffer, {base}, 0, /*store=*/true);
      return MakeBufferStore(store->buffer, store->value, {base});
    }
    Expr value = Broadcast(Widen(store->value));
    if (failed_) return GetStmtRef(store);
    Expr index = MakeRamp(base, IntImm(base.dtype(), *stride), lanes_);
    if (mask_.defined()) {
      if (HasUnsafeDivision(store->value)) return Fail(GetStmtRef(store));
      Record(store->buffer, {base}, *stride);
      value = MakeSelect(mask_, value, MakeBufferLoad(store->buffer, {index}));
    }
    Record(store->buffer, {base}, *stride, /*store=*/true);
    return MakeBufferStore(store->buffer, value, {index});
  }

  Stmt WidenIf(const IfThenElseNode* branch) {
    if (!UsesLoopVar(branch->condition)) {
      RecordInvariantLoads(branch->condition);
      Stmt then_case = WidenStmt(branch->then_case);
      Stmt else_case = branch->else_case.defined() ? WidenStmt(branch->else_case) : Stmt();
      return MakeIfThenElse(branch->condition, then_case, else_case);
    }
    if (HasUnsafeDivision(branch->condition)) return Fail(GetStmtRef(branch));
    Expr cond = Broadcast(Widen(branch->condition));
    if (failed_) return GetStmtRef(branch);
    Expr outer = mask_;
    auto within = [&](Expr c) {
      return outer.defined() ? MakeBinary(NodeKind::kAnd, outer, c) : c;
    };
    mask_ = within(cond);
    std::vector<Stmt> out{WidenStmt(branch->then_case)};
    if (branch->else_case.defined()) {
      mask_ = within(MakeNot(cond));
      out.push_back(WidenStmt(branch->else_case));
    }
    mask_ = outer;
    return MakeSeq(std::move(out));
  }

  Var v_;
  Expr min_;
  int lanes_;
  arith::Analyzer* analyzer_;
  bool failed_ = false;
  Expr mask_;  // the lanes that run the statement being widened; undefined: all of them
  std::vector<Access> accesses_;
};

class LoopVectorizer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    analyzer_.Bind(op->loop_var, Range{op->min, op->extent});
    Stmt body = VisitStmt(op->body);
    if (op->for_kind == ForKind::kVectorized) {
      std::optional<Stmt> vector = Vectorize(op, body);
      analyzer_.Unbind(op->loop_var);
      if (vector) return *vector;
      Annotations annotations = op->annotations;
      annotations["pragma_vectorize"] = IntImm(DataType::Index(), 1);
      return MakeFor(op->loop_var, op->min, op->extent, ForKind::kSerial, body, "", annotations);
    }
    analyzer_.Unbind(op->loop_var);
    return WithBody(op, body);
  }

 private:
  std::optional<Stmt> Vectorize(const ForNode* op, const Stmt& body) {
    const int64_t* extent = AsConstInt(op->extent);
    if (extent == nullptr || *extent < 2 || *extent > kMaxLanes) return std::nullopt;
    if (HasUnwidenableNode(body)) return std::nullopt;
    LoopWidener widener(op, static_cast<int>(*extent), &analyzer_);
    Stmt vector = widener.WidenStmt(body);
    if (widener.failed() || !widener.AccessesIndependent()) return std::nullopt;
    return vector;
  }

  arith::Analyzer analyzer_;
};

}  // namespace

PrimFunc VectorizeLoops(const PrimFunc& func) {
  return func.WithBody(LoopVectorizer().VisitStmt(func->body));
}

}  // namespace tirtune
