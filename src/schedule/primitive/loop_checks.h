// Preconditions shared by the loop primitives: constant extents, serial kind, and the
// single-child chain that split, fuse and reorder work on.
#pragma once

#include <vector>

#include "tirtune/arith/analyzer.h"
#include "tirtune/schedule/error.h"
#include "tirtune/schedule/state.h"

namespace tirtune {

/// A guarded split may mask at most this many iterations, or the extent where that is larger: a
/// partial tile ([3, 4] for 10) or more threads than a small loop has ([1, 64] for 1) pass;
/// [1, 2^40] for 10 would loop 2^40 times to compute 10 elements.
inline constexpr int64_t kMaxMaskedIterations = 65536;

/// The loop's extent; NotConstantExtentError when it is symbolic.
int64_t ConstExtentOf(const ForNode* loop, const char* primitive);
/// NotSerialLoopError unless the loop is serial and carries no thread binding.
void CheckSerial(const ForNode* loop, const char* primitive);
/// The body of `loop` with any BlockRealize chain removed: the loop directly nested in it when
/// `loop`'s body is exactly one loop, else null.
const ForNode* OnlyChildLoop(const ForNode* loop);
/// Adds `predicate` (conjunction) to every block realize under `stmt`, or wraps `stmt` in an
/// `if` when it contains no block.
Stmt AddPredicate(const Stmt& stmt, const Expr& predicate);
/// Simplifies the iterator bindings and predicates of the block realizes under `stmt` (not
/// inside their blocks) with `analyzer`, into which the ranges of the loops met on the way down
/// are bound. A predicate that simplifies to true disappears.
Stmt SimplifyBindings(const Stmt& stmt, arith::Analyzer* analyzer);
/// Binds the ranges of the loops enclosing `node` into `analyzer`.
void BindEnclosingLoops(const ScheduleState& state, const StmtNode* node,
                        arith::Analyzer* analyzer);

}  // namespace tirtune
