// split: divides one loop into a nest of loops whose extents are the given factors.
//
// Preconditions:
//  1. the loop is serial and its extent is constant;
//  2. every factor is positive, and at most one factor is left out (it is then inferred as the
//     smallest value whose product with the others covers the extent);
//  3. the product of the factors is at least the extent (and fits in 64 bits);
//  4. the iterations the guard masks (product - extent) are at most the extent or 65,536,
//     whichever is larger: a partial tile ([3, 4] for 10), or more threads than a small loop has
//     ([1, 64] for 1), pass; [1, 2^40] for 10 would loop 2^40 times to compute 10 elements.
// When the product exceeds the extent, the blocks under the loop get the predicate
// `fused < extent` (or, without blocks, the body is wrapped in an `if`).
//
// Before:                        After Split(i, [None, 4]) with extent 10:
//   for i in range(10):            for i_0 in range(3):
//     with block("B"):               for i_1 in range(4):
//       vi = axis.spatial(10, i)       with block("B"):
//       ...                              vi = axis.spatial(10, i_0 * 4 + i_1)
//                                        where(i_0 * 4 + i_1 < 10)
#include <fmt/format.h>

#include <algorithm>

#include "loop_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

class NonPositiveFactorError : public ScheduleError {
 public:
  NonPositiveFactorError(const ForNode* loop, int64_t factor) : loop_(loop), factor_(factor) {}
  const char* Kind() const override { return "NonPositiveFactorError"; }
  std::string ShortMessage() const override {
    return fmt::format("split of loop '{}' with factor {}; factors must be positive",
                       loop_->loop_var->name, factor_);
  }
  std::vector<const Object*> Locations() const override { return {loop_}; }

 private:
  HeldNode<ForNode> loop_;
  int64_t factor_;
};

class FactorProductError : public ScheduleError {
 public:
  FactorProductError(const ForNode* loop, std::string what) : loop_(loop), what_(std::move(what)) {}
  const char* Kind() const override { return "FactorProductError"; }
  std::string ShortMessage() const override { return what_; }
  std::vector<const Object*> Locations() const override { return {loop_}; }

 private:
  HeldNode<ForNode> loop_;
  std::string what_;
};

// Resolves the factors to constants, inferring the missing one.
std::vector<int64_t> ResolveFactors(const Schedule& sch, const ForNode* loop, int64_t extent,
                                    const std::vector<SplitFactor>& factors) {
  std::vector<int64_t> values(factors.size(), 0);
  int missing = -1;
  int64_t product = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (std::holds_alternative<std::monostate>(factors[i])) {
      if (missing >= 0) {
        throw FactorProductError(loop, fmt::format("split of loop '{}' leaves more than one "
                                                   "factor out; at most one can be inferred",
                                                   loop->loop_var->name));
      }
      missing = static_cast<int>(i);
      continue;
    }
    int64_t v = std::holds_alternative<int64_t>(factors[i]) ? std::get<int64_t>(factors[i])
                                                            : sch.Get(std::get<ExprRV>(factors[i]));
    if (v <= 0) throw NonPositiveFactorError(loop, v);
    values[i] = v;
    if (__builtin_mul_overflow(product, v, &product)) {
      throw FactorProductError(loop, fmt::format("split of loop '{}' (extent {}): the product of "
                                                 "its factors overflows 64 bits",
                                                 loop->loop_var->name, extent));
    }
  }
  if (missing >= 0) {
    values[missing] = (extent + product - 1) / product;
    product *= values[missing];
  }
  if (product < extent) {
    throw FactorProductError(
        loop, fmt::format("split of loop '{}' (extent {}) with factors whose product is {}; the "
                          "product must cover the extent",
                          loop->loop_var->name, extent, product));
  }
  // Precondition 4: a guarded tail, not a flood of masked iterations.
  if (product - extent > std::max<int64_t>(extent, kMaxMaskedIterations)) {
    throw FactorProductError(
        loop, fmt::format("split of loop '{}' (extent {}) with factors {}: their product {} "
                          "masks {} iterations, more than the extent and than {}",
                          loop->loop_var->name, extent, nlohmann::json(values).dump(), product,
                          product - extent, kMaxMaskedIterations));
  }
  return values;
}

}  // namespace

std::vector<LoopRV> Schedule::Split(LoopRV loop_rv, const std::vector<SplitFactor>& factors) {
  const ForNode* loop = Get(loop_rv);
  if (factors.size() < 2) {
    throw SimpleScheduleError("InvalidSplitError",
                              fmt::format("split of loop '{}' into {} part(s): give at least two "
                                          "factors",
                                          loop->loop_var->name, factors.size()),
                              {loop});
  }
  // Step 1: checks; the factors resolved to constants.
  CheckSerial(loop, "split");
  int64_t extent = ConstExtentOf(loop, "split");
  std::vector<int64_t> values = ResolveFactors(*this, loop, extent, factors);
  if (check_only_) return std::vector<LoopRV>(factors.size(), LoopRV{kPlaceholderRVId});

  // Step 2: new loop variables i_0, i_1, ... and the fused expression sum(i_k * stride_k).
  DataType t = loop->loop_var.dtype();
  std::vector<Var> vars;
  Expr fused = IntImm(t, 0);
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  int64_t stride = product;
  for (size_t k = 0; k < values.size(); ++k) {
    vars.push_back(state_.FreshLoopVar(fmt::format("{}_{}", loop->loop_var->name, k), t));
    stride /= values[k];
    fused = fused + vars.back() * IntImm(t, stride);
  }
  Expr offset = fused;  // position within the original range, before adding its min
  if (!IsConstInt(loop->min, 0)) fused = fused + loop->min;

  // Step 3: rewrite the body in terms of the new loops, guard the tail, rebuild the nest.
  Stmt body = Substitute(loop->body, VarMap{{loop->loop_var.get(), fused}});
  if (product != extent) {
    body = AddPredicate(body, offset < IntImm(t, extent));
  }
  arith::Analyzer analyzer;
  BindEnclosingLoops(state_, loop, &analyzer);
  for (size_t k = 0; k < values.size(); ++k) {
    analyzer.Bind(vars[k], Range{IntImm(t, 0), IntImm(t, values[k])});
  }
  body = SimplifyBindings(body, &analyzer);
  for (size_t k = values.size(); k-- > 0;) {
    Annotations annotations = k == 0 ? loop->annotations : Annotations{};
    body = MakeFor(vars[k], IntImm(t, 0), IntImm(t, values[k]), ForKind::kSerial, body, "",
                   annotations);
  }
  state_.Replace(loop, body);

  std::vector<LoopRV> out;
  std::vector<RVRef> outputs;
  for (const Var& v : vars) {
    out.push_back(NewLoopRV(v.get()));
    outputs.push_back(out.back().ref());
  }
  std::vector<InstInput> inputs{loop_rv.ref()};
  for (const SplitFactor& f : factors) {
    if (std::holds_alternative<int64_t>(f)) {
      inputs.emplace_back(std::get<int64_t>(f));
    } else if (std::holds_alternative<ExprRV>(f)) {
      inputs.emplace_back(std::get<ExprRV>(f).ref());
    } else {
      inputs.emplace_back(std::monostate{});
    }
  }
  Record("Split", std::move(inputs), nlohmann::json::object(), outputs);
  return out;
}

}  // namespace tirtune
