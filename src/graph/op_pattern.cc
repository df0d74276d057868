// AnalyzeOpPattern: the fusion pattern of a PrimFunc from the index expressions of its blocks'
// stores and loads (rules in op_pattern.h).
#include "tirtune/graph/op_pattern.h"

#include <algorithm>

#include "tirtune/ir/functor.h"

namespace tirtune::graph {
namespace {

OpPattern Combine(OpPattern a, OpPattern b) { return std::max(a, b); }

// The pattern of one load relative to the store's indices (the block's spatial iterators).
OpPattern LoadPattern(const BufferLoadNode* load, const std::vector<Expr>& store_indices) {
  if (load->indices.size() == store_indices.size()) {
    bool same = true;
    for (size_t i = 0; i < store_indices.size() && same; ++i) {
      same = load->indices[i].same_as(store_indices[i]);
    }
    if (same) return OpPattern::kElemWise;
  }
  // Broadcast: every index is a store index, in increasing store position, or 0 on a dimension
  // of extent 1.
  size_t next = 0;
  for (size_t d = 0; d < load->indices.size(); ++d) {
    const Expr& index = load->indices[d];
    if (IsConstInt(index, 0) && IsConstInt(load->buffer->shape[d], 1)) continue;
    auto it = std::find_if(store_indices.begin() + next, store_indices.end(),
                           [&](const Expr& s) { return s.same_as(index); });
    if (it == store_indices.end()) return OpPattern::kInjective;
    next = static_cast<size_t>(it - store_indices.begin()) + 1;
  }
  return OpPattern::kBroadcast;
}

// The buffers `e` loads from.
std::vector<const BufferNode*> LoadedBuffers(const Expr& e) {
  std::vector<const BufferNode*> buffers;
  PostOrderVisit(e, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferLoad) {
      buffers.push_back(static_cast<const BufferLoadNode*>(node)->buffer.get());
    }
  });
  return buffers;
}

// `acc + a * b` (in either order) where acc reads the stored element and a and b read disjoint
// sets of buffers: the multiply-accumulate of conv2d and dense (a may be guarded by a
// select, as the stride-dilated input of conv2d_transpose).
bool IsMultiplyAccumulate(const BufferStoreNode* store) {
  const auto* add = store->value.as<AddNode>();
  if (!add) return false;
  auto is_acc = [&](const Expr& e) {
    const auto* load = e.as<BufferLoadNode>();
    return load && load->buffer.same_as(store->buffer);
  };
  auto is_product = [&](const Expr& e) {
    const auto* mul = e.as<MulNode>();
    if (!mul) return false;
    std::vector<const BufferNode*> a = LoadedBuffers(mul->a), b = LoadedBuffers(mul->b);
    if (a.empty() || b.empty()) return false;
    for (const BufferNode* x : a) {
      if (std::find(b.begin(), b.end(), x) != b.end()) return false;
    }
    return true;
  };
  return (is_acc(add->a) && is_product(add->b)) || (is_acc(add->b) && is_product(add->a));
}

OpPattern BlockPattern(const BlockNode* block) {
  const auto* store = block->body.as<BufferStoreNode>();
  if (!store) return OpPattern::kOpaque;
  // The store writes buffer[spatial iterators], each at most once.
  std::vector<const VarNode*> spatial;
  bool has_reduce = false;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kReduce) has_reduce = true;
    if (iv.kind == IterKind::kSpatial) spatial.push_back(iv.var.get());
  }
  std::vector<const VarNode*> seen;
  for (const Expr& index : store->indices) {
    const auto* var = index.as<VarNode>();
    if (!var || std::find(spatial.begin(), spatial.end(), var) == spatial.end() ||
        std::find(seen.begin(), seen.end(), var) != seen.end()) {
      return OpPattern::kOpaque;
    }
    seen.push_back(var);
  }
  if (has_reduce) {
    return IsMultiplyAccumulate(store) ? OpPattern::kOutEWiseFusable : OpPattern::kCommReduce;
  }
  OpPattern pattern = OpPattern::kElemWise;
  PostOrderVisit(store->value, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferLoad) {
      pattern =
          Combine(pattern, LoadPattern(static_cast<const BufferLoadNode*>(node), store->indices));
    }
  });
  return pattern;
}

// Combines the patterns of every block below the root; a store outside a block is opaque.
class PatternCollector : public StmtVisitor {
 public:
  OpPattern pattern = OpPattern::kElemWise;
  bool found_block = false;

  using StmtVisitor::VisitStmt_;
  void VisitStmt_(const BlockNode* op) override {
    found_block = true;
    pattern = Combine(pattern, BlockPattern(op));
    // A block nested in this one would be an opaque structure for the analysis.
    PreOrderVisit(op->body, [&](const Object* node) {
      if (node->kind() == NodeKind::kBlock) pattern = OpPattern::kOpaque;
      return true;
    });
  }
  void VisitStmt_(const BufferStoreNode* op) override { pattern = OpPattern::kOpaque; }
};

}  // namespace

OpPattern AnalyzeOpPattern(const PrimFunc& func) {
  const auto* realize = func->body.as<BlockRealizeNode>();
  if (!realize || realize->block->name != "root") return OpPattern::kOpaque;
  PatternCollector collector;
  collector.VisitStmt(realize->block->body);
  return collector.found_block ? collector.pattern : OpPattern::kOpaque;
}

}  // namespace tirtune::graph
