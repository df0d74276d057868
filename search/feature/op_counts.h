// Arithmetic counts of the per-store features (private to search/feature/): the operations of an
// expression by class, weighted by how often it executes.
#pragma once

#include "feature_layout.h"
#include "tirtune/ir/expr.h"

namespace tirtune::feature {

enum ArithClass { kMad, kAddSub, kMul, kDivMod, kCmp, kMathFunc, kOtherFunc };

/// Operation counts, in the classes of the compute columns (feature_layout.h).
struct OpCounts {
  double float_ops[feature_layout::kNumArithClasses] = {};
  double int_ops[feature_layout::kNumArithClasses] = {};
  double bool_op = 0;
  double select = 0;

  void Add(ArithClass c, DataType operand, int lanes, double weight) {
    (operand.is_float() ? float_ops : int_ops)[c] += weight * lanes;
  }
  OpCounts& operator+=(const OpCounts& other) {
    for (size_t c = 0; c < feature_layout::kNumArithClasses; ++c) {
      float_ops[c] += other.float_ops[c];
      int_ops[c] += other.int_ops[c];
    }
    bool_op += other.bool_op;
    select += other.select;
    return *this;
  }
  // The float operations (a mad counts once) or, in an integer computation, all operations.
  double Flops() const {
    double floats = 0, others = bool_op + select;
    for (size_t c = 0; c < feature_layout::kNumArithClasses; ++c) {
      floats += float_ops[c];
      others += int_ops[c];
    }
    return floats > 0 ? floats : others;
  }
};

/// Adds the operations of `e`, each once per lane, times `weight` (the executions of `e`), to
/// `counts`. `a + b * c` and `a - b * c` count as one mad.
void CountOps(const Expr& e, double weight, OpCounts* counts);

}  // namespace tirtune::feature
