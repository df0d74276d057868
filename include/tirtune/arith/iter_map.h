// Affine iterator-map detection (after TVM's DetectIterMap): decides whether block bindings are
// a bijective quasi-affine map of the surrounding loops, and if so how each binding decomposes
// into "digits" of the loops: `(fused_loops // lower_factor) % extent * scale`.
//
//   loops i in [0, 8), j in [0, 4), bindings [i*4 + j]          -> one binding, two digits
//   loop  f in [0, 32), bindings [f // 4, f % 4]               -> two digits of f
//   loops i in [0, 8), j in [0, 4), bindings [(i*4 + j) // 8, (i*4 + j) % 8]
//                                                           -> digits of the fused mark i*4 + j
//   bindings [i, i], [i*j], [i + j]                            -> rejected, with the reason
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/arith/analyzer.h"
#include "tirtune/arith/int_set.h"
#include "tirtune/ir/expr.h"

namespace tirtune::arith {

/// One digit of a mark: `(mark // lower_factor) % extent * scale`.
struct IterSplit {
  int mark = -1;  // index into IterMapResult::marks
  int64_t lower_factor = 1;
  int64_t extent = 1;
  int64_t scale = 1;
  friend bool operator==(const IterSplit& a, const IterSplit& b) {
    return a.mark == b.mark && a.lower_factor == b.lower_factor && a.extent == b.extent &&
           a.scale == b.scale;
  }
};

/// A value ranging over [0, extent): either a loop (its variable minus the loop's min) or the
/// fusion of digits of other marks, `fused[0] + fused[1] + ...` (largest scale first).
struct IterMark {
  Var loop;                      // the loop variable, for a loop mark
  Expr loop_min;                 // the loop's min, for a loop mark
  std::vector<IterSplit> fused;  // the fused digits, for a fused mark
  int64_t extent = 1;
  bool is_loop() const { return loop.defined(); }
};

/// The decomposition of one binding: `args[0] + args[1] + ... + base` (largest scale first);
/// `base` holds everything that does not depend on the loops.
struct IterSum {
  std::vector<IterSplit> args;
  Expr base;
  /// How many distinct values the binding takes: the product of its digits' extents.
  int64_t extent = 1;
};

/// The outcome of DetectIterMap: the marks and one IterSum per binding, or an error saying why
/// the bindings are not a bijective affine map.
struct IterMapResult {
  std::vector<IterMark> marks;
  std::vector<IterSum> indices;
  std::string error;  // empty on success
  bool ok() const { return error.empty(); }
};

/// Detects whether `bindings` are a bijective quasi-affine map of the loops in `loop_doms`:
/// every binding is a sum of digits that fuse into one dense mixed-radix number, and the digits
/// of every loop with extent > 1 are used exactly once across all bindings and cover it.
/// Loop extents must be constants; loops of extent 1 stand for their min. Variables not in
/// `loop_doms` are loop-invariant symbols and may appear in the bases. `analyzer` (may be null)
/// is used for simplification and sign facts.
IterMapResult DetectIterMap(const std::vector<Expr>& bindings, const VarRangeMap& loop_doms,
                            Analyzer* analyzer = nullptr);

/// The expression a mark, a digit or a binding's decomposition stands for, in terms of the loop
/// variables. IterSumToExpr(result.indices[k], result) equals binding k.
Expr IterMarkToExpr(int mark, const IterMapResult& map);
Expr IterSplitToExpr(const IterSplit& split, const IterMapResult& map);
Expr IterSumToExpr(const IterSum& sum, const IterMapResult& map);

}  // namespace tirtune::arith
