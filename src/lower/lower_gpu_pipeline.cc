// The GPU lowering recipe: the CPU recipe's passes up to the loop form (minus the CPU's storage
// planning and parallel loops), then the GPU passes of lower_gpu.h, from a scheduled function in
// block form to the lowered GPU form.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tirtune/ir/functor.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/lower/passes.h"
#include "tirtune/support/error.h"

namespace tirtune {

PrimFunc LowerGpuToLoops(const PrimFunc& func, const LowerOptions& options) {
  CheckScheduleLimits(func, options);
  // Reductions across threads first, while the blocks still say what they reduce.
  PrimFunc f = LowerCrossThreadReduction(func);
  // Block form to loop form, as for the CPU: inits, blocks to loops, compaction, flattening.
  StorageAlignRequests align = CollectStorageAlign(f);
  f = LowerInitBlocks(f);
  f = ConvertBlocksToLoops(f);
  f = CompactBufferAllocations(f, align, AllocationPlacement::kGpu);
  f = FlattenBuffers(f);
  f = SimplifyStatements(f);
  // Unrolled loops are expanded and vectorized loops become vector statements; thread-bound
  // loops are left alone by both.
  f = UnrollLoops(f, options);
  f = SimplifyStatements(f);
  return VectorizeLoops(f);
}

bool HasThreadBindings(const PrimFunc& func) {
  bool found = false;
  PreOrderVisit(func->body, [&](const Object* node) {
    if (const auto* loop = node->as<ForNode>()) {
      found = found || loop->for_kind == ForKind::kThreadBinding;
    }
    return !found;
  });
  return found;
}

GpuModule LowerGpu(const PrimFunc& func, const GpuLimits& limits, const LowerOptions& options) {
  PrimFunc f = LowerGpuToLoops(func, options);
  // Kernels: checked against the target, split off the host, shared memory declared per block,
  // barriers where threads hand data to each other through it.
  std::vector<std::string> problems = VerifyThreadBinding(f, limits);
  if (!problems.empty()) {
    TT_USER_ERROR("{} cannot run on the GPU:\n  {}", func->name, fmt::join(problems, "\n  "));
  }
  GpuModule module = SplitHostDevice(f);
  for (GpuKernel& kernel : module.kernels) {
    kernel = PlanGpuAllocations(kernel, limits);
    kernel = InsertBarriers(kernel);
  }
  return module;
}

}  // namespace tirtune
