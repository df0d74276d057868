// Statement factories and copy-and-modify helpers.
#include "tirtune/ir/stmt.h"

#include "tirtune/support/error.h"

namespace tirtune {

const char* ForKindName(ForKind k) {
  switch (k) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unroll";
    case ForKind::kThreadBinding:
      return "thread_binding";
  }
  return "?";
}

bool ForKindFromName(const std::string& name, ForKind* out) {
  for (ForKind k : {ForKind::kSerial, ForKind::kParallel, ForKind::kVectorized, ForKind::kUnrolled,
                    ForKind::kThreadBinding}) {
    if (name == ForKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

Stmt MakeFor(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag,
             Annotations annotations) {
  TT_ICHECK(loop_var.defined() && min.defined() && extent.defined() && body.defined(),
            "for with an undefined field");
  TT_ICHECK(loop_var.dtype() == min.dtype() && min.dtype() == extent.dtype(),
            "for {} mixes types {}, {}, {}", loop_var->name, loop_var.dtype().str(),
            min.dtype().str(), extent.dtype().str());
  TT_ICHECK((kind == ForKind::kThreadBinding) == !thread_tag.empty(),
            "for {}: a thread tag goes with thread_binding and only with it", loop_var->name);
  auto n = MakeObject<ForNode>();
  n->loop_var = std::move(loop_var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->thread_tag = std::move(thread_tag);
  n->body = std::move(body);
  n->annotations = std::move(annotations);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Block MakeBlock(std::string name, std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                std::vector<BufferRegion> writes, Stmt body, Stmt init,
                std::vector<Buffer> alloc_buffers, Annotations annotations) {
  TT_ICHECK(body.defined(), "block {} without a body", name);
  for (const IterVar& iv : iter_vars) {
    TT_ICHECK(iv.var.defined() && iv.dom.min.defined() && iv.dom.extent.defined(),
              "block {} has an incomplete iterator", name);
  }
  auto n = MakeObject<BlockNode>();
  n->name = std::move(name);
  n->iter_vars = std::move(iter_vars);
  n->reads = std::move(reads);
  n->writes = std::move(writes);
  n->alloc_buffers = std::move(alloc_buffers);
  n->init = std::move(init);
  n->body = std::move(body);
  n->annotations = std::move(annotations);
  return Block(ObjectPtr<const BlockNode>(n));
}

Stmt MakeBlockRealize(std::vector<Expr> iter_values, Expr predicate, Block block) {
  TT_ICHECK(iter_values.size() == block->iter_vars.size(),
            "block {} has {} iterators but {} bindings", block->name, block->iter_vars.size(),
            iter_values.size());
  TT_ICHECK(predicate.defined() && predicate.dtype().is_bool(), "block {} predicate not bool",
            block->name);
  auto n = MakeObject<BlockRealizeNode>();
  n->iter_values = std::move(iter_values);
  n->predicate = std::move(predicate);
  n->block = std::move(block);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Stmt MakeBufferStore(Buffer buffer, Expr value, std::vector<Expr> indices) {
  TT_ICHECK(static_cast<int>(indices.size()) == buffer->ndim(),
            "store to {} with {} indices, buffer has rank {}", buffer->name, indices.size(),
            buffer->ndim());
  TT_ICHECK(value.dtype().element_of() == buffer->dtype, "store of a {} value into {} of {}",
            value.dtype().str(), buffer->name, buffer->dtype.str());
  auto n = MakeObject<BufferStoreNode>();
  n->buffer = std::move(buffer);
  n->value = std::move(value);
  n->indices = std::move(indices);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Stmt MakeSeq(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  for (Stmt& s : seq) {
    TT_ICHECK(s.defined(), "undefined statement in a sequence");
    if (const auto* inner = s.as<SeqStmtNode>()) {
      flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  TT_ICHECK(!flat.empty(), "empty sequence");
  if (flat.size() == 1) return flat[0];
  auto n = MakeObject<SeqStmtNode>();
  n->seq = std::move(flat);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Stmt MakeIfThenElse(Expr condition, Stmt then_case, Stmt else_case) {
  TT_ICHECK(condition.defined() && condition.dtype().is_bool(), "if condition not bool");
  TT_ICHECK(then_case.defined(), "if without a then branch");
  auto n = MakeObject<IfThenElseNode>();
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Stmt MakeBarrier() { return Stmt(ObjectPtr<const StmtNode>(MakeObject<BarrierNode>())); }

Stmt MakeEvaluate(Expr value) {
  auto n = MakeObject<EvaluateNode>();
  n->value = std::move(value);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Stmt MakeLetStmt(Var var, Expr value, Stmt body) {
  TT_ICHECK(var.dtype() == value.dtype(), "let binds {} to a {} value", var.dtype().str(),
            value.dtype().str());
  auto n = MakeObject<LetStmtNode>();
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Stmt MakeAllocate(Buffer buffer, Stmt body) {
  auto n = MakeObject<AllocateNode>();
  n->buffer = std::move(buffer);
  n->body = std::move(body);
  return Stmt(ObjectPtr<const StmtNode>(n));
}

Stmt WithBody(const ForNode* loop, Stmt body) {
  if (body.same_as(loop->body)) return GetStmtRef(loop);
  return MakeFor(loop->loop_var, loop->min, loop->extent, loop->for_kind, std::move(body),
                 loop->thread_tag, loop->annotations);
}

Block WithBody(const BlockNode* b, Stmt body) {
  return MakeBlock(b->name, b->iter_vars, b->reads, b->writes, std::move(body), b->init,
                   b->alloc_buffers, b->annotations);
}

Block WithInit(const BlockNode* b, Stmt init) {
  return MakeBlock(b->name, b->iter_vars, b->reads, b->writes, b->body, std::move(init),
                   b->alloc_buffers, b->annotations);
}

}  // namespace tirtune
