// FlattenBuffers: every buffer, parameters included, becomes one-dimensional. Its size is the
// number of elements (row-major) or, with explicit strides, the span those strides reach; each
// access gets one int64 index, sum(index[d] * stride[d]).
//
//   def f(A: Buffer((4, 8), float32)):           def f(A: Buffer((32,), float32)):
//     with allocate(B, (4, 8), float32,             with allocate(B, (40,), float32):
//                   strides=(10, 1)):                   for i in range(4):
//       for i in range(4):                                  for j in range(8):
//         for j in range(8):                                    B[i * 10 + j] = A[i * 8 + j]
//           B[i, j] = A[i, j]
// A buffer that is already one-dimensional without strides is kept as it is. Blocks must have
// been converted first: their regions have no one-dimensional meaning.
#include <unordered_map>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/lower/passes.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

bool IsFlat(const Buffer& buffer) { return buffer->ndim() == 1 && buffer->strides.empty(); }

// The strides of `buffer`: its own, or row-major ones.
std::vector<Expr> StridesOf(const Buffer& buffer) {
  if (!buffer->strides.empty()) return buffer->strides;
  std::vector<Expr> strides(buffer->ndim());
  Expr stride = IntImm(DataType::Index(), 1);
  for (int d = buffer->ndim() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride = stride * Cast(DataType::Index(), buffer->shape[d]);
  }
  return strides;
}

// The one-dimensional buffer holding every element `buffer` can address.
Buffer FlatBuffer(const Buffer& buffer) {
  Expr size;
  if (buffer->strides.empty()) {
    size = IntImm(DataType::Index(), 1);
    for (const Expr& e : buffer->shape) size = size * Cast(DataType::Index(), e);
  } else {
    // The last element reachable, plus one; an empty dimension makes the buffer empty.
    size = IntImm(DataType::Index(), 1);
    for (int d = 0; d < buffer->ndim(); ++d) {
      Expr extent = Cast(DataType::Index(), buffer->shape[d]);
      size = size + (extent - 1) * Cast(DataType::Index(), buffer->strides[d]);
    }
  }
  return buffer.WithShape({size});
}

class Flattener : public StmtMutator {
 public:
  using StmtMutator::VisitExpr_;
  using StmtMutator::VisitStmt_;

  /// The flat version of `buffer`, made once per buffer.
  Buffer Flat(const Buffer& buffer) {
    if (IsFlat(buffer)) return buffer;
    auto it = flat_.find(buffer.get());
    if (it != flat_.end()) return it->second;
    Buffer flat = FlatBuffer(buffer);
    flat_.emplace(buffer.get(), flat);
    return flat;
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr visited = StmtMutator::VisitExpr_(op);
    const auto* load = visited.as<BufferLoadNode>();
    return MakeBufferLoad(Flat(load->buffer), {FlatIndex(load->buffer, load->indices)});
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt visited = StmtMutator::VisitStmt_(op);
    const auto* store = visited.as<BufferStoreNode>();
    return MakeBufferStore(Flat(store->buffer), store->value,
                           {FlatIndex(store->buffer, store->indices)});
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    return MakeAllocate(Flat(op->buffer), VisitStmt(op->body));
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    TT_UNREACHABLE("block {} reached FlattenBuffers; run ConvertBlocksToLoops first", op->name);
  }

 private:
  static Expr FlatIndex(const Buffer& buffer, const std::vector<Expr>& indices) {
    if (IsFlat(buffer)) return ToIndexType(indices[0]);
    std::vector<Expr> strides = StridesOf(buffer);
    Expr index;
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr term = ToIndexType(indices[d]) * strides[d];
      index = index.defined() ? index + term : term;
    }
    return index.defined() ? index : IntImm(DataType::Index(), 0);
  }

  static Expr ToIndexType(const Expr& index) {
    return index.dtype().element_of() == DataType::Index()
               ? index
               : MakeCast(DataType::Index().with_lanes(index.dtype().lanes()), index);
  }

  std::unordered_map<const BufferNode*, Buffer> flat_;
};

}  // namespace

PrimFunc FlattenBuffers(const PrimFunc& func) {
  Flattener flattener;
  std::vector<Buffer> params;
  for (const Buffer& p : func->params) params.push_back(flattener.Flat(p));
  Stmt body = flattener.VisitStmt(func->body);
  return PrimFunc(func->name, std::move(params), std::move(body), func->attrs);
}

}  // namespace tirtune
