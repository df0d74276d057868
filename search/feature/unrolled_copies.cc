// The shape hash of unrolled_copies.h. UnrollLoops substitutes the unrolled variable by constants
// (which then fold into the offsets) and gives every copy's inner loops fresh variables:
//
//   for k in range(16):                 for k in range(16):
//     for i in unroll(2):                 for j in range(16):
//       for j in range(16):                 C[j] = C[j] + A[k] * B[j + k * 16]
//         C[i * 16 + j] = ...       =>    for j_1 in range(16):
//                                           C[j_1 + 16] = C[j_1 + 16] + A[k + 16] * B[j_1 + k * 16]
//
// so both loops over j hash alike.
#include "unrolled_copies.h"

#include <cstring>
#include <unordered_map>

#include "tirtune/ir/functor.h"

namespace tirtune::feature {
namespace {

class ShapeHasher {
 public:
  uint64_t Stmt(const tirtune::Stmt& s) {
    uint64_t h = Mix(kSeed, static_cast<uint64_t>(s->kind()));
    switch (s->kind()) {
      case NodeKind::kFor: {
        const auto* loop = static_cast<const ForNode*>(s.get());
        local_vars_.emplace(loop->loop_var.get(), local_vars_.size());
        h = Mix(h, static_cast<uint64_t>(loop->for_kind));
        h = Mix(Mix(h, Expr(loop->min)), Expr(loop->extent));
        return Mix(h, Stmt(loop->body));
      }
      case NodeKind::kBufferStore: {
        const auto* store = static_cast<const BufferStoreNode*>(s.get());
        has_store_ = true;
        h = Mix(Mix(h, reinterpret_cast<uintptr_t>(store->buffer.get())), Expr(store->value));
        for (const tirtune::Expr& index : store->indices) h = Mix(h, Expr(index));
        return h;
      }
      case NodeKind::kSeqStmt:
        for (const tirtune::Stmt& child : static_cast<const SeqStmtNode*>(s.get())->seq) {
          h = Mix(h, Stmt(child));
        }
        return h;
      case NodeKind::kIfThenElse: {
        const auto* branch = static_cast<const IfThenElseNode*>(s.get());
        h = Mix(Mix(h, Expr(branch->condition)), Stmt(branch->then_case));
        return branch->else_case.defined() ? Mix(h, Stmt(branch->else_case)) : h;
      }
      case NodeKind::kLetStmt: {
        const auto* let = static_cast<const LetStmtNode*>(s.get());
        local_vars_.emplace(let->var.get(), local_vars_.size());
        return Mix(Mix(h, Expr(let->value)), Stmt(let->body));
      }
      case NodeKind::kAllocate: {
        const auto* alloc = static_cast<const AllocateNode*>(s.get());
        return Mix(Mix(h, reinterpret_cast<uintptr_t>(alloc->buffer.get())), Stmt(alloc->body));
      }
      default:
        // Evaluate, and the block nodes that the lowered form does not have.
        return h;
    }
  }

  uint64_t Expr(const tirtune::Expr& e) {
    const ExprNode* n = e.get();
    uint64_t h = Mix(kSeed, static_cast<uint64_t>(n->kind()));
    h = Mix(h, static_cast<uint64_t>(n->dtype.lanes()) << 16 | n->dtype.bits() << 8 |
                   static_cast<uint64_t>(n->dtype.code()));
    switch (n->kind()) {
      case NodeKind::kIntImm:
        return h;
      case NodeKind::kFloatImm: {
        double v = static_cast<const FloatImmNode*>(n)->value;
        uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        return Mix(h, bits);
      }
      case NodeKind::kVar: {
        auto it = local_vars_.find(static_cast<const VarNode*>(n));
        return it != local_vars_.end() ? Mix(h, it->second)
                                       : Mix(~h, reinterpret_cast<uintptr_t>(n));
      }
      case NodeKind::kAdd:
      case NodeKind::kSub:
        if (BinaryB(n)->kind() == NodeKind::kIntImm) return Expr(BinaryA(n));
        if (BinaryA(n)->kind() == NodeKind::kIntImm) return Expr(BinaryB(n));
        break;
      case NodeKind::kBufferLoad: {
        const auto* load = static_cast<const BufferLoadNode*>(n);
        h = Mix(h, reinterpret_cast<uintptr_t>(load->buffer.get()));
        for (const tirtune::Expr& index : load->indices) h = Mix(h, Expr(index));
        return h;
      }
      default:
        break;
    }
    if (IsBinaryOpKind(n->kind())) return Mix(Mix(h, Expr(BinaryA(n))), Expr(BinaryB(n)));
    // The remaining kinds (not, select, cast, call, ramp, broadcast, let): their children.
    PostOrderVisit(e, [&](const Object* node) {
      if (node == n) return;
      if (node->kind() == NodeKind::kVar || node->kind() == NodeKind::kFloatImm) {
        h = Mix(h, Expr(GetRef(static_cast<const ExprNode*>(node))));
      } else {
        h = Mix(h, static_cast<uint64_t>(node->kind()));
      }
    });
    return h;
  }

  bool has_store() const { return has_store_; }

 private:
  static constexpr uint64_t kSeed = 0xcbf29ce484222325ULL;
  static uint64_t Mix(uint64_t h, uint64_t v) {
    return (h ^ (v + 0x9e3779b97f4a7c15ULL)) * 0x100000001b3ULL;
  }

  // Variables defined inside the hashed statement, numbered in definition order.
  std::unordered_map<const VarNode*, uint64_t> local_vars_;
  bool has_store_ = false;
};

}  // namespace

uint64_t StoreShapeHash(const Stmt& s) {
  ShapeHasher hasher;
  uint64_t h = hasher.Stmt(s);
  if (!hasher.has_store()) return 0;
  return h != 0 ? h : 1;
}

std::vector<const BufferStoreNode*> StoresInOrder(const Stmt& s) {
  std::vector<const BufferStoreNode*> stores;
  PreOrderVisit(s, [&](const Object* node) {
    if (const auto* store = node->as<BufferStoreNode>()) stores.push_back(store);
    return StmtNode::IsKind(node->kind());  // expressions hold no stores
  });
  return stores;
}

}  // namespace tirtune::feature
