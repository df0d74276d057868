// Preconditions shared by the block primitives (compute_inline, reverse_compute_inline,
// fuse_reduction_epilogue, decompose_reduction): the shape of a block's iterators and body, and
// which blocks read or write a buffer.
#pragma once

#include <vector>

#include "tirtune/schedule/error.h"
#include "tirtune/schedule/state.h"

namespace tirtune {

/// NotSpatialBlockError unless the block has no init and only spatial iterators.
void CheckSpatialBlock(const BlockRealizeNode* realize, const char* primitive);
/// NonTrivialPredicateError unless the realize's predicate is `True`.
void CheckTrivialPredicate(const BlockRealizeNode* realize, const char* primitive);
/// The block's body as a single BufferStore; NotSingleStoreError otherwise.
const BufferStoreNode* SingleStoreOf(const BlockRealizeNode* realize, const char* primitive);
/// The block iterators that the store's indices consist of, in index order;
/// StoreIndicesError unless every index is a distinct iterator of the block.
std::vector<const VarNode*> StoreIndexVars(const BlockRealizeNode* realize,
                                           const BufferStoreNode* store, const char* primitive);
/// NotIntermediateError when `buffer` is a parameter of the function: its values are observable
/// after the function returns, so it cannot be removed.
void CheckIntermediate(const PrimFunc& func, const Buffer& buffer, const BlockRealizeNode* realize,
                       const char* primitive);

/// The iterator of `block` whose variable is `var`, or null.
const IterVar* FindIterVar(const BlockNode* block, const VarNode* var);
/// Whether the block has a reduction iterator.
bool HasReductionIter(const BlockNode* block);
/// Whether two iterators provably range over the same domain, so that mapping one to the other
/// visits the same elements.
bool SameDomain(const IterVar& a, const IterVar& b);

/// Whether the block's read (or write) regions name `buffer`.
bool ReadsBuffer(const BlockNode* block, const Buffer& buffer);
bool WritesBuffer(const BlockNode* block, const Buffer& buffer);
/// Every block of the function, in program order, whose read (or write) regions name `buffer`.
std::vector<const BlockRealizeNode*> BlocksReading(const ScheduleState& state,
                                                   const Buffer& buffer);
std::vector<const BlockRealizeNode*> BlocksWriting(const ScheduleState& state,
                                                   const Buffer& buffer);
/// Whether another block is nested inside the block.
bool HasChildBlocks(const BlockRealizeNode* realize);

}  // namespace tirtune
