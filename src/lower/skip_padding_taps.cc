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
// serial or parallel loop in it that stays a loop (one of extent 1, or one UnrollLoops expands,
// does not: an `if` in an innermost loop keeps LLVM from holding the accumulators in registers),
// and never when it reads a buffer.
//
// A pad the schedule kept as a buffer of its own works the same way: CollectZeroPadding finds,
// in the block form, each intermediate that one block writes as `pad[i, j] = select(inside(i, j),
// x, 0)` at its own iterators, so `pad[g, h]` is zero wherever `inside(g, h)` is false. Before
// hoisting, every load `pad[g, h]` is read as `select(inside(g, h), pad[g, h], 0)` (exact: the
// select only says where the buffer holds zeros); after hoisting, those selects go again, so the
// conjuncts no loop could decide cost nothing in the inner loop:
//
//   for w in range(7):                           for w in range(7):
//     for rw in range(3):                            for rw in range(3):
//       for rc in range(64):                             if 1 <= w + rw and w + rw < 8:
//         acc[w] = acc[w] + pad[w + rw, rc] * W[rw, rc]     for rc in range(64):
//                                                              acc[w] = acc[w] + pad[w + rw, rc] *
//                                                              W[rw, rc]
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "runtime_loops.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
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

// The selects that say where a materialized pad holds zeros (they change no value), kept alive
// so that their addresses name them until the pass removes them.
class PaddingHints {
 public:
  Expr Add(Expr select) {
    hints_.insert(select.get());
    alive_.push_back(select);
    return select;
  }
  bool Has(const SelectNode* select) const { return hints_.count(select) != 0; }

 private:
  std::unordered_set<const Object*> hints_;
  std::vector<Expr> alive_;
};

// The conjuncts that every store in `body` is guarded by, when every store in it is a reduction
// update with a zeroing select; empty otherwise. `hints_only`: every such select is a hint.
std::vector<Expr> CommonPaddingConjuncts(const Stmt& body, const PaddingHints& hints,
                                         bool* hints_only) {
  bool all_updates = true, first = true;
  *hints_only = true;
  std::vector<Expr> common;
  PreOrderVisit(body, [&](const Object* node) {
    if (!all_updates || node->kind() != NodeKind::kBufferStore) return all_updates;
    std::optional<PaddedUpdate> update = AsPaddedUpdate(static_cast<const BufferStoreNode*>(node));
    if (!update.has_value()) {
      all_updates = false;
      return false;
    }
    *hints_only = *hints_only && hints.Has(update->select);
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

// The fewest updates a test of a materialized pad may skip at once (see HoistFrom).
constexpr int64_t kMinSkippedUpdates = 1024;

// True when `body` holds a loop that stays a loop (runtime_loops.h) and that no store in `body`
// indexes with its variable: a loop over a reduction, not over a tile of outputs.
bool ContainsReductionLoop(const Stmt& body, int64_t auto_unroll_limit) {
  std::vector<Expr> stored;
  PreOrderVisit(body, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferStore) {
      for (const Expr& index : static_cast<const BufferStoreNode*>(node)->indices) {
        stored.push_back(index);
      }
    }
    return true;
  });
  bool found = false;
  PreOrderVisit(body, [&](const Object* node) {
    if (found || node->kind() != NodeKind::kFor) return !found;
    const auto* loop = static_cast<const ForNode*>(node);
    bool indexes = std::any_of(stored.begin(), stored.end(), [&](const Expr& index) {
      return UsesVar(index, [&](const VarNode* v) { return v == loop->loop_var.get(); });
    });
    found = !indexes && StaysLoop(loop, auto_unroll_limit);
    return !found;
  });
  return found;
}

// The variables that loops and lets inside `body` define, but loops of extent 1: `unit` maps
// each of those to its one value.
std::vector<const VarNode*> DefinedVars(const Stmt& body, VarMap* unit) {
  std::vector<const VarNode*> vars;
  PreOrderVisit(body, [&](const Object* node) {
    if (node->kind() == NodeKind::kFor) {
      const auto* loop = static_cast<const ForNode*>(node);
      const auto* extent = loop->extent.as<IntImmNode>();
      if (extent != nullptr && extent->value == 1) {
        (*unit)[loop->loop_var.get()] = loop->min;
      } else {
        vars.push_back(loop->loop_var.get());
      }
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
  ConjunctRemover(const std::vector<Expr>& hoisted, PaddingHints* hints)
      : hoisted_(hoisted), hints_(hints) {}
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
    if (hints_->Has(update->select) && !kept.empty()) {
      hints_->Add(GetRef(ZeroingSelect(term)));
    }
    Expr value = update->term_first ? MakeBinary(NodeKind::kAdd, term, update->self)
                                    : MakeBinary(NodeKind::kAdd, update->self, term);
    return MakeBufferStore(op->buffer, value, op->indices);
  }

 private:
  const std::vector<Expr>& hoisted_;
  PaddingHints* hints_;
};

// Reads every load of a materialized pad as the select that says where it is zero.
class PaddingHintWriter : public StmtMutator {
 public:
  PaddingHintWriter(const ZeroPaddedBuffers& padded, PaddingHints* hints)
      : padded_(padded), hints_(hints) {}
  using StmtMutator::VisitExpr_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr load = StmtMutator::VisitExpr_(op);
    for (const ZeroPadding& pad : padded_) {
      if (!pad.buffer.same_as(op->buffer) || pad.indices.size() != op->indices.size()) continue;
      VarMap at;
      for (size_t i = 0; i < pad.indices.size(); ++i) at[pad.indices[i].get()] = op->indices[i];
      return hints_->Add(MakeSelect(Substitute(pad.inside, at), load, MakeConst(load.dtype(), 0)));
    }
    return load;
  }

 private:
  const ZeroPaddedBuffers& padded_;
  PaddingHints* hints_;
};

// Replaces every hint that is left by the load it wraps.
class PaddingHintRemover : public StmtMutator {
 public:
  explicit PaddingHintRemover(const PaddingHints& hints) : hints_(hints) {}
  using StmtMutator::VisitExpr_;

  Expr VisitExpr_(const SelectNode* op) override {
    if (hints_.Has(op)) return VisitExpr(op->t);
    return StmtMutator::VisitExpr_(op);
  }

 private:
  const PaddingHints& hints_;
};

class PaddingTapSkipper : public StmtMutator {
 public:
  explicit PaddingTapSkipper(PaddingHints* hints) : hints_(hints) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool vectorized = op->for_kind == ForKind::kVectorized;
    int64_t outer_limit = auto_unroll_limit_;
    auto_unroll_limit_ = AutoUnrollLimitInside(op, outer_limit);
    Stmt body = op->body;
    if (!vectorized && vectorized_depth_ == 0) body = HoistFrom(body);
    if (vectorized) ++vectorized_depth_;
    body = VisitStmt(body);
    if (vectorized) --vectorized_depth_;
    auto_unroll_limit_ = outer_limit;
    if (body.same_as(op->body)) return GetStmtRef(op);
    return MakeFor(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag,
                   op->annotations);
  }

 private:
  // `body` guarded by the padding conjuncts that can leave it, or `body` when none can.
  Stmt HoistFrom(const Stmt& body) {
    if (!ContainsRuntimeLoop(body)) return body;
    bool hints_only = false;
    std::vector<Expr> common = CommonPaddingConjuncts(body, *hints_, &hints_only);
    if (common.empty()) return body;
    // Skipping taps that only read zeros must pay for its test: only around a reduction loop
    // that stays a loop, so the test stays out of the register tile, and around enough work
    // (measured on ResNet-18/50 convolutions: tests around 48 or 128 updates made kernels 4-6%
    // slower, around 5,376 or more 4-11% faster). A select of an inlined pad costs more than a
    // test wherever it is.
    if (hints_only && (StepCount(body) < kMinSkippedUpdates ||
                       !ContainsReductionLoop(body, auto_unroll_limit_))) {
      return body;
    }
    // A loop of extent 1 inside (not yet simplified away) holds no test back: its variable is
    // its one value in the hoisted test.
    VarMap unit;
    std::vector<const VarNode*> inner = DefinedVars(body, &unit);
    std::vector<Expr> hoisted, tests;
    for (const Expr& c : common) {
      Expr test = Substitute(c, unit);
      bool depends_inside = UsesVar(test, [&](const VarNode* v) {
        return unit.count(v) != 0 || std::find(inner.begin(), inner.end(), v) != inner.end();
      });
      if (depends_inside || LoadsFromBuffer(c)) continue;
      hoisted.push_back(c);
      tests.push_back(test);
    }
    if (hoisted.empty()) return body;
    return MakeIfThenElse(*JoinConjuncts(tests), ConjunctRemover(hoisted, hints_).VisitStmt(body));
  }

  PaddingHints* hints_;
  int vectorized_depth_ = 0;
  // The "pragma_auto_unroll_max_step" limit in effect (see runtime_loops.h); 0 outside one.
  int64_t auto_unroll_limit_ = 0;
};

// The block of `store` writes a zero pad at its own iterators: `buf[i, j] = select(c(i, j), x,
// 0)` with every index a distinct spatial iterator and `c` a function of them alone.
std::optional<ZeroPadding> AsZeroPadding(const BlockNode* block, const BufferStoreNode* store) {
  const auto* select = store->value.as<SelectNode>();
  if (select == nullptr || !IsConstZero(select->f)) return std::nullopt;
  ZeroPadding pad{store->buffer, {}, select->cond};
  for (const Expr& index : store->indices) {
    const IterVar* iter = nullptr;
    for (const IterVar& it : block->iter_vars) {
      if (it.var.same_as(index)) iter = &it;
    }
    if (iter == nullptr || iter->kind != IterKind::kSpatial) return std::nullopt;
    for (const Var& seen : pad.indices) {
      if (seen.same_as(iter->var)) return std::nullopt;
    }
    pad.indices.push_back(iter->var);
  }
  bool other_vars = UsesVar(pad.inside, [&](const VarNode* v) {
    return std::none_of(pad.indices.begin(), pad.indices.end(),
                        [&](const Var& index) { return index.get() == v; });
  });
  if (other_vars || LoadsFromBuffer(pad.inside)) return std::nullopt;
  return pad;
}

}  // namespace

ZeroPaddedBuffers CollectZeroPadding(const PrimFunc& func) {
  std::map<const BufferNode*, int> stores;
  std::set<const BufferNode*> allocated;
  std::vector<std::pair<const BlockNode*, const BufferStoreNode*>> writers;
  PreOrderVisit(func->body, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferStore) {
      ++stores[static_cast<const BufferStoreNode*>(node)->buffer.get()];
    } else if (node->kind() == NodeKind::kBlock) {
      const auto* block = static_cast<const BlockNode*>(node);
      for (const Buffer& buffer : block->alloc_buffers) allocated.insert(buffer.get());
      const auto* store = block->body.as<BufferStoreNode>();
      if (store != nullptr && !block->init.defined()) writers.emplace_back(block, store);
    }
    return true;
  });
  ZeroPaddedBuffers padded;
  for (const auto& [block, store] : writers) {
    const BufferNode* buffer = store->buffer.get();
    if (allocated.count(buffer) == 0 || stores[buffer] != 1) continue;
    if (std::optional<ZeroPadding> pad = AsZeroPadding(block, store)) padded.push_back(*pad);
  }
  return padded;
}

PrimFunc SkipPaddingTaps(const PrimFunc& func, const ZeroPaddedBuffers& padded) {
  // Loop form only: a block's iterators would not count as variables defined inside a body.
  PreOrderVisit(func->body, [&](const Object* node) {
    TT_ICHECK(node->kind() != NodeKind::kBlock && node->kind() != NodeKind::kBlockRealize,
              "SkipPaddingTaps needs the loop form; {} still has blocks", func->name);
    return true;
  });
  PaddingHints hints;
  Stmt body = func->body;
  if (!padded.empty()) body = PaddingHintWriter(padded, &hints).VisitStmt(body);
  body = PaddingTapSkipper(&hints).VisitStmt(body);
  if (!padded.empty()) body = PaddingHintRemover(hints).VisitStmt(body);
  if (body.same_as(func->body)) return func;
  return func.WithBody(body);
}

}  // namespace tirtune
