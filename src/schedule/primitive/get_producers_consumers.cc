// get_producers / get_consumers: the blocks of the same scope that a block depends on, or that
// depend on it, through the buffers it reads or writes. Both are pure lookups.
//
// As in TVM, a dependency is read-after-write or write-after-write. A producer of block X comes
// before X under X's scope block (the nearest enclosing block) and writes a buffer that X reads or
// writes; a consumer comes after X and reads or writes a buffer that X writes. Write-after-write
// matters for a decomposed reduction: `C_init` and `C` both write C, and the update block does not
// list C among its reads. Both lists are in program order; X is never its own producer or consumer.
//
// Example (scope "root"):             GetProducers(C) == [B]     GetConsumers(B) == [C]
//   with block("B"): B[vi] = A[vi] * 2.0
//   with block("C"): C[vi] = B[vi] + 1.0
#include <algorithm>

#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

bool SharesBuffer(const std::vector<BufferRegion>& a, const std::vector<BufferRegion>& b) {
  return std::any_of(a.begin(), a.end(), [&](const BufferRegion& ra) {
    return std::any_of(b.begin(), b.end(),
                       [&](const BufferRegion& rb) { return ra.buffer.same_as(rb.buffer); });
  });
}

// The siblings of `realize` before it that it depends on (`producers`), or after it that depend
// on it.
std::vector<const BlockRealizeNode*> Dependencies(const ScheduleState& state,
                                                  const BlockRealizeNode* realize, bool producers) {
  const StmtNode* scope = state.ScopeBlock(realize);
  if (scope == nullptr) return {};  // the root block has no siblings
  std::vector<const BlockRealizeNode*> siblings = state.ChildBlocks(scope);
  auto self = std::find(siblings.begin(), siblings.end(), realize);
  TT_ICHECK(self != siblings.end(), "block '{}' is not a child of its scope", realize->block->name);
  std::vector<const BlockRealizeNode*> out;
  const BlockNode* block = realize->block.get();
  auto depends = [](const BlockNode* from, const BlockNode* to) {
    return SharesBuffer(from->writes, to->reads) || SharesBuffer(from->writes, to->writes);
  };
  if (producers) {
    for (auto it = siblings.begin(); it != self; ++it) {
      if (depends((*it)->block.get(), block)) out.push_back(*it);
    }
  } else {
    for (auto it = self + 1; it != siblings.end(); ++it) {
      if (depends(block, (*it)->block.get())) out.push_back(*it);
    }
  }
  return out;
}

}  // namespace

namespace {

// New random variables for `blocks`, recorded as the outputs of `kind` applied to `block_rv`.
std::vector<BlockRV> RecordBlocks(Schedule* sch, const char* kind, BlockRV block_rv,
                                  const std::vector<const BlockRealizeNode*>& blocks) {
  std::vector<BlockRV> rvs;
  std::vector<RVRef> outputs;
  for (const BlockRealizeNode* b : blocks) {
    rvs.push_back(sch->NewBlockRV(b->block->name));
    outputs.push_back(rvs.back().ref());
  }
  sch->Record(kind, {block_rv.ref()}, nlohmann::json::object(), outputs);
  return rvs;
}

}  // namespace

std::vector<BlockRV> Schedule::GetProducers(BlockRV block_rv) {
  return RecordBlocks(this, "GetProducers", block_rv,
                      Dependencies(state_, Get(block_rv), /*producers=*/true));
}

std::vector<BlockRV> Schedule::GetConsumers(BlockRV block_rv) {
  return RecordBlocks(this, "GetConsumers", block_rv,
                      Dependencies(state_, Get(block_rv), /*producers=*/false));
}

}  // namespace tirtune
