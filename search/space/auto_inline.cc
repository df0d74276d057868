// AutoInline: inlines an elementwise producer into its consumers (compute_inline), the CPU
// variant of MetaSchedule's rule: into consumers only (never reverse-inlining an epilogue into
// its producer), and, outside purely spatial functions, only producers whose reads map
// injectively and in order onto their write, that compute no exp and no select — so
// `exp(x - max)` of a softmax and a padding stage stay materialized, while a bias add or a
// batch-norm scale folds into the ReLU that consumes it.
//
// Before (cbr's epilogue):                 After AutoInline on bias_add:
//   bias_add[n,h,w,c] = conv[n,h,w,c] + b[c]     T_relu[n,h,w,c] = max(conv[n,h,w,c] + b[c], 0)
//   T_relu[n,h,w,c] = max(bias_add[...], 0)
#include "block_analysis.h"
#include "tirtune/ir/functor.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

// An exp call or a select in the block's body: inlining either would recompute it (or its
// branches) at every use.
bool HasExpOrSelect(const BlockNode* block) {
  bool found = false;
  PreOrderVisit(block->body, [&](const Object* node) {
    if (node->kind() == NodeKind::kSelect) found = true;
    if (node->kind() == NodeKind::kCall &&
        static_cast<const CallNode*>(node)->op == Intrinsic::kExp) {
      found = true;
    }
    return !found;
  });
  return found;
}

class AutoInline : public ScheduleRule {
 public:
  std::string name() const override { return "AutoInline"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block_rv) override {
    if (!ShouldInline(sch.state(), sch.Get(block_rv))) return {sch};
    Schedule inlined = sch.Copy();
    try {
      inlined.ComputeInline(block_rv);
    } catch (const ScheduleError&) {
      return {sch};  // e.g. it writes a parameter, or a consumer is not a leaf block
    }
    return {std::move(inlined)};
  }

 private:
  static bool ShouldInline(const ScheduleState& state, const BlockRealizeNode* realize) {
    const BlockNode* block = realize->block.get();
    // Step 1. A spatial non-root block with one output that someone consumes.
    if (IsRootBlock(state, realize) || !IsSpatialBlock(block) || block->writes.size() != 1 ||
        !HasConsumer(state, realize)) {
      return false;
    }
    // Step 2. A constant tensor (no reads) is always worth inlining.
    if (block->reads.empty()) return true;
    // Step 3. In a purely spatial function everything may go; elsewhere only cheap, injective,
    // ordered producers (recomputing them per use costs little and keeps the loads streaming).
    if (IsSpatialFunc(state)) return true;
    if (HasExpOrSelect(block)) return false;
    for (const BufferRegion& read : block->reads) {
      std::optional<ReadWritePattern> pattern = AnalyzeReadWrite(read, block->writes[0]);
      if (!pattern || !pattern->injective || !pattern->ordered) return false;
    }
    return true;
  }
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeAutoInline() { return std::make_shared<AutoInline>(); }

}  // namespace tirtune
