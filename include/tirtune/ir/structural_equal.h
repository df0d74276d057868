// Structural equality and the stable structural hash.
//
// Two functions are structurally equal when they have the same shape with variables and buffers
// matched by where they are defined (their names do not matter), the same block names, types,
// constants and annotations. The function's own name does not matter either. The hash is FNV-1a
// (64 bit) over the canonical printed text, so it is the same on every platform and run, and
// equal functions hash equally.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tirtune/ir/function.h"

namespace tirtune {

bool StructuralEqual(const PrimFunc& a, const PrimFunc& b);
/// Statements/expressions: free variables and buffers must be the same objects unless
/// `map_free_vars` is set, in which case they are matched on first use.
bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars = false);
bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars = false);

/// A description of the first difference (a path and both sides), or nullopt when equal. For
/// test failure messages.
std::optional<std::string> StructuralDiff(const PrimFunc& a, const PrimFunc& b);

uint64_t StructuralHash(const PrimFunc& func);
/// The hash as 16 lower-case hex digits: the workload key.
std::string StructuralHashHex(const PrimFunc& func);

}  // namespace tirtune
