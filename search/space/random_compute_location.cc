// RandomComputeLocation: for a block that was not tiled, sits directly under the root in a loop
// nest of its own and has a consumer (a padding stage, a softmax's exp, a norm's partial sum),
// samples where to compute it — under a loop of its consumers, at the root, or inlined — and
// moves it there (SampleComputeLocation + ComputeAt, which the trace records with the sampled
// location, so a mutated decision moves the block elsewhere on replay). A block AddRFactor
// marked has its rfactor producer placed the same way, after it.
//
// A copy into storage-aligned rows (MultiLevelTiling's, of an operand with rows of no whole
// vector) is left at the root: computed under a tile loop it would be redone per tile.
//
// A zero-padding stage (`pad[...] = select(inside, data[...], 0)`) also gets a second design
// space where it is inlined outright: inlined, lowering skips the taps that land on the padding
// (SkipPaddingTaps), and sampling the location among a dozen loops would seldom try it.
//
// Before:                            After (location: the consumer's loop h):
//   for h, w, c: pad[h, w, c] = ...    for h:
//   for h, w, co, rh, rw, rc:            for ax0, ax1, ax2: pad[h + ax0, ax1, ax2] = ...
//     conv[h, w, co] += pad[...] * W     for w, co, rh, rw, rc: conv[h, w, co] += ...
#include "block_analysis.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class RandomComputeLocation : public ScheduleRule {
 public:
  std::string name() const override { return "RandomComputeLocation"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) override {
    if (!Applies(sch.state(), sch.Get(block))) return {sch};
    std::vector<Schedule> spaces;
    Schedule out = sch.Copy();
    try {
      // Step 1. The producer to place afterwards, found before the block may be inlined.
      std::optional<BlockRV> producer;
      if (out.Get(block)->block->annotations.count(kAnnRandomComputeProducer) > 0) {
        std::vector<BlockRV> producers = out.GetProducers(block);
        out.Unannotate(block, kAnnRandomComputeProducer);
        if (producers.size() == 1) producer = producers[0];
      }
      // Step 2. The block, then its producer.
      ComputeAtSampledLocation(out, block);
      if (producer) ComputeAtSampledLocation(out, *producer);
      spaces.push_back(std::move(out));
    } catch (const ScheduleError&) {
      spaces.push_back(sch);
    }
    // Step 3. A padding stage inlined.
    const BlockNode* original = sch.Get(block)->block.get();
    if (original->annotations.count(kAnnRandomComputeProducer) == 0 && IsZeroPadding(original)) {
      Schedule inlined = sch.Copy();
      try {
        inlined.ComputeInline(block);
        spaces.push_back(std::move(inlined));
      } catch (const ScheduleError&) {
        // Not inlinable here: the sampled location is the only space.
      }
    }
    return spaces;
  }

 private:
  static void ComputeAtSampledLocation(Schedule& sch, BlockRV block) {
    LoopRV location = sch.SampleComputeLocation(block);
    sch.ComputeAt(block, location, /*preserve_unit_loops=*/true);
  }

  static bool Applies(const ScheduleState& state, const BlockRealizeNode* realize) {
    // Step 1. A block directly under the root, not tiled, with a consumer, and not a copy into
    // storage-aligned rows (MultiLevelTiling makes those to be done once, at the root).
    const BlockRealizeNode* scope = state.ScopeBlock(realize);
    if (scope == nullptr || !IsRootBlock(state, scope) || IsTiled(realize->block.get()) ||
        !HasConsumer(state, realize) || realize->block->annotations.count(kAnnBufferDimAlign) > 0) {
      return false;
    }
    // Step 2. In a loop nest of its own: its outermost loop holds no other block.
    std::vector<const ForNode*> loops = state.LoopsAbove(realize);
    return !loops.empty() && state.ChildBlocks(loops[0]).size() == 1;
  }
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeRandomComputeLocation() {
  return std::make_shared<RandomComputeLocation>();
}

}  // namespace tirtune
