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

/// One NDArray per parameter of `func`, parameter `i` filled by FillRandom(seed + i) over
/// RandomRangeFor(its dtype): the inputs every differential check (interpreter, compiled
/// kernels, runner) draws. Parameter shapes must be constant (InterpError otherwise). A packed
/// parameter (ir/packed_layout.h) is drawn at its source shape and packed.
std::vector<NDArray> MakeRandomArgs(const PrimFunc& func, uint64_t seed);

/// Allocates one NDArray per parameter, fills them with seeded random values, runs `func`, and
/// returns them (inputs and outputs). Convenience for differential tests. Parameter `i` is filled
/// by FillRandom(seed + i) over RandomRangeFor(its dtype); parameter shapes must be constant.
/// Packed parameters are returned unpacked, as the function before packing takes them.
std::vector<NDArray> InterpretWithRandomInputs(const PrimFunc& func, uint64_t seed);

/// The half-open range random inputs are drawn from.
struct RandomRange {
  double lo;
  double hi;
};
/// [-1, 1) for floats; small integers for integer types, so that sums and products stay exact:
/// [-4, 4) signed, [0, 8) unsigned, {0, 1} for bool.
RandomRange RandomRangeFor(DataType dtype);

}  // namespace tirtune
