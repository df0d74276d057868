// What the lowering passes that place `if`s around loop bodies share with UnrollLoops: which loops
// stay loops in the machine code.
#pragma once

#include <algorithm>
#include <limits>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"

namespace tirtune {

/// The loop annotation "pragma_auto_unroll_max_step" = N (TVM's meaning): UnrollLoops expands
/// every serial loop inside the annotated loop whose body runs at most N statements in all.
constexpr const char* kAutoUnrollMaxStep = "pragma_auto_unroll_max_step";
constexpr int64_t kManySteps = std::numeric_limits<int64_t>::max() / 4;

/// How many leaf statements one run of `s` executes; kManySteps when that is not a constant.
inline int64_t StepCount(const Stmt& s) {
  auto saturate = [](int64_t v) { return std::min(v, kManySteps); };
  if (const auto* loop = s.as<ForNode>()) {
    const int64_t* n = AsConstInt(loop->extent);
    int64_t body = StepCount(loop->body);
    if (n == nullptr || body >= kManySteps) return kManySteps;
    return *n <= 0 ? 0 : (body > kManySteps / *n ? kManySteps : *n * body);
  }
  if (const auto* seq = s.as<SeqStmtNode>()) {
    int64_t total = 0;
    for (const Stmt& c : seq->seq) total = saturate(total + StepCount(c));
    return total;
  }
  if (const auto* branch = s.as<IfThenElseNode>()) {
    int64_t then_steps = StepCount(branch->then_case);
    return branch->else_case.defined() ? saturate(then_steps + StepCount(branch->else_case))
                                       : then_steps;
  }
  if (const auto* alloc = s.as<AllocateNode>()) return StepCount(alloc->body);
  if (const auto* let = s.as<LetStmtNode>()) return StepCount(let->body);
  return 1;
}

inline bool Allocates(const Stmt& s) {
  bool found = false;
  PreOrderVisit(s, [&](const Object* node) {
    found = found || node->kind() == NodeKind::kAllocate;
    return !found;
  });
  return found;
}

/// The auto-unroll limit of the loops inside `loop`, given `outer`, the limit where `loop` is (0
/// outside any annotated loop).
inline int64_t AutoUnrollLimitInside(const ForNode* loop, int64_t outer) {
  auto it = loop->annotations.find(kAutoUnrollMaxStep);
  if (it == loop->annotations.end()) return outer;
  const int64_t* n = AsConstInt(it->second);
  return n == nullptr ? outer : std::max(outer, *n);
}

/// True when UnrollLoops expands the serial loop `loop`, whose body is `body`, under the
/// auto-unroll limit `limit` of the loops around it.
inline bool AutoUnrollExpands(const ForNode* loop, const Stmt& body, int64_t limit) {
  const int64_t* extent = AsConstInt(loop->extent);
  if (loop->for_kind != ForKind::kSerial || limit <= 0 || extent == nullptr || Allocates(body)) {
    return false;
  }
  return *extent <= limit / std::max<int64_t>(1, StepCount(body));
}

/// True when `loop` stays a loop in the machine code: serial or parallel, not vectorized or
/// unrolled, not of extent 1, and not expanded by UnrollLoops under the auto-unroll limit
/// `auto_unroll_limit` of the loops around it.
inline bool StaysLoop(const ForNode* loop, int64_t auto_unroll_limit = 0) {
  const int64_t* extent = AsConstInt(loop->extent);
  if (extent != nullptr && *extent == 1) return false;
  return loop->for_kind == ForKind::kParallel ||
         (loop->for_kind == ForKind::kSerial &&
          !AutoUnrollExpands(loop, loop->body, auto_unroll_limit));
}

/// True when `s` holds a loop that StaysLoop. An `if` around a body without one would sit in an
/// innermost loop, where LLVM no longer keeps the accumulators in registers.
inline bool ContainsRuntimeLoop(const Stmt& s, int64_t auto_unroll_limit = 0) {
  bool found = false;
  PreOrderVisit(s, [&](const Object* node) {
    if (node->kind() == NodeKind::kFor) {
      found = found || StaysLoop(static_cast<const ForNode*>(node), auto_unroll_limit);
    }
    return !found;
  });
  return found;
}

}  // namespace tirtune
