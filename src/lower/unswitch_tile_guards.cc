// UnswitchTileGuards: a split whose factors do not divide the extent guards its blocks with
// `outer * S + inner < extent`, tested on every element: the guarded body does not vectorize and
// costs a compare per element. Where a loop's body holds a runtime loop and every value of the
// loops inside it keeps such a conjunct true as soon as a test of the outer loops passes (a full
// tile), the body is unswitched on that test: the full tiles run a copy without the conjunct, the
// partial tile keeps it, and the partial copy is unswitched further down in the same way.
//
//   for j0 in parallel(32):                      for j0 in parallel(32):
//     for k in range(1023):                          if j0 < 31:
//       for j1 in vectorized(32):                      for k in range(1023):
//         if j0 * 32 + j1 < 1023:                          for j1 in vectorized(32):
//           C[j0 * 32 + j1] += A[k] * B[k, ..]               C[j0 * 32 + j1] += A[k] * B[k, ..]
//                                                      else:
//                                                        for k in range(1023): (guarded, as before)
//
// A conjunct qualifies when it is a comparison of integers in which the variables of the loops
// inside the body appear linearly (sums, differences, products with constants) and nothing loads
// from a buffer or calls a function; its full-tile test is the conjunct with every inner loop at
// its worst value. Inside the full copy, every conjunct the test implies is dropped: the same
// outer part (up to a constant) and an inner part whose worst value is no worse.
//
// The test goes around the body of a loop, never around a body without a serial or parallel loop
// in it (an `if` in the innermost loop keeps LLVM from holding accumulators in registers), never
// inside a vectorized or thread-bound loop, and at most kMaxNestedUnswitch deep on any path, which
// bounds the copies of a body.
#include <algorithm>
#include <map>
#include <optional>

#include "runtime_loops.h"
#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

constexpr int kMaxNestedUnswitch = 4;

// The values a variable defined inside the unswitched body takes: a loop's [min, max], or none
// for a variable (a let) whose values are unknown.
using InnerRanges = std::map<const VarNode*, std::optional<std::pair<int64_t, int64_t>>>;

// A conjunct written as `outer + Σ coeff·inner < 0`, where `outer` uses no inner variable.
struct SplitConjunct {
  Expr outer;
  std::map<const VarNode*, int64_t> coeffs;
};

bool IsPureIndexExpr(const Expr& e) {
  bool pure = true;
  PostOrderVisit(e, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferLoad || node->kind() == NodeKind::kCall) pure = false;
  });
  return pure;
}

// Adds `scale` × the linear decomposition of `e` into `out`; false when an inner variable appears
// other than linearly or a coefficient overflows.
bool Decompose(const Expr& e, int64_t scale, const InnerRanges& inner, SplitConjunct* out) {
  auto is_inner = [&](const VarNode* v) { return inner.count(v) != 0; };
  auto add_outer = [&](const Expr& term) {
    Expr scaled = scale == 1 ? term : MakeBinary(NodeKind::kMul, term, IntImm(term.dtype(), scale));
    out->outer = out->outer.defined() ? MakeBinary(NodeKind::kAdd, out->outer, scaled) : scaled;
    return true;
  };
  if (!UsesVar(e, is_inner)) return add_outer(e);
  switch (e->kind()) {
    case NodeKind::kVar: {
      int64_t& c = out->coeffs[static_cast<const VarNode*>(e.get())];
      return !__builtin_add_overflow(c, scale, &c);
    }
    case NodeKind::kAdd: {
      const auto* add = e.as<AddNode>();
      return Decompose(add->a, scale, inner, out) && Decompose(add->b, scale, inner, out);
    }
    case NodeKind::kSub: {
      const auto* sub = e.as<SubNode>();
      int64_t negated = 0;
      if (__builtin_sub_overflow(int64_t{0}, scale, &negated)) return false;
      return Decompose(sub->a, scale, inner, out) && Decompose(sub->b, negated, inner, out);
    }
    case NodeKind::kMul: {
      const auto* mul = e.as<MulNode>();
      const int64_t* c = AsConstInt(mul->b);
      const Expr* other = &mul->a;
      if (c == nullptr) {
        c = AsConstInt(mul->a);
        other = &mul->b;
      }
      int64_t scaled = 0;
      if (c == nullptr || __builtin_mul_overflow(scale, *c, &scaled)) return false;
      return Decompose(*other, scaled, inner, out);
    }
    default:
      return false;
  }
}

// A qualifying conjunct as `outer + Σ coeff·inner < 0`, or nullopt.
std::optional<SplitConjunct> SplitGuard(const Expr& conjunct, const InnerRanges& inner) {
  const auto* cmp = conjunct.as<BinaryNode>();
  if (cmp == nullptr || !cmp->a.dtype().is_int() || cmp->a.dtype().lanes() != 1 ||
      !IsPureIndexExpr(conjunct)) {
    return std::nullopt;
  }
  Expr lhs, rhs;
  int64_t offset = 0;  // lhs - rhs + offset < 0
  switch (conjunct->kind()) {
    case NodeKind::kLT:
      lhs = cmp->a, rhs = cmp->b;
      break;
    case NodeKind::kLE:
      lhs = cmp->a, rhs = cmp->b, offset = -1;
      break;
    case NodeKind::kGT:
      lhs = cmp->b, rhs = cmp->a;
      break;
    case NodeKind::kGE:
      lhs = cmp->b, rhs = cmp->a, offset = -1;
      break;
    default:
      return std::nullopt;
  }
  SplitConjunct out;
  if (!Decompose(lhs, 1, inner, &out) || !Decompose(rhs, -1, inner, &out)) return std::nullopt;
  if (offset != 0) {
    Expr c = IntImm(lhs.dtype(), offset);
    out.outer = out.outer.defined() ? MakeBinary(NodeKind::kAdd, out.outer, c) : c;
  }
  if (!out.outer.defined()) out.outer = IntImm(lhs.dtype(), 0);
  std::erase_if(out.coeffs, [](const auto& entry) { return entry.second == 0; });
  if (out.coeffs.empty()) return std::nullopt;  // the inner loops do not decide it
  return out;
}

// The largest value of the inner part over the inner loops' ranges; nullopt when a variable's
// range is unknown or the sum overflows.
std::optional<int64_t> WorstInner(const SplitConjunct& c, const InnerRanges& inner) {
  int64_t worst = 0;
  for (const auto& [var, coeff] : c.coeffs) {
    const auto& range = inner.at(var);
    if (!range.has_value()) return std::nullopt;
    int64_t term = 0;
    if (__builtin_mul_overflow(coeff, coeff > 0 ? range->second : range->first, &term) ||
        __builtin_add_overflow(worst, term, &worst)) {
      return std::nullopt;
    }
  }
  return worst;
}

// A conjunct that a full-tile test makes true: `outer + worst < 0`.
struct Candidate {
  Expr outer;
  int64_t worst;
  Expr test;
};

// The ranges of the variables that loops and lets inside `body` define.
InnerRanges CollectInnerRanges(const Stmt& body) {
  InnerRanges ranges;
  PreOrderVisit(body, [&](const Object* node) {
    if (node->kind() == NodeKind::kFor) {
      const auto* loop = static_cast<const ForNode*>(node);
      const int64_t* min = AsConstInt(loop->min);
      const int64_t* extent = AsConstInt(loop->extent);
      std::optional<std::pair<int64_t, int64_t>> range;
      if (min != nullptr && extent != nullptr && *extent >= 1) range = {*min, *min + *extent - 1};
      ranges[loop->loop_var.get()] = range;
    } else if (node->kind() == NodeKind::kLetStmt) {
      ranges[static_cast<const LetStmtNode*>(node)->var.get()] = std::nullopt;
    }
    return true;
  });
  return ranges;
}

// The conjuncts of every `if` condition in `body`.
std::vector<Expr> GuardConjuncts(const Stmt& body) {
  std::vector<Expr> conjuncts;
  PreOrderVisit(body, [&](const Object* node) {
    if (node->kind() == NodeKind::kIfThenElse) {
      SplitConjuncts(static_cast<const IfThenElseNode*>(node)->condition, &conjuncts);
    }
    return true;
  });
  return conjuncts;
}

// Drops from every `if` condition in a full copy the conjuncts the candidates make true.
class ImpliedConjunctRemover : public StmtMutator {
 public:
  ImpliedConjunctRemover(const std::vector<Candidate>& candidates, const InnerRanges& inner,
                         arith::Analyzer* analyzer)
      : candidates_(candidates), inner_(inner), analyzer_(analyzer) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    std::vector<Expr> conjuncts, kept;
    SplitConjuncts(op->condition, &conjuncts);
    for (const Expr& c : conjuncts) {
      if (!Implied(c)) kept.push_back(c);
    }
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    if (kept.empty()) return then_case;
    Expr cond = kept[0];
    for (size_t i = 1; i < kept.size(); ++i) cond = MakeBinary(NodeKind::kAnd, cond, kept[i]);
    return MakeIfThenElse(cond, then_case, else_case);
  }

 private:
  bool Implied(const Expr& conjunct) {
    std::optional<SplitConjunct> split = SplitGuard(conjunct, inner_);
    if (!split.has_value()) return false;
    std::optional<int64_t> worst = WorstInner(*split, inner_);
    if (!worst.has_value()) return false;
    for (const Candidate& candidate : candidates_) {
      Expr diff = analyzer_->Simplify(MakeBinary(NodeKind::kSub, split->outer, candidate.outer));
      const int64_t* d = AsConstInt(diff);
      int64_t total = 0;
      if (d != nullptr && !__builtin_add_overflow(*d, *worst, &total) && total <= candidate.worst) {
        return true;
      }
    }
    return false;
  }

  const std::vector<Candidate>& candidates_;
  const InnerRanges& inner_;
  arith::Analyzer* analyzer_;
};

class TileGuardUnswitcher : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->for_kind == ForKind::kVectorized || op->for_kind == ForKind::kThreadBinding) {
      return GetStmtRef(op);
    }
    analyzer_.Bind(op->loop_var, Range{op->min, op->extent});
    Stmt body = UnswitchBody(op->body);
    analyzer_.Unbind(op->loop_var);
    if (body.same_as(op->body)) return GetStmtRef(op);
    return MakeFor(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag,
                   op->annotations);
  }

 private:
  // `body` (of a loop whose variable is bound) with its full tiles split off, or visited as it is.
  Stmt UnswitchBody(const Stmt& body) {
    if (depth_ >= kMaxNestedUnswitch || !ContainsRuntimeLoop(body)) return VisitStmt(body);
    InnerRanges inner = CollectInnerRanges(body);
    std::vector<Candidate> candidates;
    for (const Expr& conjunct : GuardConjuncts(body)) {
      std::optional<SplitConjunct> split = SplitGuard(conjunct, inner);
      if (!split.has_value()) continue;
      std::optional<int64_t> worst = WorstInner(*split, inner);
      if (!worst.has_value()) continue;
      Expr outer = analyzer_.Simplify(split->outer);
      Expr test = analyzer_.Simplify(MakeBinary(
          NodeKind::kLT, MakeBinary(NodeKind::kAdd, outer, IntImm(outer.dtype(), *worst)),
          IntImm(outer.dtype(), 0)));
      // Decided tests: always full (SimplifyStatements has dropped the conjunct already, or
      // will) or never full at this level (a deeper body may be).
      if (AsConstInt(test) != nullptr) continue;
      // A test that failed further out fails here too: its partial copy is not split again.
      auto same_test = [&](const Expr& e) { return StructuralEqual(e, test); };
      if (std::any_of(failed_tests_.begin(), failed_tests_.end(), same_test)) continue;
      if (std::none_of(candidates.begin(), candidates.end(),
                       [&](const Candidate& c) { return same_test(c.test); })) {
        candidates.push_back({outer, *worst, test});
      }
    }
    if (candidates.empty()) return VisitStmt(body);
    Expr test = candidates[0].test;
    for (size_t i = 1; i < candidates.size(); ++i) {
      test = MakeBinary(NodeKind::kAnd, test, candidates[i].test);
    }
    for (const Expr& failed : failed_tests_) {
      if (StructuralEqual(failed, test)) return VisitStmt(body);
    }
    Stmt full = ImpliedConjunctRemover(candidates, inner, &analyzer_).VisitStmt(body);
    ++depth_;
    full = VisitStmt(full);
    failed_tests_.push_back(test);
    Stmt partial = VisitStmt(body);
    failed_tests_.pop_back();
    --depth_;
    return MakeIfThenElse(test, full, partial);
  }

  arith::Analyzer analyzer_;
  int depth_ = 0;
  std::vector<Expr> failed_tests_;
};

}  // namespace

PrimFunc UnswitchTileGuards(const PrimFunc& func) {
  PreOrderVisit(func->body, [&](const Object* node) {
    TT_ICHECK(node->kind() != NodeKind::kBlock && node->kind() != NodeKind::kBlockRealize,
              "UnswitchTileGuards needs the loop form; {} still has blocks", func->name);
    return true;
  });
  return func.WithBody(TileGuardUnswitcher().VisitStmt(func->body));
}

}  // namespace tirtune
