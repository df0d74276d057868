// fuse: replaces a chain of directly nested loops by one loop over their combined range.
//
// Preconditions:
//  1. at least one loop; each loop after the first is the only statement in the body of the
//     previous one;
//  2. every loop is serial with a constant extent and min 0.
//
// Before:                          After Fuse([i, j]):
//   for i in range(4):               for i_j_fused in range(32):
//     for j in range(8):               with block("B"):
//       with block("B"):                 vi = axis.spatial(4, i_j_fused // 8)
//         vi = axis.spatial(4, i)        vj = axis.spatial(8, i_j_fused % 8)
//         vj = axis.spatial(8, j)
#include <fmt/format.h>

#include "loop_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {

LoopRV Schedule::Fuse(const std::vector<LoopRV>& loop_rvs) {
  TT_ICHECK(!loop_rvs.empty(), "fuse of no loops");
  // Step 1: check the chain.
  std::vector<const ForNode*> loops;
  for (LoopRV rv : loop_rvs) loops.push_back(Get(rv));
  for (size_t k = 0; k < loops.size(); ++k) {
    CheckSerial(loops[k], "fuse");
    ConstExtentOf(loops[k], "fuse");
    if (!IsConstInt(loops[k]->min, 0)) {
      throw SimpleScheduleError("NonZeroMinError",
                                fmt::format("fuse needs loops starting at 0; loop '{}' does not",
                                            loops[k]->loop_var->name),
                                {loops[k]});
    }
    if (k > 0 && OnlyChildLoop(loops[k - 1]) != loops[k]) {
      throw SimpleScheduleError(
          "NotOnlyChildError",
          fmt::format("fuse needs each loop to be the only child of the previous one; loop '{}' "
                      "is not the only statement in the body of loop '{}'",
                      loops[k]->loop_var->name, loops[k - 1]->loop_var->name),
          {loops[k - 1], loops[k]});
    }
  }
  if (check_only_) return LoopRV{kPlaceholderRVId};
  if (loops.size() == 1) {
    Record("Fuse", {loop_rvs[0].ref()}, nlohmann::json::object(), {loop_rvs[0].ref()});
    return loop_rvs[0];
  }

  // Step 2: one fused variable; each old variable becomes (fused // inner_extent) % extent.
  DataType t = loops[0]->loop_var.dtype();
  std::string name;
  for (const ForNode* l : loops) name += l->loop_var->name + "_";
  Var fused = state_.FreshLoopVar(name + "fused", t);
  VarMap vmap;
  int64_t inner = 1;
  for (size_t k = loops.size(); k-- > 0;) {
    int64_t extent = *AsConstInt(loops[k]->extent);
    Expr value = FloorDiv(fused, IntImm(t, inner));
    if (k > 0) value = FloorMod(value, IntImm(t, extent));
    vmap[loops[k]->loop_var.get()] = value;
    inner *= extent;
  }
  arith::Analyzer analyzer;
  BindEnclosingLoops(state_, loops[0], &analyzer);
  analyzer.Bind(fused, Range{IntImm(t, 0), IntImm(t, inner)});
  Stmt body = SimplifyBindings(Substitute(loops.back()->body, vmap), &analyzer);
  state_.Replace(loops[0], MakeFor(fused, IntImm(t, 0), IntImm(t, inner), ForKind::kSerial, body,
                                   "", loops[0]->annotations));

  LoopRV out = NewLoopRV(fused.get());
  std::vector<InstInput> inputs;
  for (LoopRV rv : loop_rvs) inputs.emplace_back(rv.ref());
  Record("Fuse", std::move(inputs), nlohmann::json::object(), {out.ref()});
  return out;
}

}  // namespace tirtune
