// pad_einsum: pads the iteration space of an einsum-like block (a GEMM, a dense layer, a batch
// matmul) to multiples of the given factors, so that every loop of it tiles evenly. Each input
// the padded iterators index is copied into a padded buffer `<name>_pad` whose extra elements are
// zero; the block computes into a padded output `<name>_pad`, which a last stage copies back.
// Zeros keep the result exact: a padded reduction iteration adds a product with a zero factor,
// and padded output elements are never copied back.
//
// Preconditions:
//  1. the block is not the root block, it has one loop per iterator directly in its scope,
//     outermost first, each starting at 0 and binding its iterator alone (a trivial binding),
//     and nothing else is in that nest;
//  2. one factor per iterator, each positive;
//  3. every index of every buffer access in the block (body and init) is an iterator alone or an
//     expression without iterators, and every access of one buffer uses the same indices;
//  4. the block writes one buffer, of a float type, which no other block of the scope accesses,
//     and reads it only as a reduction with an init (the padded output starts uninitialized);
//  5. when a reduction iterator is padded: the body is `C[..] = C[..] + term`, and `term` is a
//     product (casts allowed) with a factor that loads, at that iterator, a padded input.
//
// Before (extents 13, 10, 9):               After PadEinsum(C, [8, 8, 1]):
//   for i, j, k in grid(13, 10, 9):           for ax0, ax1 in grid(16, 9):  A_pad[..] = select(
//     with block("C"):                            ax0 < 13, A[min(ax0, 12), ax1], 0.0)
//       C[vi, vj] += A[vi, vk] * B[vk, vj]     for ax0, ax1 in grid(9, 16):  B_pad[..] = ...
//                                              for i, j, k in grid(16, 16, 9):
//                                                C_pad[vi, vj] += A_pad[vi, vk] * B_pad[vk, vj]
//                                              for ax0, ax1 in grid(13, 10):
//                                                C[v0, v1] = C_pad[v0, v1]
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cache_stage.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

[[noreturn]] void Reject(const BlockRealizeNode* realize, const std::string& why) {
  throw SimpleScheduleError("PadEinsumError",
                            fmt::format("pad_einsum of block '{}': {}", realize->block->name, why),
                            {realize});
}

// Precondition 1: the block's loops, outermost first.
std::vector<const ForNode*> OwnLoopNest(const ScheduleState& state,
                                        const BlockRealizeNode* realize) {
  const BlockNode* block = realize->block.get();
  std::vector<const ForNode*> loops = state.LoopsAbove(realize);
  if (state.ScopeBlock(realize) == nullptr) Reject(realize, "it is the root block");
  if (loops.size() != block->iter_vars.size()) {
    Reject(realize, fmt::format("it has {} loops for {} iterators; it needs its own loop per "
                                "iterator",
                                loops.size(), block->iter_vars.size()));
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    const ForNode* loop = loops[i];
    const Stmt& inner = i + 1 < loops.size() ? GetStmtRef(loops[i + 1]) : GetStmtRef(realize);
    if (!loop->body.same_as(inner) || !IsConstInt(loop->min, 0) ||
        !realize->iter_values[i].same_as(loop->loop_var) || AsConstInt(loop->extent) == nullptr ||
        !IsConstInt(block->iter_vars[i].dom.extent, *AsConstInt(loop->extent)) ||
        !IsConstInt(block->iter_vars[i].dom.min, 0)) {
      Reject(realize, fmt::format("loop '{}' is not the only loop of iterator '{}' from 0 with the "
                                  "block alone under it",
                                  loop->loop_var->name, block->iter_vars[i].var->name));
    }
  }
  if (!IsConstInt(realize->predicate, 1)) Reject(realize, "the block has a predicate");
  return loops;
}

// Precondition 3: the iterator (its position) of each index of an access, or -1 for an index
// without iterators.
std::vector<int> AccessAxes(const BlockRealizeNode* realize, const std::vector<Expr>& indices,
                            const std::string& buffer) {
  const BlockNode* block = realize->block.get();
  std::vector<int> axes;
  for (const Expr& index : indices) {
    int axis = -1;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (index.same_as(block->iter_vars[i].var)) axis = static_cast<int>(i);
    }
    bool uses_iterator = UsesVar(index, [&](const VarNode* v) {
      return std::any_of(block->iter_vars.begin(), block->iter_vars.end(),
                         [&](const IterVar& iv) { return iv.var.get() == v; });
    });
    if (axis < 0 && uses_iterator) {
      Reject(realize, fmt::format("buffer '{}' is indexed by {}, not by an iterator alone", buffer,
                                  ToString(index)));
    }
    axes.push_back(axis);
  }
  return axes;
}

// A buffer the block accesses, with the iterator of each of its indices (precondition 3).
struct Accessed {
  Buffer buffer;
  std::vector<int> axes;
};

std::map<const BufferNode*, Accessed> AccessedBuffers(const BlockRealizeNode* realize) {
  std::map<const BufferNode*, Accessed> out;
  auto note = [&](const Buffer& buffer, const std::vector<Expr>& indices) {
    std::vector<int> axes = AccessAxes(realize, indices, buffer->name);
    auto [it, fresh] = out.emplace(buffer.get(), Accessed{buffer, axes});
    if (!fresh && it->second.axes != axes) {
      Reject(realize, fmt::format("buffer '{}' is accessed at different indices", buffer->name));
    }
  };
  auto visit = [&](const Stmt& s) {
    if (!s.defined()) return;
    PostOrderVisit(s, [&](const Object* node) {
      if (const auto* load = node->as<BufferLoadNode>()) note(load->buffer, load->indices);
      if (const auto* store = node->as<BufferStoreNode>()) note(store->buffer, store->indices);
    });
  };
  visit(realize->block->body);
  visit(realize->block->init);
  return out;
}

// Precondition 5: the factors of a product (through casts).
void ProductFactors(const Expr& e, std::vector<Expr>* out) {
  if (const auto* mul = e.as<MulNode>()) {
    ProductFactors(mul->a, out);
    ProductFactors(mul->b, out);
  } else if (const auto* cast = e.as<CastNode>()) {
    ProductFactors(cast->value, out);
  } else {
    out->push_back(e);
  }
}

// Rewrites accesses of the padded buffers to their padded copies.
class PaddedAccessRewriter : public StmtMutator {
 public:
  explicit PaddedAccessRewriter(const std::map<const BufferNode*, Buffer>& padded)
      : padded_(padded) {}
  using StmtMutator::VisitExpr_;
  using StmtMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtMutator::VisitExpr_(op);
    const auto* load = e.as<BufferLoadNode>();
    auto it = padded_.find(load->buffer.get());
    return it == padded_.end() ? e : MakeBufferLoad(it->second, load->indices);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    const auto* store = s.as<BufferStoreNode>();
    auto it = padded_.find(store->buffer.get());
    return it == padded_.end() ? s : MakeBufferStore(it->second, store->value, store->indices);
  }
  std::vector<BufferRegion> Regions(std::vector<BufferRegion> regions) const {
    for (BufferRegion& r : regions) {
      auto it = padded_.find(r.buffer.get());
      if (it != padded_.end()) r.buffer = it->second;
    }
    return regions;
  }

 private:
  const std::map<const BufferNode*, Buffer>& padded_;
};

// A loop nest over `shape` around one block `name` storing value(v0, v1, ...) into dst[v...].
Stmt MakeStage(const ScheduleState& state, const std::string& name,
               const std::vector<int64_t>& shape, const Buffer& src, const Buffer& dst,
               const std::function<Expr(const std::vector<Expr>&)>& value) {
  std::vector<Var> loop_vars;
  std::vector<IterVar> iter_vars;
  std::vector<Expr> bindings, indices;
  for (size_t k = 0; k < shape.size(); ++k) {
    DataType t = DataType::Index();
    loop_vars.push_back(state.FreshLoopVar(fmt::format("ax{}", k), t));
    Var v(fmt::format("v{}", k), t);
    iter_vars.push_back(
        IterVar{v, Range::FromMinExtent(IntImm(t, 0), IntImm(t, shape[k])), IterKind::kSpatial});
    bindings.push_back(loop_vars.back());
    indices.push_back(v);
  }
  Block block =
      MakeBlock(name, iter_vars, {BufferRegion::Full(src)}, {BufferRegion::Point(dst, indices)},
                MakeBufferStore(dst, value(indices), indices));
  Stmt nest = MakeBlockRealize(bindings, Bool(true), block);
  for (size_t k = shape.size(); k-- > 0;) {
    nest = MakeFor(loop_vars[k], IntImm(DataType::Index(), 0), IntImm(DataType::Index(), shape[k]),
                   ForKind::kSerial, nest);
  }
  return nest;
}

std::vector<int64_t> ConstShape(const Buffer& buffer) {
  std::vector<int64_t> shape;
  for (const Expr& e : buffer->shape) {
    const int64_t* n = AsConstInt(e);
    TT_ICHECK(n != nullptr, "buffer '{}' has a symbolic shape", buffer->name);
    shape.push_back(*n);
  }
  return shape;
}

}  // namespace

void Schedule::PadEinsum(BlockRV block_rv, const std::vector<int64_t>& padding) {
  const BlockRealizeNode* realize = Get(block_rv);
  const BlockNode* block = realize->block.get();
  // Step 1. Preconditions 1-2: the nest and the factors.
  std::vector<const ForNode*> loops = OwnLoopNest(state_, realize);
  if (padding.size() != block->iter_vars.size()) {
    Reject(realize,
           fmt::format("{} factors for {} iterators", padding.size(), block->iter_vars.size()));
  }
  std::vector<int64_t> extents, padded_extents;
  for (size_t i = 0; i < padding.size(); ++i) {
    if (padding[i] < 1 || padding[i] > (int64_t{1} << 20)) {
      Reject(realize, fmt::format("factor {} for iterator '{}'; factors are 1 to 2^20", padding[i],
                                  block->iter_vars[i].var->name));
    }
    int64_t extent = *AsConstInt(loops[i]->extent);
    extents.push_back(extent);
    padded_extents.push_back((extent + padding[i] - 1) / padding[i] * padding[i]);
  }
  // Step 2. Preconditions 3-4: the accesses and the output.
  std::map<const BufferNode*, Accessed> accessed = AccessedBuffers(realize);
  if (block->writes.size() != 1) {
    Reject(realize, fmt::format("it writes {} buffers; it must write one", block->writes.size()));
  }
  Buffer output = block->writes[0].buffer;
  if (!output->dtype.is_float()) {
    Reject(realize,
           fmt::format("its output '{}' is {}, not a float", output->name, output->dtype.str()));
  }
  bool reads_output = std::any_of(block->reads.begin(), block->reads.end(),
                                  [&](const BufferRegion& r) { return r.buffer.same_as(output); });
  if (reads_output && !block->init.defined()) {
    Reject(realize, fmt::format("it reads its output '{}' without an init; a padded copy of the "
                                "output would start without its values",
                                output->name));
  }
  const BlockRealizeNode* scope = state_.ScopeBlock(realize);
  for (const BlockRealizeNode* other : state_.ChildBlocks(scope)) {
    if (other == realize) continue;
    for (const auto& regions : {other->block->reads, other->block->writes}) {
      for (const BufferRegion& r : regions) {
        if (r.buffer.same_as(output)) {
          Reject(realize, fmt::format("block '{}' also accesses its output '{}'",
                                      other->block->name, output->name));
        }
      }
    }
  }
  // The buffers to pad: those indexed by a padded iterator.
  auto is_padded_axis = [&](int axis) {
    return axis >= 0 && padded_extents[axis] != extents[axis];
  };
  std::map<const BufferNode*, Buffer> padded;
  std::vector<std::pair<Buffer, std::vector<int64_t>>> padded_inputs;
  std::vector<int64_t> output_shape;
  for (const auto& [node, access] : accessed) {
    const std::vector<int>& axes = access.axes;
    if (std::none_of(axes.begin(), axes.end(), is_padded_axis)) continue;
    const Buffer& buffer = access.buffer;
    std::vector<int64_t> shape = ConstShape(buffer);
    for (size_t d = 0; d < axes.size(); ++d) {
      if (is_padded_axis(axes[d])) shape[d] = padded_extents[axes[d]];
    }
    std::vector<Expr> shape_exprs;
    for (int64_t n : shape) shape_exprs.push_back(IntImm(DataType::Index(), n));
    padded[node] = buffer.WithName(buffer->name + "_pad").WithShape(shape_exprs);
    if (node == output.get()) {
      output_shape = ConstShape(buffer);
    } else {
      padded_inputs.emplace_back(buffer, shape);
    }
  }
  // Precondition 5: a padded reduction iteration adds zero.
  for (size_t i = 0; i < padding.size(); ++i) {
    if (block->iter_vars[i].kind != IterKind::kReduce || padded_extents[i] == extents[i]) continue;
    const auto* store = block->body.as<BufferStoreNode>();
    const auto* add = store != nullptr ? store->value.as<AddNode>() : nullptr;
    const auto* self = add != nullptr ? add->a.as<BufferLoadNode>() : nullptr;
    bool zero_term = false;
    if (self != nullptr && self->buffer.same_as(store->buffer)) {
      std::vector<Expr> factors;
      ProductFactors(add->b, &factors);
      for (const Expr& f : factors) {
        const auto* load = f.as<BufferLoadNode>();
        if (load == nullptr || load->buffer.same_as(output)) continue;
        const std::vector<int>& axes = accessed.at(load->buffer.get()).axes;
        zero_term |= std::find(axes.begin(), axes.end(), static_cast<int>(i)) != axes.end();
      }
    }
    if (!zero_term) {
      Reject(realize, fmt::format("padding reduction iterator '{}' needs the body C = C + term "
                                  "with a factor of term that loads an input at it (its padding "
                                  "is zero)",
                                  block->iter_vars[i].var->name));
    }
  }
  if (check_only_) return;

  // Step 3. The block over the padded space, reading and writing the padded buffers.
  PaddedAccessRewriter rewrite(padded);
  std::vector<IterVar> iter_vars = block->iter_vars;
  for (size_t i = 0; i < iter_vars.size(); ++i) {
    iter_vars[i].dom =
        Range::FromMinExtent(IntImm(iter_vars[i].dom.extent.dtype(), 0),
                             IntImm(iter_vars[i].dom.extent.dtype(), padded_extents[i]));
  }
  Block new_block = MakeBlock(block->name, iter_vars, rewrite.Regions(block->reads),
                              rewrite.Regions(block->writes), rewrite.VisitStmt(block->body),
                              block->init.defined() ? rewrite.VisitStmt(block->init) : Stmt(),
                              block->alloc_buffers, block->annotations);
  Stmt nest = MakeBlockRealize(realize->iter_values, realize->predicate, new_block);
  for (size_t i = loops.size(); i-- > 0;) {
    const ForNode* loop = loops[i];
    nest = MakeFor(loop->loop_var, loop->min, IntImm(loop->extent.dtype(), padded_extents[i]),
                   loop->for_kind, nest, loop->thread_tag, loop->annotations);
  }

  // Step 4. The stages: zero-padded copies of the inputs before, the output copied back after.
  std::vector<Stmt> before;
  std::vector<Buffer> allocations;
  for (const auto& [input, shape] : padded_inputs) {
    const Buffer& dst = padded.at(input.get());
    std::vector<int64_t> orig = ConstShape(input);
    before.push_back(MakeStage(
        state_, state_.FreshBlockName(dst->name), shape, input, dst,
        [&](const std::vector<Expr>& v) {
          Expr inside = Bool(true);
          std::vector<Expr> clamped;
          for (size_t d = 0; d < v.size(); ++d) {
            if (shape[d] == orig[d]) {
              clamped.push_back(v[d]);
              continue;
            }
            Expr last = IntImm(DataType::Index(), orig[d] - 1);
            inside =
                MakeBinary(NodeKind::kAnd, inside,
                           MakeBinary(NodeKind::kLT, v[d], IntImm(DataType::Index(), orig[d])));
            clamped.push_back(MakeBinary(NodeKind::kMin, v[d], last));
          }
          return MakeSelect(inside, MakeBufferLoad(input, clamped), MakeConst(input->dtype, 0.0));
        }));
    allocations.push_back(dst);
  }
  std::vector<Stmt> after;
  if (!output_shape.empty()) {
    const Buffer& src = padded.at(output.get());
    after.push_back(MakeStage(state_, state_.FreshBlockName(src->name), output_shape, src, output,
                              [&](const std::vector<Expr>& v) { return MakeBufferLoad(src, v); }));
    allocations.push_back(src);
  }
  std::string scope_name = scope->block->name;
  size_t pos = ScopeStatementIndex(state_, scope, loops.front());
  state_.Replace(loops.front(), nest);
  const BlockRealizeNode* new_scope = state_.FindBlock(scope_name);
  std::vector<Stmt> stmts = ScopeStatements(new_scope);
  stmts.insert(stmts.begin() + static_cast<std::ptrdiff_t>(pos) + 1, after.begin(), after.end());
  stmts.insert(stmts.begin() + static_cast<std::ptrdiff_t>(pos), before.begin(), before.end());
  state_.Replace(new_scope, WithScopeStatements(new_scope, std::move(stmts), allocations));

  Record("PadEinsum", {block_rv.ref()}, {{"padding", padding}}, {});
}

}  // namespace tirtune
