// What a reduction block computes: `C[I] = op(C[I], rhs)` from an init storing op's identity.
// Shared by the schedule primitives that restructure reductions (rfactor) and by GPU lowering
// (cross-thread reductions).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tirtune/ir/stmt.h"

namespace tirtune {

struct BlockReduction {
  Buffer buffer;
  std::vector<Expr> indices;
  NodeKind op = NodeKind::kAdd;  // kAdd, kMul, kMin or kMax
  Expr identity;
  Expr rhs;
  bool lhs_first = true;  // whether the update reads C[I] as the first operand

  /// op(acc, value) in the update's operand order.
  Expr Combine(Expr acc, Expr value) const;
};

/// Why a block is not a BlockReduction.
enum class ReductionMismatch {
  /// No reduction iterator, no init, not one write, init and update not single stores to one
  /// element, or that element depends on a reduction iterator.
  kNotReduction,
  /// A reduction whose update is not +, *, min or max of C[I] and a value without C, or whose
  /// init is not the identity.
  kUnsupportedReducer,
};

/// The reduction `block` performs, or nullopt with what is wrong (`*kind`, `*why`).
std::optional<BlockReduction> MatchBlockReduction(const BlockNode* block, ReductionMismatch* kind,
                                                  std::string* why);

/// Whether `value` is the identity of `op` for its type: 0 for +, 1 for *, the largest value (or
/// +inf) for min, the smallest (or -inf) for max.
bool IsReducerIdentity(NodeKind op, const Expr& value);

}  // namespace tirtune
