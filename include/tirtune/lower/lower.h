// Lowering: turns a scheduled PrimFunc in block form into the loop-level form that code
// generators consume, as a fixed recipe of passes (src/lower/pipeline.cc).
//
// The lowered form (the contract between lowering and every code generator):
//  - no Block or BlockRealize nodes; block predicates became `if` statements and reduction
//    inits became guarded stores;
//  - every buffer is one-dimensional (shape [n], no strides); parameters keep their order and
//    their element type, and intermediates are declared by Allocate nodes placed at the lowest
//    common ancestor of their uses, with the smallest shape that covers what is accessed
//    (scope `local` for small per-thread scratch, `global` otherwise);
//  - loops are serial, parallel (outlined by the code generator onto the runtime thread pool;
//    a parallel loop inside another parallel loop runs serially) or unrolled with a constant
//    extent no larger than the unroll limit (everything else became serial); a loop may carry the
//    annotation "pragma_unroll" = N asking the code generator to unroll it by N;
//  - vectorized loops are gone: their bodies were rewritten into vector expressions (Ramp,
//    Broadcast, vector loads/stores, vector selects) with the loop's extent as lane count, or,
//    where that was not possible, turned into serial loops annotated "pragma_vectorize" = 1;
//  - index arithmetic is int64 and simplified.
// The reference interpreter executes lowered functions too, so every pass is checked by
// comparing numbers before and after.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/support/error.h"

namespace tirtune {

struct LowerOptions {
  /// Unrolled loops with a constant extent up to this are expanded in the IR; larger ones become
  /// serial loops annotated "pragma_unroll" (0: none is expanded, and the annotation asks for the
  /// whole constant extent). Default 64.
  int max_explicit_unroll = 64;
  /// Expand the loops under a "pragma_auto_unroll_max_step" annotation (see UnrollLoops). false
  /// leaves them and keeps the annotation: the form features are extracted from, where an
  /// unrolled body counts once. Default true.
  bool expand_auto_unroll = true;
  /// Allocations up to this many bytes in scope `local` live on the stack. Default 64 KiB.
  int64_t max_stack_bytes = 64 * 1024;
  /// Skip the taps of a padded reduction that land on the padding (see SkipPaddingTaps); exact
  /// when the factor multiplied by the padding is finite. Default true.
  bool skip_padding_taps = true;
  /// Split full tiles off guarded bodies (see UnswitchTileGuards). false keeps one guarded body:
  /// the form features are extracted from. Default true.
  bool unswitch_tile_guards = true;
};

/// Limits on what a scheduled function may ask for (src/lower/check_schedule_limits.cc), checked
/// by Lower and the GPU lowering before any pass.
inline constexpr int64_t kMaxIterations = int64_t{1} << 46;       // statement instances in all
inline constexpr int64_t kMaxUnrollExpansion = int64_t{1} << 16;  // copies of one unrolled body
inline constexpr int64_t kMaxVectorLanes = int64_t{1} << 16;      // lanes of a vectorized loop
inline constexpr int64_t kMaxAllocationBytes = int64_t{1} << 40;  // one buffer

/// A schedule beyond one of those limits; the message names the function, the limit and the
/// loop or buffer. A UserError: the tuner records it as a build error.
class ScheduleLimitError : public UserError {
 public:
  explicit ScheduleLimitError(const std::string& what) : UserError(what) {}
};

/// Throws ScheduleLimitError when `func` exceeds a limit (unrolling counted as `options`
/// expands it).
void CheckScheduleLimits(const PrimFunc& func, const LowerOptions& options = {});

/// Runs the whole lowering recipe.
PrimFunc Lower(const PrimFunc& func, const LowerOptions& options = {});

/// Runs the recipe and returns the function after every pass, named by the pass
/// (for `tirtune lower --steps` and for tests).
std::vector<std::pair<std::string, PrimFunc>> LowerWithSteps(const PrimFunc& func,
                                                             const LowerOptions& options = {});

}  // namespace tirtune
