// Shared block preconditions; each failure names the primitive and the rule that broke.
#include "block_checks.h"

#include <fmt/format.h>

#include <algorithm>

#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/functor.h"

namespace tirtune {

void CheckSpatialBlock(const BlockRealizeNode* realize, const char* primitive) {
  const BlockNode* block = realize->block.get();
  if (block->init.defined()) {
    throw SimpleScheduleError(
        "NotSpatialBlockError",
        fmt::format("{} needs a spatial block; block '{}' is a reduction (it has an init)",
                    primitive, block->name),
        {realize});
  }
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kReduce) {
      throw SimpleScheduleError(
          "NotSpatialBlockError",
          fmt::format("{} needs a spatial block; block '{}' has reduction iterator '{}'", primitive,
                      block->name, iv.var->name),
          {realize});
    }
  }
}

void CheckTrivialPredicate(const BlockRealizeNode* realize, const char* primitive) {
  if (IsConstInt(realize->predicate, 1)) return;
  throw SimpleScheduleError(
      "NonTrivialPredicateError",
      fmt::format("{} needs block '{}' to run for every iterator value, but it has a predicate",
                  primitive, realize->block->name),
      {realize});
}

const BufferStoreNode* SingleStoreOf(const BlockRealizeNode* realize, const char* primitive) {
  const auto* store = realize->block->body.as<BufferStoreNode>();
  if (store == nullptr) {
    throw SimpleScheduleError(
        "NotSingleStoreError",
        fmt::format("{} needs the body of block '{}' to be a single buffer store", primitive,
                    realize->block->name),
        {realize});
  }
  return store;
}

std::vector<const VarNode*> StoreIndexVars(const BlockRealizeNode* realize,
                                           const BufferStoreNode* store, const char* primitive) {
  const BlockNode* block = realize->block.get();
  std::vector<const VarNode*> vars;
  for (size_t d = 0; d < store->indices.size(); ++d) {
    const auto* var = store->indices[d].as<VarNode>();
    bool is_iter = var != nullptr && FindIterVar(block, var) != nullptr;
    bool repeated = var != nullptr && std::find(vars.begin(), vars.end(), var) != vars.end();
    if (!is_iter || repeated) {
      throw SimpleScheduleError(
          "StoreIndicesError",
          fmt::format("{} needs block '{}' to store at distinct block iterators, one per "
                      "dimension; index {} of its store into '{}' is {}",
                      primitive, block->name, d, store->buffer->name,
                      repeated ? "a repeated iterator" : "not a block iterator"),
          {realize});
    }
    vars.push_back(var);
  }
  return vars;
}

void CheckIntermediate(const PrimFunc& func, const Buffer& buffer, const BlockRealizeNode* realize,
                       const char* primitive) {
  for (const Buffer& param : func->params) {
    if (!param.same_as(buffer)) continue;
    throw SimpleScheduleError(
        "NotIntermediateError",
        fmt::format("{} would remove buffer '{}' written by block '{}', but it is a parameter of "
                    "the function; only intermediate buffers can disappear",
                    primitive, buffer->name, realize->block->name),
        {realize});
  }
}

const IterVar* FindIterVar(const BlockNode* block, const VarNode* var) {
  for (const IterVar& iv : block->iter_vars) {
    if (iv.var.get() == var) return &iv;
  }
  return nullptr;
}

bool HasReductionIter(const BlockNode* block) {
  return std::any_of(block->iter_vars.begin(), block->iter_vars.end(),
                     [](const IterVar& iv) { return iv.kind == IterKind::kReduce; });
}

bool SameDomain(const IterVar& a, const IterVar& b) {
  arith::Analyzer analyzer;
  return analyzer.CanProveEqual(a.dom.min, b.dom.min) &&
         analyzer.CanProveEqual(a.dom.extent, b.dom.extent);
}

namespace {
bool Names(const std::vector<BufferRegion>& regions, const Buffer& buffer) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return r.buffer.same_as(buffer); });
}
}  // namespace

bool ReadsBuffer(const BlockNode* block, const Buffer& buffer) {
  return Names(block->reads, buffer);
}

bool WritesBuffer(const BlockNode* block, const Buffer& buffer) {
  return Names(block->writes, buffer);
}

std::vector<const BlockRealizeNode*> BlocksReading(const ScheduleState& state,
                                                   const Buffer& buffer) {
  std::vector<const BlockRealizeNode*> out;
  for (const BlockRealizeNode* b : state.AllBlocks()) {
    if (ReadsBuffer(b->block.get(), buffer)) out.push_back(b);
  }
  return out;
}

std::vector<const BlockRealizeNode*> BlocksWriting(const ScheduleState& state,
                                                   const Buffer& buffer) {
  std::vector<const BlockRealizeNode*> out;
  for (const BlockRealizeNode* b : state.AllBlocks()) {
    if (WritesBuffer(b->block.get(), buffer)) out.push_back(b);
  }
  return out;
}

bool HasChildBlocks(const BlockRealizeNode* realize) {
  bool found = false;
  auto visit = [&found](const Object* node) {
    if (node->kind() == NodeKind::kBlockRealize) found = true;
    return !found && node->kind() >= NodeKind::kFor;  // statements only
  };
  const BlockNode* block = realize->block.get();
  if (block->init.defined()) PreOrderVisit(block->init, visit);
  PreOrderVisit(block->body, visit);
  return found;
}

}  // namespace tirtune
