// RewriteReductionBlock: decomposes every reduction block whose init still sits inside it
// (decompose_reduction), placing the init nest right above the outermost loop that is not
// purely spatial — below the spatial (and parallel) loops, so each thread initializes its own
// tile, and outside every reduction loop, so the init runs once per output element. A block with
// no such loop (its reduction has extent 1) keeps its init, which lowering turns into a guarded
// store. On a GPU, a reduction whose loop is bound to threads keeps its init too (the
// cross-thread lowering turns the whole block into per-thread partial results and shuffles).
//
// Before:                                After:
//   for ij in parallel(64):                for ij in parallel(64):
//     for k, i1:                             for i1_init: for j1_init in vectorized(16):
//       for j1 in vectorized(16):              C_init: C[...] = 0
//         C: init C = 0; C += A * B          for k, i1: for j1 in vectorized(16):
//                                              C: C += A * B
#include "../space/block_analysis.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class RewriteReductionBlock : public Postproc {
 public:
  explicit RewriteReductionBlock(bool gpu) : gpu_(gpu) {}

  std::string name() const override { return "RewriteReductionBlock"; }

  bool Apply(Schedule& sch) override {
    // Step 1. The blocks with an init, by name (decomposing one changes the others' nodes).
    std::vector<std::string> names;
    for (const BlockRealizeNode* realize : sch.state().AllBlocks()) {
      if (realize->block->init.defined()) names.push_back(realize->block->name);
    }
    // Step 2. Decompose each above its outermost non-spatial loop.
    try {
      for (const std::string& name : names) {
        BlockRV block = sch.GetBlock(name);
        std::vector<LoopRV> loops = sch.GetLoops(block);
        if (gpu_ && ReducesAcrossThreads(sch, loops)) continue;
        for (LoopRV loop : loops) {
          if (IterKindOfLoop(sch.Get(loop)) != LoopIterKind::kSpatial) {
            sch.DecomposeReduction(block, loop);
            break;
          }
        }
      }
    } catch (const ScheduleError&) {
      return false;
    }
    return true;
  }

 private:
  // A reduction loop bound to a thread axis: the cross-thread lowering wants the init inside.
  static bool ReducesAcrossThreads(Schedule& sch, const std::vector<LoopRV>& loops) {
    for (LoopRV loop : loops) {
      const ForNode* f = sch.Get(loop);
      if (f->for_kind == ForKind::kThreadBinding &&
          IterKindOfLoop(f) != LoopIterKind::kSpatial) {
        return true;
      }
    }
    return false;
  }

  bool gpu_;
};

}  // namespace

std::shared_ptr<Postproc> MakeRewriteReductionBlock() {
  return std::make_shared<RewriteReductionBlock>(/*gpu=*/false);
}

std::shared_ptr<Postproc> MakeRewriteReductionBlockGpu() {
  return std::make_shared<RewriteReductionBlock>(/*gpu=*/true);
}

}  // namespace tirtune
