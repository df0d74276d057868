// The expected outputs a candidate is verified against: the original (unscheduled) function run
// on the seeded random inputs every runner draws (MakeRandomArgs), by the interpreter for small
// functions and, above a FLOP threshold, compiled unscheduled by the same backend and run in a
// runner process, so that a function that crashes or never ends cannot take the tuner with it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/ir/function.h"
#include "tirtune/measure/runner_protocol.h"
#include "tirtune/support/ndarray.h"

namespace tirtune {

struct ReferenceConfig {
  /// Below this many FLOPs (EstimateFlops) the interpreter computes the reference; at or above
  /// it, the unscheduled function compiled for the target, its outermost spatial loops run in
  /// parallel on the host's cores. Default 2e7 (a 256³ GEMM is compiled).
  double interpret_below_flops = 2e7;
  /// How long the compiled unscheduled function may run, in seconds. Default 600.
  double timeout_s = 600;
  /// The `tirtune-runner` executable; empty: the one built with this library.
  std::string runner_path;
  /// When set and it becomes true (a signal handler's flag), a compiled reference run is given
  /// up within 0.1 s and ComputeReference throws Interrupted. Default none.
  const std::atomic<bool>* stop = nullptr;
};

struct Reference {
  /// One entry per parameter: its contents after one run for a parameter the function writes,
  /// an undefined NDArray for a read-only one (nothing to compare, nothing to ship).
  std::vector<NDArray> expected;
  /// "interpreter" or "unscheduled function, compiled".
  std::string source;
};

/// The reference outputs of `original` for the inputs MakeRandomArgs(original, seed), with the
/// values `args` state where they state some (FillStatedValues; `args` empty: ArgSpecsOf, all
/// random). Throws UserError when the function cannot be run (non-constant shapes, unsupported
/// constructs) or its compiled form crashes, fails or runs past the timeout, naming what happened.
Reference ComputeReference(const PrimFunc& original, uint64_t seed, const Target& target,
                           const ReferenceConfig& config = {},
                           const std::vector<ArgSpec>& args = {});

/// The most terms one element of any block of `func` sums: the product of the extents of a
/// block's reduction iterators, the largest over the blocks (1 without reductions). Used to
/// widen float32 tolerances (CompareAll).
double LongestReduction(const PrimFunc& func);

/// For each parameter of `func`, whether some statement stores into it.
std::vector<bool> WrittenParams(const PrimFunc& func);

}  // namespace tirtune
