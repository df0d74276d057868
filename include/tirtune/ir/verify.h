// Well-formedness checks for PrimFuncs: every variable and buffer is defined where it is used,
// blocks are self-contained, and stores match their buffers.
#pragma once

#include <string>
#include <vector>

#include "tirtune/ir/function.h"

namespace tirtune {

/// Returns one message per violation found (empty when the function is well formed):
///  1. every variable used is defined by an enclosing loop, block iterator or let;
///  2. every buffer used is a parameter or allocated by an enclosing block or Allocate, and no
///     buffer is allocated twice;
///  3. inside a block, only its own iterators and variables defined within it are used — outer
///     loop variables reach a block only through its iterator bindings;
///  4. iterator bindings and predicates use only variables of enclosing loops and blocks;
///  5. a block writes only buffers listed in its write regions or allocated within it, and
///     reads only buffers listed in its read or write regions or allocated within it;
///  6. loop extents are positive where they are constant, and names of sibling blocks are unique
///     within the function.
std::vector<std::string> VerifyWellFormed(const PrimFunc& func);

}  // namespace tirtune
