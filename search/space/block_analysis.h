// What the schedule rules and postprocessors ask about blocks and loops before they transform
// anything: iterator kinds, trivial bindings, producer-consumer facts, the read/write index
// pattern AutoInline and MultiLevelTiling test, and the stride of a loop in a buffer access.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/schedule/state.h"

namespace tirtune {

/// How the blocks under a loop use its variable: only in bindings of spatial iterators (or not at
/// all), only in bindings of reduction iterators, or in both.
enum class LoopIterKind : uint8_t { kSpatial, kReduce, kMixed };

LoopIterKind IterKindOfLoop(const ForNode* loop);

/// A loop the parallel and vectorize rewrites may take: serial, unannotated, constant extent,
/// spatial for every block under it.
bool IsPlainSpatialLoop(const ForNode* loop);
/// The loop's body is one loop or one block realize.
bool HasSingleChild(const ForNode* loop);
/// The extent products of the outer loops of a nest (outermost first) that can be fused into one
/// parallel loop: element k is the product of loops 0..k. It stops before the first loop that is
/// not plain spatial and after the first loop with more than one child.
std::vector<int64_t> ParallelizablePrefixExtents(const std::vector<const ForNode*>& loops);
/// How many of those loops RewriteParallelVectorizeUnroll fuses for a parallel extent `limit`:
/// the most whose product stays within it, at least one besides leading loops of extent 1; 0
/// when their product is 1.
size_t NumParallelLoops(const std::vector<int64_t>& prefix_extents, int64_t limit);

/// No reduction iterator and no init.
bool IsSpatialBlock(const BlockNode* block);
/// An init and at least one reduction iterator.
bool IsReductionBlock(const BlockNode* block);
/// The block realize that is the function body.
bool IsRootBlock(const ScheduleState& state, const BlockRealizeNode* realize);
/// Every block but the root is spatial (an elementwise or layout function).
bool IsSpatialFunc(const ScheduleState& state);
/// Block iterator i is bound to exactly the variable of the i-th loop above the block, and there
/// are as many loops as iterators.
bool HasTrivialBinding(const ScheduleState& state, const BlockRealizeNode* realize);
/// Another block of the same scope reads a buffer this block writes.
bool HasConsumer(const ScheduleState& state, const BlockRealizeNode* realize);
/// MultiLevelTiling already tiled the block (it carries the tiling-structure annotation).
bool IsTiled(const BlockNode* block);
/// The block stores `select(inside, a load, 0)` with a test on indices only: a zero padding.
bool IsZeroPadding(const BlockNode* block);
/// Whether an access runs along iterator `var` contiguously: `var` is absent from its indices, or
/// appears only in the last one with coefficient 1 (then `*in_last` is set, when given).
bool IsContiguousAlong(const BufferRegion& access, const VarNode* var, bool* in_last = nullptr);
/// Some read of the block strides or gathers along an iterator that the block's first write runs
/// through contiguously (its last index, coefficient 1): the read uses it with a coefficient
/// other than 1 in its last index, in another index (a transpose), or non-linearly (a division,
/// an index loaded from memory).
bool HasStridedRead(const BlockNode* block);

/// How the indices of `read` relate to those of `write` when every write index is a block
/// iterator: each read index is a constant or `iterator + constant`. Injective: no write
/// iterator indexes two read dimensions; ordered: the iterators appear in the read in the order
/// of the write. nullopt when the pattern is not of that form.
struct ReadWritePattern {
  bool injective = false;
  bool ordered = false;
};
std::optional<ReadWritePattern> AnalyzeReadWrite(const BufferRegion& read,
                                                 const BufferRegion& write);

/// MetaSchedule's test for a block worth MultiLevelTiling: one write, some reads, a reduction
/// (not spatial), trivial bindings, no buffer read twice, constant read extents, and data reuse —
/// some spatial iterator (of extent > 1) that a read does not use.
bool NeedsMultiLevelTiling(const ScheduleState& state, const BlockRealizeNode* realize);

/// `sch` with the single consumer of `block` folded into it by fuse_reduction_epilogue (an exact
/// bias-add epilogue), or nullopt when the block has another number of consumers or the
/// primitive refuses (ReLU, clipping, scaling, a second use...).
std::optional<Schedule> FuseExactEpilogue(const Schedule& sch, BlockRV block);

/// The coefficient of `var` in `expr` when `expr` is linear in it (0 when it does not use it),
/// nullopt when `var` appears non-linearly (in a division, a min, a load, ...).
std::optional<int64_t> LinearCoefficient(const Expr& expr, const VarNode* var);

}  // namespace tirtune
