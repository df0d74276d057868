// What the lowering passes that place `if`s around loop bodies share.
#pragma once

#include "tirtune/ir/functor.h"

namespace tirtune {

/// True when `s` holds a loop that stays a loop in the machine code: serial or parallel, not
/// vectorized or unrolled. An `if` around a body without one would sit in an innermost loop,
/// where LLVM no longer keeps the accumulators in registers.
inline bool ContainsRuntimeLoop(const Stmt& s) {
  bool found = false;
  PreOrderVisit(s, [&](const Object* node) {
    if (node->kind() == NodeKind::kFor) {
      ForKind kind = static_cast<const ForNode*>(node)->for_kind;
      if (kind == ForKind::kSerial || kind == ForKind::kParallel) found = true;
    }
    return !found;
  });
  return found;
}

}  // namespace tirtune
