// The lowering recipe: the passes of include/tirtune/lower/passes.h in the order they run, from a
// scheduled function in block form to the lowered form of lower.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tirtune/lower/lower.h"
#include "tirtune/lower/passes.h"
#include "tirtune/support/error.h"

namespace tirtune {

std::vector<std::pair<std::string, PrimFunc>> LowerWithSteps(const PrimFunc& func,
                                                             const LowerOptions& options) {
  CheckScheduleLimits(func, options);
  std::vector<std::pair<std::string, PrimFunc>> steps;
  PrimFunc f = func;
  auto run = [&](const char* name, PrimFunc next) {
    f = std::move(next);
    steps.emplace_back(name, f);
  };

  // Block form: what blocks say about storage is read, and reduction inits become statements.
  StorageAlignRequests align = CollectStorageAlign(f);
  ZeroPaddedBuffers padded = CollectZeroPadding(f);
  run("LowerInitBlocks", LowerInitBlocks(f));
  // Loop form: blocks become loops, ifs and allocations. The taps of a padded reduction that land
  // on the padding are skipped while buffers still have their own indices.
  run("ConvertBlocksToLoops", ConvertBlocksToLoops(f));
  if (options.skip_padding_taps) run("SkipPaddingTaps", SkipPaddingTaps(f, padded));
  // Memory: intermediates shrink to what their users touch (laid out as storage_align asked),
  // every buffer becomes 1-D, and only small scratch stays on the stack.
  run("CompactBufferAllocations", CompactBufferAllocations(f, align));
  run("FlattenBuffers", FlattenBuffers(f));
  run("PlanStorageScopes", PlanStorageScopes(f, options));
  run("SimplifyStatements", SimplifyStatements(f));
  if (options.unswitch_tile_guards) run("UnswitchTileGuards", UnswitchTileGuards(f));
  // Loop kinds: unrolled loops are expanded (and the copies simplified), vectorized loops become
  // vector statements, and only outermost parallel loops stay parallel.
  run("UnrollLoops", UnrollLoops(f, options));
  run("SimplifyStatements", SimplifyStatements(f));
  run("VectorizeLoops", VectorizeLoops(f));
  run("SerializeNestedParallel", SerializeNestedParallel(f));

  std::vector<std::string> problems = VerifyLoweredForm(f, options);
  TT_ICHECK(problems.empty(), "lowering {} broke the lowered-form contract:\n  {}", func->name,
            fmt::join(problems, "\n  "));
  return steps;
}

PrimFunc Lower(const PrimFunc& func, const LowerOptions& options) {
  return LowerWithSteps(func, options).back().second;
}

}  // namespace tirtune
