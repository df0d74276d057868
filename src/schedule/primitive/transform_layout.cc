// transform_layout: stores a read-only parameter (a constant weight) in a packed layout
// (ir/packed_layout.h), the order a tiled kernel reads it, so the innermost loops walk it
// contiguously. The parameter's buffer takes the packed shape, every load of it reads the packed
// element, and the function attribute kPackedParamsAttr records the layout: the caller passes the
// packed tensor (the runner packs its random inputs, the model compiler packs the constant once).
//
// Preconditions:
//  1. `param_index` names a parameter of the function;
//  2. no block of the function writes it;
//  3. it is not packed already;
//  4. its shape is constant and is the layout's source shape, and the layout is valid
//     (PackedLayout::Check).
//
// Before:                                   After TransformLayout(1, W[co, ci] -> [co/16, ci,
// co%16]):
//   def f(X: (8, 48), W: (64, 48), Y):        def f(X: (8, 48), W: (4, 48, 16), Y):
//     ... Y[i, co] += X[i, ci] * W[co, ci]      ... Y[i, co] += X[i, ci] * W[co // 16, ci, co % 16]
#include <fmt/format.h>

#include "block_checks.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

[[noreturn]] void Reject(const PrimFunc& func, int param_index, const std::string& why) {
  throw SimpleScheduleError(
      "TransformLayoutError",
      fmt::format("transform_layout of parameter {} of '{}': {}", param_index, func->name, why),
      {});
}

// Loads of `from` read `to` at the packed indices; regions of `from` become all of `to`.
class PackedReads : public StmtMutator {
 public:
  PackedReads(const Buffer& from, Buffer to, const PackedLayout& layout)
      : from_(from.get()), to_(std::move(to)), layout_(layout) {}

  using StmtMutator::VisitExpr_;
  using StmtMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr visited = StmtMutator::VisitExpr_(op);
    const auto* load = visited.as<BufferLoadNode>();
    if (load->buffer.get() != from_) return visited;
    return MakeBufferLoad(to_, layout_.PackedIndices(load->indices));
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt visited = StmtMutator::VisitStmt_(op);
    const auto* block = visited.as<BlockNode>();
    std::vector<BufferRegion> reads = block->reads;
    bool changed = false;
    for (BufferRegion& r : reads) {
      if (r.buffer.get() == from_) {
        r = BufferRegion::Full(to_);
        changed = true;
      }
    }
    if (!changed) return visited;
    return MakeBlock(block->name, block->iter_vars, std::move(reads), block->writes, block->body,
                     block->init, block->alloc_buffers, block->annotations);
  }

 private:
  const BufferNode* from_;
  Buffer to_;
  const PackedLayout& layout_;
};

}  // namespace

void Schedule::TransformLayout(int param_index, const PackedLayout& layout) {
  const PrimFunc& f = func();
  // Precondition 1.
  if (param_index < 0 || param_index >= static_cast<int>(f->params.size())) {
    Reject(f, param_index, fmt::format("the function has {} parameters", f->params.size()));
  }
  const Buffer& param = f->params[param_index];
  // Precondition 2.
  for (const BlockRealizeNode* realize : state_.AllBlocks()) {
    if (WritesBuffer(realize->block.get(), param)) {
      Reject(f, param_index,
             fmt::format("'{}' is written by block '{}'", param->name, realize->block->name));
    }
  }
  // Precondition 3.
  std::map<int, PackedLayout> packed = PackedParams(f);
  if (packed.count(param_index) != 0) {
    Reject(f, param_index, fmt::format("'{}' is packed already", param->name));
  }
  // Precondition 4.
  std::vector<int64_t> shape;
  for (const Expr& e : param->shape) {
    const auto* imm = e.as<IntImmNode>();
    if (imm == nullptr)
      Reject(f, param_index, fmt::format("'{}' has a symbolic shape", param->name));
    shape.push_back(imm->value);
  }
  if (shape != layout.source_shape) {
    Reject(f, param_index,
           fmt::format("the layout packs a tensor of shape ({}), '{}' has shape ({})",
                       fmt::join(layout.source_shape, ", "), param->name, fmt::join(shape, ", ")));
  }
  try {
    layout.Check();
  } catch (const UserError& e) {
    Reject(f, param_index, e.what());
  }
  if (check_only_) return;

  std::vector<Expr> packed_shape;
  DataType index = param->shape.empty() ? DataType::Index() : param->shape[0].dtype();
  for (int64_t e : layout.PackedShape()) packed_shape.push_back(IntImm(index, e));
  Buffer to = param.WithShape(std::move(packed_shape));
  Stmt body = PackedReads(param, to, layout).VisitStmt(f->body);
  std::vector<Buffer> params = f->params;
  params[param_index] = to;
  packed.emplace(param_index, layout);
  state_.SetFunc(
      WithPackedParams(PrimFunc(f->name, std::move(params), std::move(body), f->attrs), packed));
  Record("TransformLayout", {},
         {{"param_index", param_index}, {"layout", nlohmann::json::parse(layout.ToJson())}}, {});
}

}  // namespace tirtune
