// Printing IR as text (docs/TEXT_FORMAT.md). The output parses back to a structurally equal
// function and is deterministic; in canonical mode it is the input of the stable hash.
#pragma once

#include <string>
#include <vector>

#include "tirtune/ir/function.h"

namespace tirtune {

struct PrintOptions {
  /// Print variables as v0, v1, ..., buffers as b0, b1, ... and the function as `main`.
  bool canonical_names = false;
  /// Nodes (a loop, a block, a statement) to mark: their header line is followed by a line of
  /// `^` under it and `mark_message`. Used by detailed schedule errors.
  std::vector<const Object*> marked;
  std::string mark_message;
};

std::string Print(const PrimFunc& func, const PrintOptions& options = {});
/// A statement or expression on its own (free variables print by name); for messages and tests.
std::string ToString(const Stmt& stmt);
std::string ToString(const Expr& expr);

}  // namespace tirtune
