// The reference interpreter: executes any PrimFunc (block form or lowered, scheduled or not) on
// host tensors, independently of any code generator. It is the numerical oracle of every
// transformation test.
#pragma once

#include <string>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/support/error.h"
#include "tirtune/support/ndarray.h"

namespace tirtune {

/// A failure while interpreting: an argument that does not match its parameter, an index out of
/// bounds, a division by zero. The message names the buffer or statement involved.
class InterpError : public UserError {
 public:
  explicit InterpError(const std::string& what) : UserError(what) {}
};

/// Runs `func` with `args` bound to its parameters in order (one NDArray per buffer parameter,
/// matching shape and dtype). NDArrays share storage when copied, so outputs are written into
/// the caller's arrays.
void Interpret(const PrimFunc& func, const std::vector<NDArray>& args);

/// Allocates one NDArray per parameter, fills them with seeded random values, runs `func`, and
/// returns them (inputs and outputs). Convenience for differential tests.
std::vector<NDArray> InterpretWithRandomInputs(const PrimFunc& func, uint64_t seed);

}  // namespace tirtune
