// Block and loop analysis for the schedule rules and postprocessors.
#include "block_analysis.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

bool UsesThisVar(const Expr& expr, const VarNode* var) {
  return UsesVar(expr, [var](const VarNode* v) { return v == var; });
}

// The block realizes directly under `stmt` (not inside another block).
template <typename Fn>
void ForEachRealizeUnder(const Stmt& stmt, Fn&& fn) {
  PreOrderVisit(stmt, [&](const Object* node) {
    if (node->kind() == NodeKind::kBlockRealize) {
      fn(static_cast<const BlockRealizeNode*>(node));
      return false;
    }
    return node->kind() >= NodeKind::kFor;  // statements only
  });
}

// `index` as `var + offset` or a constant; false for anything else.
bool AsVarPlusConst(const Expr& index, const VarNode** var) {
  *var = nullptr;
  if (AsConstInt(index) != nullptr) return true;
  if (const auto* v = index.as<VarNode>()) {
    *var = v;
    return true;
  }
  if (index->kind() == NodeKind::kAdd || index->kind() == NodeKind::kSub) {
    const Expr& a = BinaryA(index.get());
    const Expr& b = BinaryB(index.get());
    if (a.as<VarNode>() != nullptr && AsConstInt(b) != nullptr) {
      *var = a.as<VarNode>();
      return true;
    }
    if (index->kind() == NodeKind::kAdd && b.as<VarNode>() != nullptr && AsConstInt(a) != nullptr) {
      *var = b.as<VarNode>();
      return true;
    }
  }
  return false;
}

}  // namespace

LoopIterKind IterKindOfLoop(const ForNode* loop) {
  const VarNode* var = loop->loop_var.get();
  bool spatial = false;
  bool reduce = false;
  ForEachRealizeUnder(loop->body, [&](const BlockRealizeNode* realize) {
    const BlockNode* block = realize->block.get();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (!UsesThisVar(realize->iter_values[i], var)) continue;
      (block->iter_vars[i].kind == IterKind::kReduce ? reduce : spatial) = true;
    }
  });
  if (spatial && reduce) return LoopIterKind::kMixed;
  return reduce ? LoopIterKind::kReduce : LoopIterKind::kSpatial;
}

bool IsPlainSpatialLoop(const ForNode* loop) {
  return loop->for_kind == ForKind::kSerial && loop->annotations.empty() &&
         AsConstInt(loop->extent) != nullptr && IterKindOfLoop(loop) == LoopIterKind::kSpatial;
}

bool HasSingleChild(const ForNode* loop) {
  return loop->body->kind() == NodeKind::kFor || loop->body->kind() == NodeKind::kBlockRealize;
}

std::vector<int64_t> ParallelizablePrefixExtents(const std::vector<const ForNode*>& loops) {
  std::vector<int64_t> out;
  int64_t product = 1;
  for (const ForNode* loop : loops) {
    if (!IsPlainSpatialLoop(loop)) break;
    product *= *AsConstInt(loop->extent);
    out.push_back(product);
    if (!HasSingleChild(loop)) break;
  }
  return out;
}

size_t NumParallelLoops(const std::vector<int64_t>& prefix_extents, int64_t limit) {
  size_t n = 0;
  // Loops of extent 1 in front (a batch of one) do not count as the one loop always taken: a
  // nest [1, 56, 56, 64] under a limit of 32 fuses the first two, not none.
  while (n < prefix_extents.size() &&
         (n == 0 || prefix_extents[n - 1] == 1 || prefix_extents[n] <= limit)) {
    ++n;
  }
  return n > 0 && prefix_extents[n - 1] > 1 ? n : 0;
}

bool IsSpatialBlock(const BlockNode* block) {
  if (block->init.defined()) return false;
  return std::none_of(block->iter_vars.begin(), block->iter_vars.end(),
                      [](const IterVar& iv) { return iv.kind == IterKind::kReduce; });
}

bool IsReductionBlock(const BlockNode* block) {
  return block->init.defined() &&
         std::any_of(block->iter_vars.begin(), block->iter_vars.end(),
                     [](const IterVar& iv) { return iv.kind == IterKind::kReduce; });
}

bool IsRootBlock(const ScheduleState& state, const BlockRealizeNode* realize) {
  return state.func()->body.get() == realize;
}

bool IsSpatialFunc(const ScheduleState& state) {
  for (const BlockRealizeNode* realize : state.AllBlocks()) {
    if (!IsRootBlock(state, realize) && !IsSpatialBlock(realize->block.get())) return false;
  }
  return true;
}

bool HasTrivialBinding(const ScheduleState& state, const BlockRealizeNode* realize) {
  std::vector<const ForNode*> loops = state.LoopsAbove(realize);
  if (loops.size() != realize->iter_values.size()) return false;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (realize->iter_values[i].get() != loops[i]->loop_var.get()) return false;
  }
  return true;
}

bool HasConsumer(const ScheduleState& state, const BlockRealizeNode* realize) {
  const BlockRealizeNode* scope = state.ScopeBlock(realize);
  if (scope == nullptr) return false;
  for (const BlockRealizeNode* other : state.ChildBlocks(scope)) {
    if (other == realize) continue;
    for (const BufferRegion& w : realize->block->writes) {
      for (const BufferRegion& r : other->block->reads) {
        if (r.buffer.same_as(w.buffer)) return true;
      }
    }
  }
  return false;
}

bool IsTiled(const BlockNode* block) { return block->annotations.count(kAnnTilingStructure) > 0; }

bool IsZeroPadding(const BlockNode* block) {
  const auto* store = block->body.as<BufferStoreNode>();
  const auto* select = store != nullptr ? store->value.as<SelectNode>() : nullptr;
  if (select == nullptr || select->t->kind() != NodeKind::kBufferLoad || !IsConstZero(select->f)) {
    return false;
  }
  // A mask read from a buffer is not a padding: its test depends on data, not on indices.
  return !LoadsFromBuffer(select->cond);
}

bool IsContiguousAlong(const BufferRegion& access, const VarNode* var, bool* in_last) {
  for (size_t d = 0; d < access.region.size(); ++d) {
    std::optional<int64_t> coef = LinearCoefficient(access.region[d].min, var);
    const bool last = d + 1 == access.region.size();
    if (!coef || (*coef != 0 && (!last || *coef != 1))) return false;
    if (last && *coef == 1 && in_last != nullptr) *in_last = true;
  }
  return true;
}

bool HasStridedRead(const BlockNode* block) {
  if (block->writes.empty() || block->writes[0].region.empty()) return false;
  const Expr& write_last = block->writes[0].region.back().min;
  for (const IterVar& iv : block->iter_vars) {
    if (LinearCoefficient(write_last, iv.var.get()) != 1) continue;
    for (const BufferRegion& read : block->reads) {
      if (!IsContiguousAlong(read, iv.var.get())) return true;
    }
  }
  return false;
}

std::optional<ReadWritePattern> AnalyzeReadWrite(const BufferRegion& read,
                                                 const BufferRegion& write) {
  // Step 1. Each write index is an iterator; remember its dimension.
  std::unordered_map<const VarNode*, size_t> write_dim;
  for (size_t d = 0; d < write.region.size(); ++d) {
    const auto* var = write.region[d].min.as<VarNode>();
    if (var == nullptr || AsConstInt(write.region[d].extent) == nullptr) return std::nullopt;
    write_dim.emplace(var, d);
  }
  // Step 2. Each read index is a constant or one of those iterators plus a constant.
  std::vector<size_t> mapped;
  for (const Range& range : read.region) {
    const VarNode* var = nullptr;
    if (AsConstInt(range.extent) == nullptr || !AsVarPlusConst(range.min, &var)) {
      return std::nullopt;
    }
    if (var == nullptr) continue;
    auto it = write_dim.find(var);
    if (it == write_dim.end()) return std::nullopt;
    mapped.push_back(it->second);
  }
  // Step 3. Injective: no write dimension used twice; ordered: dimensions in increasing order.
  ReadWritePattern pattern;
  pattern.ordered = std::is_sorted(mapped.begin(), mapped.end());
  std::unordered_set<size_t> seen(mapped.begin(), mapped.end());
  pattern.injective = seen.size() == mapped.size();
  return pattern;
}

bool NeedsMultiLevelTiling(const ScheduleState& state, const BlockRealizeNode* realize) {
  const BlockNode* block = realize->block.get();
  if (IsTiled(block) || block->writes.size() != 1 || block->reads.empty() ||
      IsSpatialBlock(block) || !HasTrivialBinding(state, realize)) {
    return false;
  }
  // Step 1. The spatial iterators that tell elements apart (extent > 1).
  std::vector<const VarNode*> spatial_vars;
  for (const IterVar& iv : block->iter_vars) {
    const int64_t* extent = AsConstInt(iv.dom.extent);
    if (iv.kind == IterKind::kSpatial && !(extent != nullptr && *extent == 1)) {
      spatial_vars.push_back(iv.var.get());
    }
  }
  // Step 2. Count, over the reads other than the accumulator, the spatial iterators they do not
  // use: each is a dimension along which the read data is reused.
  const BufferNode* written = block->writes[0].buffer.get();
  std::unordered_set<const BufferNode*> read_buffers;
  int unused = 0;
  for (const BufferRegion& read : block->reads) {
    if (!read_buffers.insert(read.buffer.get()).second) return false;
    if (read.buffer.get() == written) continue;
    std::unordered_set<const VarNode*> used;
    for (const Range& range : read.region) {
      if (AsConstInt(range.extent) == nullptr) return false;
      PostOrderVisit(range.min, [&used](const Object* node) {
        if (node->kind() == NodeKind::kVar) used.insert(static_cast<const VarNode*>(node));
      });
    }
    for (const VarNode* var : spatial_vars) unused += used.count(var) == 0 ? 1 : 0;
  }
  return unused >= 1;
}

std::optional<int64_t> LinearCoefficient(const Expr& expr, const VarNode* var) {
  const ExprNode* node = expr.get();
  if (node == var) return 1;
  switch (node->kind()) {
    case NodeKind::kIntImm:
    case NodeKind::kVar:
      return 0;
    case NodeKind::kAdd:
    case NodeKind::kSub: {
      std::optional<int64_t> a = LinearCoefficient(BinaryA(node), var);
      std::optional<int64_t> b = LinearCoefficient(BinaryB(node), var);
      if (!a || !b) return std::nullopt;
      return node->kind() == NodeKind::kAdd ? *a + *b : *a - *b;
    }
    case NodeKind::kMul: {
      const Expr& a = BinaryA(node);
      const Expr& b = BinaryB(node);
      if (const int64_t* k = AsConstInt(b)) {
        std::optional<int64_t> c = LinearCoefficient(a, var);
        return c ? std::optional<int64_t>(*c * *k) : std::nullopt;
      }
      if (const int64_t* k = AsConstInt(a)) {
        std::optional<int64_t> c = LinearCoefficient(b, var);
        return c ? std::optional<int64_t>(*c * *k) : std::nullopt;
      }
      break;
    }
    default:
      break;
  }
  return UsesThisVar(expr, var) ? std::nullopt : std::optional<int64_t>(0);
}

std::optional<Schedule> FuseExactEpilogue(const Schedule& sch, BlockRV block) {
  Schedule fused = sch.Copy();
  try {
    std::vector<BlockRV> consumers = fused.GetConsumers(block);
    if (consumers.size() != 1) return std::nullopt;
    fused.FuseReductionEpilogue(block, consumers[0]);
  } catch (const ScheduleError&) {
    return std::nullopt;
  }
  return fused;
}

}  // namespace tirtune
