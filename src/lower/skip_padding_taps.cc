// SkipPaddingTaps: a reduction that reads a zero-padded input through an inlined pad adds
// `select(inside, x, 0) * w` on every tap, the taps that land on the padding included. Where a
// conjunct of `inside` depends only on loops outside some loop's body, and every store in that
// body is such an update carrying the same conjunct, the conjunct becomes an `if` around the body:
// the taps on the padding are skipped instead of multiplied by zero.
//
//   for h in range(7):                           for h in range(7):
//     for rh in range(3):                            for rh in range(3):
//       for rc in range(64):                             if 1 <= h + rh and h + rh < 8:
//         acc[h] = acc[h]                                  for rc in range(64):
//           + select(1 <= h + rh and h + rh < 8            acc[h] = acc[h]
//                    and 1 <= w + rw, ...,                     + select(1 <= w + rw, ..., 0.0)
//                    ..., 0.0) * W[rh, rc]                     * W[rh, rc]
//
// Skipping `acc + 0 * w` leaves `acc` as it was whenever `w` is finite; an infinite or NaN `w` on
// a padded tap (a weight, or a computed factor that overflows) no longer reaches the result
// (oneDNN skips these taps the same way). A conjunct is
// hoisted at the outermost loop whose body defines none of its variables; never inside a
// vectorized loop (the vectorizer wants straight-line bodies), never around a body without a
// serial or parallel loop in it (an `if` in an innermost loop keeps LLVM from holding the
// accumulators in registers), and never when it reads a buffer.
#include <algorithm>
#include <optional>

#include "runtime_loops.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

// The select that makes `term` zero when its condition is false: `term` is select(c, x, 0), a
// cast of such a term, or a product with one. Null when there is none.
const SelectNode* ZeroingSelect(const Expr& term) {
  if (const auto* select = term.as<SelectNode>()) return IsConstZero(select->f) ? select : nullptr;
  if (const auto* cast = term.as<CastNode>()) return ZeroingSelect(cast->value);
  if (const auto* mul = term.as<MulNode>()) {
    const SelectNode* found = ZeroingSelect(mul->a);
    return found != nullptr ? found : ZeroingSelect(mul->b);
  }
  return nullptr;
}

// `term` with the condition of its ZeroingSelect replaced by `cond`, or the select replaced by
// its true value when `cond` is undefined.
Expr WithZeroingCondition(const Expr& term, const std::optional<Expr>& cond) {
  if (const auto* select = term.as<SelectNode>()) {
    return cond.has_value() ? MakeSelect(*cond, select->t, select->f) : select->t;
  }
  if (const auto* cast = term.as<CastNode>()) {
    return MakeCast(cast->dtype, WithZeroingCondition(cast->value, cond));
  }
  const auto* mul = term.as<MulNode>();
  TT_ICHECK(mul != nullptr, "not a zeroing term");
  if (ZeroingSelect(mul->a) != nullptr) {
    return MakeBinary(NodeKind::kMul, WithZeroingCondition(mul->a, cond), mul->b);
  }
  return MakeBinary(NodeKind::kMul, mul->a, WithZeroingCondition(mul->b, cond));
}

std::optional<Expr> JoinConjuncts(const std::vector<Expr>& conjuncts) {
  if (conjuncts.empty()) return std::nullopt;
  Expr all = conjuncts[0];
  for (size_t i = 1; i < conjuncts.size(); ++i) all = MakeBinary(NodeKind::kAnd, all, conjuncts[i]);
  return all;
}

bool Contains(const std::vector<Expr>& conjuncts, const Expr& e) {
  for (const Expr& c : conjuncts) {
    if (StructuralEqual(c, e)) return true;
  }
  return false;
}

// A reduction update `buf[i] = buf[i] + term` (either order) whose term has a zeroing select.
struct PaddedUpdate {
  Expr self;  // the load of buf[i]
  Expr term;
  bool term_first = false;
  const SelectNode* select = nullptr;
};

std::optional<PaddedUpdate> AsPaddedUpdate(const BufferStoreNode* store) {
  const auto* add = store->value.as<AddNode>();
  if (add == nullptr) return std::nullopt;
  auto is_self = [&](const Expr& e) {
    const auto* load = e.as<BufferLoadNode>();
    if (load == nullptr || !load->buffer.same_as(store->buffer) ||
        load->indices.size() != store->indices.size()) {
      return false;
    }
    for (size_t i = 0; i < load->indices.size(); ++i) {
      if (!StructuralEqual(load->indices[i], store->indices[i])) return false;
    }
    return true;
  };
  PaddedUpdate update;
  if (is_self(add->a)) {
    update = {add->a, add->b, false};
  } else if (is_self(add->b)) {
    update = {add->b, add->a, true};
  } else {
    return std::nullopt;
  }
  update.select = ZeroingSelect(update.term);
  if (update.select == nullptr) return std::nullopt;
  return update;
}

// The conjuncts that every store in `body` is guarded by, when every store in it is a reduction
// update with a zeroing select; empty otherwise.
std::vector<Expr> CommonPaddingConjuncts(const Stmt& body) {
  bool all_updates = true, first = true;
  std::vector<Expr> common;
  PreOrderVisit(body, [&](const Object* node) {
    if (!all_updates || node->kind() != NodeKind::kBufferStore) return all_updates;
    std::optional<PaddedUpdate> update = AsPaddedUpdate(static_cast<const BufferStoreNode*>(node));
    if (!update.has_value()) {
      all_updates = false;
      return false;
    }
    std::vector<Expr> conjuncts;
    SplitConjuncts(update->select->cond, &conjuncts);
    if (first) {
      common = std::move(conjuncts);
      first = false;
    } else {
      std::vector<Expr> kept;
      for (const Expr& c : common) {
        if (Contains(conjuncts, c)) kept.push_back(c);
      }
      common = std::move(kept);
    }
    return false;
  });
  return all_updates ? common : std::vector<Expr>{};
}

// The variables that loops and lets inside `body` define.
std::vector<const VarNode*> DefinedVars(const Stmt& body) {
  std::vector<const VarNode*> vars;
  PreOrderVisit(body, [&](const Object* node) {
    if (node->kind() == NodeKind::kFor) {
      vars.push_back(static_cast<const ForNode*>(node)->loop_var.get());
    } else if (node->kind() == NodeKind::kLetStmt) {
      vars.push_back(static_cast<const LetStmtNode*>(node)->var.get());
    }
    return true;
  });
  return vars;
}

// Removes `hoisted` from the zeroing condition of every store in a statement.
class ConjunctRemover : public StmtMutator {
 public:
  explicit ConjunctRemover(const std::vector<Expr>& hoisted) : hoisted_(hoisted) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    std::optional<PaddedUpdate> update = AsPaddedUpdate(op);
    TT_ICHECK(update.has_value(), "{} is not a padded update", op->buffer->name);
    std::vector<Expr> conjuncts, kept;
    SplitConjuncts(update->select->cond, &conjuncts);
    for (const Expr& c : conjuncts) {
      if (!Contains(hoisted_, c)) kept.push_back(c);
    }
    Expr term = WithZeroingCondition(update->term, JoinConjuncts(kept));
    Expr value = update->term_first ? MakeBinary(NodeKind::kAdd, term, update->self)
                                    : MakeBinary(NodeKind::kAdd, update->self, term);
    return MakeBufferStore(op->buffer, value, op->indices);
  }

 private:
  const std::vector<Expr>& hoisted_;
};

class PaddingTapSkipper : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool vectorized = op->for_kind == ForKind::kVectorized;
    Stmt body = op->body;
    if (!vectorized && vectorized_depth_ == 0) body = HoistFrom(body);
    if (vectorized) ++vectorized_depth_;
    body = VisitStmt(body);
    if (vectorized) --vectorized_depth_;
    if (body.same_as(op->body)) return GetStmtRef(op);
    return MakeFor(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag,
                   op->annotations);
  }

 private:
  // `body` guarded by the padding conjuncts that can leave it, or `body` when none can.
  static Stmt HoistFrom(const Stmt& body) {
    if (!ContainsRuntimeLoop(body)) return body;
    std::vector<Expr> common = CommonPaddingConjuncts(body);
    if (common.empty()) return body;
    std::vector<const VarNode*> inner = DefinedVars(body);
    std::vector<Expr> hoisted;
    for (const Expr& c : common) {
      bool depends_inside = UsesVar(c, [&](const VarNode* v) {
        return std::find(inner.begin(), inner.end(), v) != inner.end();
      });
      if (!depends_inside && !LoadsFromBuffer(c)) hoisted.push_back(c);
    }
    if (hoisted.empty()) return body;
    return MakeIfThenElse(*JoinConjuncts(hoisted), ConjunctRemover(hoisted).VisitStmt(body));
  }

  int vectorized_depth_ = 0;
};

}  // namespace

PrimFunc SkipPaddingTaps(const PrimFunc& func) {
  // Loop form only: a block's iterators would not count as variables defined inside a body.
  PreOrderVisit(func->body, [&](const Object* node) {
    TT_ICHECK(node->kind() != NodeKind::kBlock && node->kind() != NodeKind::kBlockRealize,
              "SkipPaddingTaps needs the loop form; {} still has blocks", func->name);
    return true;
  });
  return func.WithBody(PaddingTapSkipper().VisitStmt(func->body));
}

}  // namespace tirtune
