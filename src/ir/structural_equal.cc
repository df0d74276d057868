// Structural equality: a parallel walk of two IR trees that matches variables and buffers by
// their definition points (alpha-equivalence) and, when asked, records where they first differ.
#include "tirtune/ir/structural_equal.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "tirtune/ir/printer.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

class StructuralComparator {
 public:
  StructuralComparator(bool map_free_vars, bool record_diff)
      : map_free_vars_(map_free_vars), record_diff_(record_diff) {}

  bool Func(const PrimFunc& a, const PrimFunc& b);
  bool StmtEq(const Stmt& a, const Stmt& b);
  bool ExprEq(const Expr& a, const Expr& b);

  const std::string& diff() const { return diff_; }

 private:
  // Names one step of the path to the node being compared; a no-op unless recording a diff.
  class PathStep {
   public:
    PathStep(StructuralComparator* self, std::string_view step) : self_(self) {
      if (self_->record_diff_) self_->path_.emplace_back(step);
    }
    ~PathStep() {
      if (self_->record_diff_) self_->path_.pop_back();
    }

   private:
    StructuralComparator* self_;
  };

  // Records the first difference. Always returns false so callers can `return Fail(...)`.
  bool Fail(std::string_view what, const std::string& lhs, const std::string& rhs);
  template <typename T>
  bool FailNodes(std::string_view what, const T& a, const T& b) {
    if (!record_diff_ || !diff_.empty()) return false;
    return Fail(what, ToString(a), ToString(b));
  }

  bool DefineVar(const Var& a, const Var& b);
  bool VarUse(const VarNode* a, const VarNode* b);
  bool DefineBuffer(const Buffer& a, const Buffer& b);
  bool BufferUse(const Buffer& a, const Buffer& b);
  bool BufferFields(const Buffer& a, const Buffer& b);
  // Binds `a` to `b` for the rest of the walk (a later definition of `a` rebinds it).
  void Bind(const Object* a, const Object* b);
  // Whether a use of `a` matches a use of `b`. Unbound free nodes match themselves, or each
  // other on first use when free variables are mapped.
  bool UseMatches(const Object* a, const Object* b, bool* newly_free);

  bool Exprs(std::string_view field, const std::vector<Expr>& a, const std::vector<Expr>& b);
  bool Regions(std::string_view field, const std::vector<BufferRegion>& a,
               const std::vector<BufferRegion>& b);
  bool Dicts(std::string_view field, const std::map<std::string, Expr>& a,
             const std::map<std::string, Expr>& b);
  bool OptionalStmt(std::string_view field, const Stmt& a, const Stmt& b);
  bool ExprNodes(const ExprNode* a, const ExprNode* b);
  bool For(const ForNode* a, const ForNode* b);
  bool BlockEq(const BlockNode* a, const BlockNode* b);

  bool map_free_vars_;
  bool record_diff_;
  std::unordered_map<const Object*, const Object*> lhs_to_rhs_;
  std::unordered_map<const Object*, const Object*> rhs_to_lhs_;
  std::vector<std::string> path_;
  std::string diff_;
};

bool SameFloat(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

bool StructuralComparator::Fail(std::string_view what, const std::string& lhs,
                                const std::string& rhs) {
  if (!record_diff_ || !diff_.empty()) return false;
  std::string path;
  for (const std::string& step : path_) {
    if (step.empty()) continue;
    if (!path.empty() && step[0] != '[') path += '.';
    path += step;
  }
  diff_ =
      fmt::format("{}: {}\n  lhs: {}\n  rhs: {}", path.empty() ? "<root>" : path, what, lhs, rhs);
  return false;
}

void StructuralComparator::Bind(const Object* a, const Object* b) {
  if (auto it = lhs_to_rhs_.find(a); it != lhs_to_rhs_.end()) rhs_to_lhs_.erase(it->second);
  if (auto it = rhs_to_lhs_.find(b); it != rhs_to_lhs_.end()) lhs_to_rhs_.erase(it->second);
  lhs_to_rhs_[a] = b;
  rhs_to_lhs_[b] = a;
}

bool StructuralComparator::UseMatches(const Object* a, const Object* b, bool* newly_free) {
  *newly_free = false;
  auto forward = lhs_to_rhs_.find(a);
  if (forward != lhs_to_rhs_.end()) return forward->second == b;
  if (rhs_to_lhs_.count(b)) return false;  // b is bound to another node
  // A mapped free node is bound even to itself, so that it cannot match another one later.
  *newly_free = map_free_vars_;
  return a == b || map_free_vars_;
}

bool StructuralComparator::DefineVar(const Var& a, const Var& b) {
  if (a.dtype() != b.dtype()) {
    return Fail("variable types differ", a->name + ": " + a.dtype().str(),
                b->name + ": " + b.dtype().str());
  }
  Bind(a.get(), b.get());
  return true;
}

bool StructuralComparator::VarUse(const VarNode* a, const VarNode* b) {
  bool newly_free = false;
  if (!UseMatches(a, b, &newly_free)) {
    return Fail("variables defined at different places", a->name, b->name);
  }
  if (newly_free) Bind(a, b);
  return true;
}

bool StructuralComparator::BufferFields(const Buffer& a, const Buffer& b) {
  PathStep step(this, record_diff_ ? fmt::format("buffer({})", a->name) : "");
  if (a->dtype != b->dtype) return Fail("buffer types differ", a->dtype.str(), b->dtype.str());
  if (!Exprs("shape", a->shape, b->shape) || !Exprs("strides", a->strides, b->strides)) {
    return false;
  }
  if (a->scope != b->scope) {
    return Fail("buffer scopes differ", StorageScopeName(a->scope), StorageScopeName(b->scope));
  }
  if (a->align != b->align) {
    return Fail("buffer alignments differ", std::to_string(a->align), std::to_string(b->align));
  }
  return true;
}

bool StructuralComparator::DefineBuffer(const Buffer& a, const Buffer& b) {
  if (!BufferFields(a, b)) return false;
  Bind(a.get(), b.get());
  return true;
}

bool StructuralComparator::BufferUse(const Buffer& a, const Buffer& b) {
  bool newly_free = false;
  if (!UseMatches(a.get(), b.get(), &newly_free)) {
    return Fail("buffers defined at different places", a->name, b->name);
  }
  if (newly_free) return DefineBuffer(a, b);
  return true;
}

bool StructuralComparator::Exprs(std::string_view field, const std::vector<Expr>& a,
                                 const std::vector<Expr>& b) {
  PathStep step(this, field);
  if (a.size() != b.size()) {
    return Fail("lengths differ", std::to_string(a.size()), std::to_string(b.size()));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    PathStep index(this, record_diff_ ? fmt::format("[{}]", i) : "");
    if (!ExprEq(a[i], b[i])) return false;
  }
  return true;
}

bool StructuralComparator::Regions(std::string_view field, const std::vector<BufferRegion>& a,
                                   const std::vector<BufferRegion>& b) {
  PathStep step(this, field);
  if (a.size() != b.size()) {
    return Fail("numbers of regions differ", std::to_string(a.size()), std::to_string(b.size()));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    PathStep index(this, record_diff_ ? fmt::format("[{}]", i) : "");
    if (!BufferUse(a[i].buffer, b[i].buffer)) return false;
    if (a[i].region.size() != b[i].region.size()) {
      return Fail("region ranks differ", std::to_string(a[i].region.size()),
                  std::to_string(b[i].region.size()));
    }
    for (size_t d = 0; d < a[i].region.size(); ++d) {
      PathStep dim(this, record_diff_ ? fmt::format("[{}]", d) : "");
      const Range& ra = a[i].region[d];
      const Range& rb = b[i].region[d];
      if (!Exprs("", {ra.min, ra.extent}, {rb.min, rb.extent})) return false;
    }
  }
  return true;
}

bool StructuralComparator::Dicts(std::string_view field, const std::map<std::string, Expr>& a,
                                 const std::map<std::string, Expr>& b) {
  PathStep step(this, field);
  auto keys = [](const std::map<std::string, Expr>& m) {
    std::string text;
    for (const auto& entry : m) text += (text.empty() ? "" : ", ") + entry.first;
    return "{" + text + "}";
  };
  if (a.size() != b.size()) return Fail("keys differ", keys(a), keys(b));
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return Fail("keys differ", keys(a), keys(b));
    PathStep key(this, record_diff_ ? fmt::format("[\"{}\"]", ia->first) : "");
    if (!ExprEq(ia->second, ib->second)) return false;
  }
  return true;
}

bool StructuralComparator::OptionalStmt(std::string_view field, const Stmt& a, const Stmt& b) {
  PathStep step(this, field);  // an empty field adds no step: `for(i).for(j)` reads better
  if (!a.defined() || !b.defined()) {
    if (a.defined() == b.defined()) return true;
    return Fail("present on one side only", a.defined() ? ToString(a) : "<none>",
                b.defined() ? ToString(b) : "<none>");
  }
  return StmtEq(a, b);
}

bool StructuralComparator::ExprEq(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) {
    if (a.defined() == b.defined()) return true;
    return Fail("present on one side only", a.defined() ? ToString(a) : "<none>",
                b.defined() ? ToString(b) : "<none>");
  }
  if (a.same_as(b) && !map_free_vars_ && lhs_to_rhs_.empty()) return true;
  if (a->kind() != b->kind()) return FailNodes("expression kinds differ", a, b);
  if (a.dtype() != b.dtype()) {
    return Fail("expression types differ", ToString(a) + ": " + a.dtype().str(),
                ToString(b) + ": " + b.dtype().str());
  }
  return ExprNodes(a.get(), b.get());
}

bool StructuralComparator::ExprNodes(const ExprNode* a, const ExprNode* b) {
  if (IsBinaryOpKind(a->kind())) {
    {
      PathStep lhs(this, "a");
      if (!ExprEq(BinaryA(a), BinaryA(b))) return false;
    }
    PathStep rhs(this, "b");
    return ExprEq(BinaryB(a), BinaryB(b));
  }
  switch (a->kind()) {
    case NodeKind::kIntImm:
      if (static_cast<const IntImmNode*>(a)->value == static_cast<const IntImmNode*>(b)->value) {
        return true;
      }
      return FailNodes("constants differ", GetRef(a), GetRef(b));
    case NodeKind::kFloatImm:
      if (SameFloat(static_cast<const FloatImmNode*>(a)->value,
                    static_cast<const FloatImmNode*>(b)->value)) {
        return true;
      }
      return FailNodes("constants differ", GetRef(a), GetRef(b));
    case NodeKind::kStringImm:
      if (static_cast<const StringImmNode*>(a)->value ==
          static_cast<const StringImmNode*>(b)->value) {
        return true;
      }
      return FailNodes("strings differ", GetRef(a), GetRef(b));
    case NodeKind::kVar:
      return VarUse(static_cast<const VarNode*>(a), static_cast<const VarNode*>(b));
    case NodeKind::kNot:
      return ExprEq(static_cast<const NotNode*>(a)->a, static_cast<const NotNode*>(b)->a);
    case NodeKind::kSelect: {
      const auto* x = static_cast<const SelectNode*>(a);
      const auto* y = static_cast<const SelectNode*>(b);
      return Exprs("select", {x->cond, x->t, x->f}, {y->cond, y->t, y->f});
    }
    case NodeKind::kCast:
      return ExprEq(static_cast<const CastNode*>(a)->value, static_cast<const CastNode*>(b)->value);
    case NodeKind::kCall: {
      const auto* x = static_cast<const CallNode*>(a);
      const auto* y = static_cast<const CallNode*>(b);
      if (x->op != y->op) return FailNodes("intrinsics differ", GetRef(a), GetRef(b));
      return Exprs("args", x->args, y->args);
    }
    case NodeKind::kBufferLoad: {
      const auto* x = static_cast<const BufferLoadNode*>(a);
      const auto* y = static_cast<const BufferLoadNode*>(b);
      return BufferUse(x->buffer, y->buffer) && Exprs("indices", x->indices, y->indices);
    }
    case NodeKind::kRamp: {
      const auto* x = static_cast<const RampNode*>(a);
      const auto* y = static_cast<const RampNode*>(b);
      // Lanes are part of the dtype, already compared.
      return Exprs("ramp", {x->base, x->stride}, {y->base, y->stride});
    }
    case NodeKind::kBroadcast:
      return ExprEq(static_cast<const BroadcastNode*>(a)->value,
                    static_cast<const BroadcastNode*>(b)->value);
    case NodeKind::kLet: {
      const auto* x = static_cast<const LetNode*>(a);
      const auto* y = static_cast<const LetNode*>(b);
      return ExprEq(x->value, y->value) && DefineVar(x->var, y->var) && ExprEq(x->body, y->body);
    }
    default:
      TT_UNREACHABLE("not an expression kind: {}", static_cast<int>(a->kind()));
  }
}

bool StructuralComparator::For(const ForNode* a, const ForNode* b) {
  PathStep step(this, record_diff_ ? fmt::format("for({})", a->loop_var->name) : "");
  if (a->for_kind != b->for_kind) {
    return Fail("loop kinds differ", ForKindName(a->for_kind), ForKindName(b->for_kind));
  }
  if (a->thread_tag != b->thread_tag)
    return Fail("thread tags differ", a->thread_tag, b->thread_tag);
  if (!Exprs("range", {a->min, a->extent}, {b->min, b->extent})) return false;
  if (!Dicts("annotations", a->annotations, b->annotations)) return false;
  if (!DefineVar(a->loop_var, b->loop_var)) return false;
  return OptionalStmt("", a->body, b->body);
}

std::string BlockStep(const BlockNode* block) { return fmt::format("block({})", block->name); }

bool StructuralComparator::BlockEq(const BlockNode* a, const BlockNode* b) {
  if (a->name != b->name) return Fail("block names differ", a->name, b->name);
  if (a->iter_vars.size() != b->iter_vars.size()) {
    return Fail("numbers of block iterators differ", std::to_string(a->iter_vars.size()),
                std::to_string(b->iter_vars.size()));
  }
  for (size_t i = 0; i < a->iter_vars.size(); ++i) {
    const IterVar& x = a->iter_vars[i];
    const IterVar& y = b->iter_vars[i];
    PathStep iter(this, record_diff_ ? fmt::format("iter_var({})", x.var->name) : "");
    if (x.kind != y.kind) return Fail("iterator kinds differ", x.var->name, y.var->name);
    if (!Exprs("dom", {x.dom.min, x.dom.extent}, {y.dom.min, y.dom.extent})) return false;
    if (!DefineVar(x.var, y.var)) return false;
  }
  {
    PathStep allocs(this, "alloc_buffers");
    if (a->alloc_buffers.size() != b->alloc_buffers.size()) {
      return Fail("numbers of allocated buffers differ", std::to_string(a->alloc_buffers.size()),
                  std::to_string(b->alloc_buffers.size()));
    }
    for (size_t i = 0; i < a->alloc_buffers.size(); ++i) {
      if (!DefineBuffer(a->alloc_buffers[i], b->alloc_buffers[i])) return false;
    }
  }
  return Regions("reads", a->reads, b->reads) && Regions("writes", a->writes, b->writes) &&
         Dicts("annotations", a->annotations, b->annotations) &&
         OptionalStmt("init", a->init, b->init) && OptionalStmt("", a->body, b->body);
}

bool StructuralComparator::StmtEq(const Stmt& a, const Stmt& b) {
  if (!a.defined() || !b.defined()) return OptionalStmt("", a, b);
  if (a->kind() != b->kind()) return FailNodes("statement kinds differ", a, b);
  switch (a->kind()) {
    case NodeKind::kFor:
      return For(static_cast<const ForNode*>(a.get()), static_cast<const ForNode*>(b.get()));
    case NodeKind::kBlockRealize: {
      const auto* x = static_cast<const BlockRealizeNode*>(a.get());
      const auto* y = static_cast<const BlockRealizeNode*>(b.get());
      PathStep step(this, record_diff_ ? BlockStep(x->block.get()) : "");
      // Names first: a renamed block is reported as such, not as a binding difference.
      if (x->block->name != y->block->name) {
        return Fail("block names differ", x->block->name, y->block->name);
      }
      return Exprs("bindings", x->iter_values, y->iter_values) &&
             Exprs("predicate", {x->predicate}, {y->predicate}) &&
             BlockEq(x->block.get(), y->block.get());
    }
    case NodeKind::kBlock: {
      PathStep step(this, record_diff_ ? BlockStep(static_cast<const BlockNode*>(a.get())) : "");
      return BlockEq(static_cast<const BlockNode*>(a.get()),
                     static_cast<const BlockNode*>(b.get()));
    }
    case NodeKind::kBufferStore: {
      const auto* x = static_cast<const BufferStoreNode*>(a.get());
      const auto* y = static_cast<const BufferStoreNode*>(b.get());
      PathStep step(this, record_diff_ ? fmt::format("store({})", x->buffer->name) : "");
      if (!BufferUse(x->buffer, y->buffer) || !Exprs("indices", x->indices, y->indices)) {
        return false;
      }
      PathStep value(this, "value");
      return ExprEq(x->value, y->value);
    }
    case NodeKind::kSeqStmt: {
      const auto& x = static_cast<const SeqStmtNode*>(a.get())->seq;
      const auto& y = static_cast<const SeqStmtNode*>(b.get())->seq;
      if (x.size() != y.size()) {
        return Fail("sequence lengths differ", std::to_string(x.size()), std::to_string(y.size()));
      }
      for (size_t i = 0; i < x.size(); ++i) {
        PathStep index(this, record_diff_ ? fmt::format("[{}]", i) : "");
        if (!StmtEq(x[i], y[i])) return false;
      }
      return true;
    }
    case NodeKind::kIfThenElse: {
      const auto* x = static_cast<const IfThenElseNode*>(a.get());
      const auto* y = static_cast<const IfThenElseNode*>(b.get());
      PathStep step(this, "if");
      return Exprs("condition", {x->condition}, {y->condition}) &&
             OptionalStmt("then", x->then_case, y->then_case) &&
             OptionalStmt("else", x->else_case, y->else_case);
    }
    case NodeKind::kEvaluate:
      return Exprs("evaluate", {static_cast<const EvaluateNode*>(a.get())->value},
                   {static_cast<const EvaluateNode*>(b.get())->value});
    case NodeKind::kLetStmt: {
      const auto* x = static_cast<const LetStmtNode*>(a.get());
      const auto* y = static_cast<const LetStmtNode*>(b.get());
      PathStep step(this, record_diff_ ? fmt::format("let({})", x->var->name) : "");
      return Exprs("value", {x->value}, {y->value}) && DefineVar(x->var, y->var) &&
             OptionalStmt("body", x->body, y->body);
    }
    case NodeKind::kBarrier:
      return true;
    case NodeKind::kAllocate: {
      const auto* x = static_cast<const AllocateNode*>(a.get());
      const auto* y = static_cast<const AllocateNode*>(b.get());
      PathStep step(this, record_diff_ ? fmt::format("allocate({})", x->buffer->name) : "");
      return DefineBuffer(x->buffer, y->buffer) && OptionalStmt("body", x->body, y->body);
    }
    default:
      TT_UNREACHABLE("not a statement kind: {}", static_cast<int>(a->kind()));
  }
}

bool StructuralComparator::Func(const PrimFunc& a, const PrimFunc& b) {
  {
    PathStep step(this, "params");
    if (a->params.size() != b->params.size()) {
      return Fail("numbers of parameters differ", std::to_string(a->params.size()),
                  std::to_string(b->params.size()));
    }
    for (size_t i = 0; i < a->params.size(); ++i) {
      PathStep index(this, record_diff_ ? fmt::format("[{}]", i) : "");
      if (!DefineBuffer(a->params[i], b->params[i])) return false;
    }
  }
  return Dicts("attrs", a->attrs, b->attrs) && OptionalStmt("body", a->body, b->body);
}

}  // namespace

bool StructuralEqual(const PrimFunc& a, const PrimFunc& b) {
  // Symbolic shape variables of the parameters are defined by the signature: map them on use.
  return StructuralComparator(/*map_free_vars=*/true, /*record_diff=*/false).Func(a, b);
}

bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars) {
  return StructuralComparator(map_free_vars, /*record_diff=*/false).StmtEq(a, b);
}

bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars) {
  return StructuralComparator(map_free_vars, /*record_diff=*/false).ExprEq(a, b);
}

std::optional<std::string> StructuralDiff(const PrimFunc& a, const PrimFunc& b) {
  StructuralComparator comparator(/*map_free_vars=*/true, /*record_diff=*/true);
  if (comparator.Func(a, b)) return std::nullopt;
  return comparator.diff();
}

}  // namespace tirtune
