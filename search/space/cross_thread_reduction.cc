// CrossThreadReduction: a reduction that MultiLevelTiling did not take (a row sum, a softmax's
// max and sum, a pooling) is shared out among the threads of a block: its innermost reduction
// loop is split into a threadIdx.x loop of t threads, placed outside the other reduction loops,
// and a serial loop inside (thread x reads elements x, x + t, ..., so neighbouring threads read
// neighbouring elements), which the GPU lowering turns into per-thread partial results combined
// by warp shuffles. (Fusing the reduction loops first would make the bindings non-linear, which
// the lowering refuses.) t is sampled among config.reduction_threads that divide that loop (a
// partial tile would put a predicate on the reduction), or is the thread count of the kernel the
// block joins. Where the block goes:
//  - its consumers already sit under one blockIdx.x loop (a softmax's max, once the sum is
//    placed): computed at that loop;
//  - its single consumer is spatial with more loops than the block has spatial iterators (the
//    normalisation of a softmax): the consumer's leading loops (as many as the block's spatial
//    iterators) are fused onto blockIdx.x, the rest onto t threads, and the block is computed at
//    the block loop, its result in a register of every thread (local scope) when it is not a
//    parameter;
//  - otherwise its spatial loops are fused onto blockIdx.x in a kernel of its own.
// The input schedule (the reduction serial in each thread, bound by AutoBind) stays a choice.
//
// After (softmax's sum, t = 256):
//   for i in blockIdx.x:
//     for k_1 in threadIdx.x(256): for k_0 in range(4):  expsum[i] += exp(A[i, k] - max[i])
//     for k_0 in range(4): for k_1 in threadIdx.x(256):  norm[i, k] = exp(...) / expsum[i]
#include "block_analysis.h"
#include "tirtune/ir/functor.h"
#include "gpu_binding.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

// The smallest number of iterations worth spreading over threads.
constexpr int64_t kMinReduction = 4;

class CrossThreadReduction : public ScheduleRule {
 public:
  explicit CrossThreadReduction(const GpuSpaceConfig& config)
      : threads_(config.reduction_threads), max_threads_(config.limits.max_threads_per_block) {}

  std::string name() const override { return "CrossThreadReduction"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) override {
    const BlockRealizeNode* realize = sch.Get(block);
    const BlockNode* b = realize->block.get();
    if (!IsReductionBlock(b) || IsTiled(b) || !HasTrivialBinding(sch.state(), realize)) {
      return {sch};
    }
    // Step 1. Spatial iterators first, then a long enough constant reduction.
    size_t num_spatial = 0;
    while (num_spatial < b->iter_vars.size() &&
           b->iter_vars[num_spatial].kind == IterKind::kSpatial) {
      ++num_spatial;
    }
    int64_t reduction = 1, innermost = 1;
    for (size_t i = num_spatial; i < b->iter_vars.size(); ++i) {
      const int64_t* extent = AsConstInt(b->iter_vars[i].dom.extent);
      if (b->iter_vars[i].kind != IterKind::kReduce || extent == nullptr) return {sch};
      reduction *= *extent;
      innermost = *extent;
    }
    std::vector<int64_t> counts;
    for (int64_t t : threads_) {
      if (t <= max_threads_ && innermost % t == 0) counts.push_back(t);
    }
    if (reduction < kMinReduction || counts.empty()) return {sch};
    Schedule s = sch.Copy();
    try {
      if (IsBoundToThreads(s, block)) return {sch};
      // Step 2. Where the block goes, and how many threads share it: those of the kernel it
      // joins, or a sampled count.
      SplitFactor threads;
      if (std::optional<ExprRV> kernel_threads = PlaceUnderConsumers(s, block)) {
        if (innermost % s.Get(*kernel_threads) != 0) return {sch};
        threads = *kernel_threads;
      } else {
        std::vector<double> probs(counts.size(), 1.0 / counts.size());
        ExprRV sampled = s.SampleCategorical(counts, std::move(probs));
        threads = sampled;
        if (!PlaceUnderConsumer(s, block, num_spatial, sampled)) {
          std::optional<LoopRV> outer = FuseLeadingSpatialLoops(s, block);
          if (!outer) return {sch};
          s.Bind(*outer, "blockIdx.x");
        }
      }
      // Step 3. The reduction loops (the innermost ones) onto the threads.
      std::vector<LoopRV> loops = s.GetLoops(block);
      std::vector<LoopRV> reduce;
      for (LoopRV loop : loops) {
        if (IterKindOfLoop(s.Get(loop)) == LoopIterKind::kReduce) reduce.push_back(loop);
      }
      if (reduce.empty()) return {sch};
      std::vector<LoopRV> parts = s.Split(reduce.back(), {std::monostate{}, threads});
      std::vector<LoopRV> order = {parts[1]};
      order.insert(order.end(), reduce.begin(), reduce.end() - 1);
      order.push_back(parts[0]);
      s.Reorder(order);
      s.Bind(parts[1], "threadIdx.x");
    } catch (const ScheduleError&) {
      return {sch};
    }
    return {sch, std::move(s)};
  }

 private:
  // Computes the block at the blockIdx.x loop its consumers already share, and returns the
  // thread count of that kernel (one launch has one threadIdx.x extent): the sampled variable
  // the kernel's thread loop was split by, so that a replay with another decision changes both.
  // Nullopt (nothing changed) when the consumers share no bound loop, or its thread count is no
  // sampled variable.
  static std::optional<ExprRV> PlaceUnderConsumers(Schedule& s, BlockRV block) {
    std::vector<BlockRV> consumers = s.GetConsumers(block);
    if (consumers.empty()) return std::nullopt;
    std::vector<LoopRV> loops = s.GetLoops(consumers[0]);
    if (loops.empty() || s.Get(loops[0])->thread_tag != "blockIdx.x") return std::nullopt;
    const ForNode* thread_loop = nullptr;
    PreOrderVisit(s.Get(loops[0])->body, [&](const Object* node) {
      const auto* loop = node->as<ForNode>();
      if (loop != nullptr && loop->thread_tag == "threadIdx.x") thread_loop = loop;
      return thread_loop == nullptr;
    });
    if (thread_loop == nullptr) return std::nullopt;
    std::optional<ExprRV> threads = SplitFactorOf(s, thread_loop);
    if (!threads) return std::nullopt;
    if (!s.CanApply([&](Schedule& c) { c.ComputeAt(block, loops[0], true); })) {
      return std::nullopt;
    }
    LocalResult(s, block);
    s.ComputeAt(block, loops[0], /*preserve_unit_loops=*/true);
    return threads;
  }

  // The sampled variable a Split of the trace gave `loop` as its extent, if any.
  static std::optional<ExprRV> SplitFactorOf(Schedule& s, const ForNode* loop) {
    for (const Instruction& inst : s.trace().insts()) {
      if (inst.kind->name != "Split") continue;
      for (size_t o = 0; o < inst.outputs.size() && o + 1 < inst.inputs.size(); ++o) {
        try {
          if (s.Get(LoopRV{inst.outputs[o].id}) != loop) continue;
        } catch (const ScheduleError&) {
          continue;  // a loop that no longer exists
        }
        const RVRef* factor = std::get_if<RVRef>(&inst.inputs[o + 1]);
        if (factor == nullptr || factor->kind != RVKind::kExpr) return std::nullopt;
        return ExprRV{factor->id};
      }
    }
    return std::nullopt;
  }

  // Binds the single consumer's leading loops to blocks and the rest to `threads` threads, then
  // computes the block at the block loop. False (nothing changed) when it does not apply.
  static bool PlaceUnderConsumer(Schedule& s, BlockRV block, size_t num_spatial, ExprRV threads) {
    if (num_spatial == 0) return false;
    std::vector<BlockRV> consumers = s.GetConsumers(block);
    if (consumers.size() != 1) return false;
    const BlockRealizeNode* consumer = s.Get(consumers[0]);
    if (!IsSpatialBlock(consumer->block.get()) || !HasTrivialBinding(s.state(), consumer) ||
        IsBoundToThreads(s, consumers[0])) {
      return false;
    }
    std::vector<LoopRV> loops = s.GetLoops(consumers[0]);
    if (loops.size() <= num_spatial) return false;
    auto fuse = [&](size_t begin, size_t end) {
      if (end - begin == 1) return loops[begin];
      return s.Fuse(std::vector<LoopRV>(loops.begin() + begin, loops.begin() + end));
    };
    LoopRV outer = fuse(0, num_spatial);
    LoopRV inner = fuse(num_spatial, loops.size());
    std::vector<LoopRV> parts = s.Split(inner, {std::monostate{}, SplitFactor(threads)});
    s.Bind(outer, "blockIdx.x");
    s.Bind(parts[1], "threadIdx.x");
    LocalResult(s, block);
    s.ComputeAt(block, outer, /*preserve_unit_loops=*/true);
    return true;
  }

  // The block's result in a register of each thread, unless it is a parameter.
  static void LocalResult(Schedule& s, BlockRV block) {
    const Buffer& out = s.Get(block)->block->writes[0].buffer;
    for (const Buffer& param : s.func()->params) {
      if (param.get() == out.get()) return;
    }
    s.SetScope(block, 0, StorageScope::kLocal);
  }

  std::vector<int64_t> threads_;
  int64_t max_threads_;
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeCrossThreadReduction(const GpuSpaceConfig& config) {
  return std::make_shared<CrossThreadReduction>(config);
}

}  // namespace tirtune
