// AutoInline: inlines an elementwise producer into its consumers (compute_inline). The GPU
// variant (MakeAutoInlineGpu) also inlines exp and select producers (a GPU recomputes them
// rather than writing a tensor to global memory and reading it back) and folds an elementwise
// block that cannot go into a consumer into its producer instead (reverse_compute_inline: the
// epilogue of a tiled GEMM into its write-back stage). The CPU variant of MetaSchedule's rule:
// into consumers only (never reverse-inlining an epilogue into its producer), and, outside
// purely spatial functions, only producers whose reads map
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

// A stage MultiLevelTiling made on purpose: a copy into shared or local memory (a read cache,
// an accumulator), which inlining would undo.
bool IsCacheStage(const BlockNode* block) {
  if (block->annotations.count(kAnnCooperativeFetch) > 0) return true;
  for (const BufferRegion& write : block->writes) {
    if (write.buffer->scope != StorageScope::kGlobal) return true;
  }
  return false;
}

class AutoInline : public ScheduleRule {
 public:
  explicit AutoInline(bool gpu) : gpu_(gpu) {}

  std::string name() const override { return gpu_ ? "AutoInlineGpu" : "AutoInline"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block_rv) override {
    if (ShouldInline(sch.state(), sch.Get(block_rv))) {
      Schedule inlined = sch.Copy();
      try {
        inlined.ComputeInline(block_rv);
        return {std::move(inlined)};
      } catch (const ScheduleError&) {
        // e.g. it writes a parameter, or a consumer is not a leaf block
      }
    }
    if (gpu_ && ShouldReverseInline(sch.state(), sch.Get(block_rv))) {
      Schedule inlined = sch.Copy();
      try {
        inlined.ReverseComputeInline(block_rv);
        return {std::move(inlined)};
      } catch (const ScheduleError&) {
        // e.g. the producer is a reduction, or the block reads it at other indices
      }
    }
    return {sch};
  }

 private:
  // GPU only: an elementwise epilogue folded into the single spatial block that produces its
  // input (the write-back stage of a tiled reduction), so that it costs no kernel and no
  // round trip through global memory.
  static bool ShouldReverseInline(const ScheduleState& state, const BlockRealizeNode* realize) {
    const BlockNode* block = realize->block.get();
    if (IsCacheStage(block)) return false;
    if (IsRootBlock(state, realize) || !IsSpatialBlock(block) || block->writes.size() != 1) {
      return false;
    }
    for (const BufferRegion& read : block->reads) {
      std::optional<ReadWritePattern> pattern = AnalyzeReadWrite(read, block->writes[0]);
      if (!pattern || !pattern->injective) return false;
    }
    return true;
  }

  bool ShouldInline(const ScheduleState& state, const BlockRealizeNode* realize) const {
    const BlockNode* block = realize->block.get();
    if (gpu_ && IsCacheStage(block)) return false;
    // Step 1. A spatial non-root block with one output that someone consumes.
    if (IsRootBlock(state, realize) || !IsSpatialBlock(block) || block->writes.size() != 1 ||
        !HasConsumer(state, realize)) {
      return false;
    }
    // Step 2. A constant tensor (no reads) is always worth inlining.
    if (block->reads.empty()) return true;
    // Step 3. In a purely spatial function everything may go; elsewhere only cheap, injective,
    // ordered producers (recomputing them per use costs little and keeps the loads streaming).
    // On a GPU (MetaSchedule's CUDA rule: neither injective nor ordered required) every spatial
    // producer may go: a padding into the shared cache that reads it, a transposition.
    if (gpu_ || IsSpatialFunc(state)) return true;
    if (HasExpOrSelect(block)) return false;
    for (const BufferRegion& read : block->reads) {
      std::optional<ReadWritePattern> pattern = AnalyzeReadWrite(read, block->writes[0]);
      if (!pattern || !pattern->injective || !pattern->ordered) return false;
    }
    return true;
  }

  bool gpu_;
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeAutoInline() { return std::make_shared<AutoInline>(false); }
std::shared_ptr<ScheduleRule> MakeAutoInlineGpu() { return std::make_shared<AutoInline>(true); }

}  // namespace tirtune
